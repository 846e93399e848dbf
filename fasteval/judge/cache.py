"""On-disk cache of accepted model replies, keyed by (model, generation settings, messages)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from fasteval.io import _json
from fasteval.redact import clean_url

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""OpenAI's API: the clients' default server, the one whose cache entries name no endpoint."""

CACHE_VERSION = 1


def default_cache_dir() -> Path:
    """``$FASTEVAL_CACHE_DIR/judge``, else ``$XDG_CACHE_HOME/fasteval/judge``, else ``~/.cache/fasteval/judge``.

    Examples
    --------
    >>> default_cache_dir().name
    'judge'
    """
    root = os.environ.get("FASTEVAL_CACHE_DIR")
    if root:
        return Path(root) / "judge"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "fasteval" / "judge"


class ReplyCache:
    """One JSON file per accepted reply, written atomically (temporary file + rename).

    Only replies that parsed and validated are stored, so a rerun repeats exactly the rows
    that failed and costs nothing for the rest. An unreadable or mismatching entry (a crash
    of another tool, a hand edit, a hash collision) reads as a miss and is overwritten.

    Parameters
    ----------
    directory : str or PathLike
        Created on first write.

    Examples
    --------
    >>> import tempfile
    >>> cache = ReplyCache(tempfile.mkdtemp())
    >>> key = cache.key({"model": "m"}, [{"role": "user", "content": "hi"}])
    >>> cache.get(key) is None
    True
    >>> cache.put(key, {"text": '{"score": 1}'})
    >>> cache.get(key)["text"]
    '{"score": 1}'
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    @staticmethod
    def key(namespace: dict[str, Any], messages: list[dict[str, str]]) -> str:
        """Hex SHA-256 of the canonical JSON of namespace and messages (UTF-8; a lone
        surrogate, as a JSON ``\\ud800`` escape decodes to, is hashed as its own code unit).

        Examples
        --------
        >>> k = ReplyCache.key({}, [{"role": "user", "content": "caf\u00e9 \\ud83d"}])
        >>> len(k), k == ReplyCache.key({}, [{"role": "user", "content": "caf\u00e9 \\ud83e"}])
        (64, False)
        """
        blob = json.dumps(
            {"v": CACHE_VERSION, "ns": namespace, "messages": messages},
            sort_keys=True, ensure_ascii=False, separators=(",", ":"),
        )
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()

    def path(self, key: str) -> Path:
        """File that holds ``key``."""
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record, or ``None`` when missing or corrupt."""
        try:
            with open(self.path(key), encoding="utf-8") as fh:
                record = _json.loads(fh.read())
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        if not isinstance(record, dict) or record.get("key") != key or not isinstance(record.get("text"), str):
            return None
        return record

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` (must hold ``text``) under ``key`` atomically."""
        from fasteval.io.atomic import atomic_path

        data = dict(record, key=key, v=CACHE_VERSION)
        target = self.path(key)
        with atomic_path(target) as tmp:  # ASCII: a reply holding a lone surrogate is stored too
            tmp.write_text(json.dumps(data), encoding="ascii")

    def check_writable(self) -> None:
        """Make sure entries can be written here, before the first request: the folder is
        made if missing and a temporary file written in it, then both removed again
        (:func:`fasteval.io.atomic.check_writable`).

        Raises
        ------
        OutputError
            The folder cannot be made or written (no permission, a read-only file system).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> ReplyCache(root / "judge").check_writable(); list(root.iterdir())
        []
        """
        from fasteval.io.atomic import check_writable

        check_writable(self.directory / "write-check")

    def discard(self, key: str) -> None:
        """Remove the entry of ``key`` if present and provably this cache's: a regular file
        (not a link) inside the cache folder (no linked subfolder), holding the record of
        ``key``. Anything else at that path is left as it is.

        Examples
        --------
        >>> import tempfile
        >>> cache = ReplyCache(tempfile.mkdtemp())
        >>> key = cache.key({}, [])
        >>> cache.put(key, {"text": "{}"})
        >>> cache.discard(key); cache.path(key).exists()
        False
        >>> _ = cache.path(key).write_text("a file of the user's")
        >>> cache.discard(key); cache.path(key).exists()
        True
        """
        target = self.path(key)
        try:
            if target.is_symlink() or target.parent.is_symlink():
                return
        except OSError:
            return
        if self.get(key) is None:  # not a record of this cache under this key
            return
        with contextlib.suppress(FileNotFoundError):
            target.unlink()

    def __len__(self) -> int:
        if not self.directory.is_dir():
            return 0
        return sum(1 for _ in self.directory.glob("??/*.json"))


def endpoint_key(url: Any) -> dict[str, str]:
    """The server part of a cache namespace: ``{"endpoint": url}`` for a server other than
    OpenAI's, so that two servers serving one model name never share replies; nothing for
    OpenAI's (or none named), whose entries keep the keys they had without it. The URL's
    credentials (``user:password@``, ``api_key=``...) are left out: a changed password or
    key keeps the replies, and no hash of a secret is made. Only the key's hash is stored,
    never the URL.

    Examples
    --------
    >>> endpoint_key("http://127.0.0.1:8000/v1/")
    {'endpoint': 'http://127.0.0.1:8000/v1'}
    >>> endpoint_key("http://me:pw@127.0.0.1:8000/v1/?api-version=1&api_key=k3y")
    {'endpoint': 'http://127.0.0.1:8000/v1/?api-version=1'}
    >>> endpoint_key("https://api.openai.com/v1"), endpoint_key(None)
    ({}, {})
    """
    if url is None:
        return {}
    text = clean_url(str(url).strip()).rstrip("/")
    if not text or text == DEFAULT_BASE_URL:
        return {}
    return {"endpoint": text}
