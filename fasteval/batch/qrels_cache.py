"""A disk cache of prepared qrels, so that scoring many runs against one large qrels file
reads and indexes it once.

``fasteval eval`` keeps the kernels' index of a qrels file (interned query ids, judged grades,
doc keys by query: a :class:`fasteval.prepare.PreparedQrels`) in
``$FASTEVAL_CACHE_DIR/qrels`` (default ``$XDG_CACHE_HOME/fasteval/qrels``, else
``~/.cache/fasteval/qrels``); ``--no-qrels-cache`` neither reads nor writes it. Only qrels
prepared by the kernels (more than :data:`fasteval.prepare.small.SMALL_ROWS` judgments, which
polars prepares in milliseconds otherwise) and of at most :data:`MAX_ENTRY_BYTES` are kept.

An entry is found by the file's identity: its resolved path, device, inode, size, and
modification and status-change times in nanoseconds, with the format it was read as and a
digest of the code that reads and prepares qrels (another version of fasteval never reads an
entry of this one). A file changed in any way gets a new status-change time, so its old
entry is never found again. An entry is written only when the file did not change while it
was read, and only when its last change was at least :data:`SETTLE_SECONDS` old when its
identity was taken, before the reading (a file
rewritten within one tick of the file system's clock could otherwise keep its times), and
only when reading it raised no warning (a hit skips the reader, so it would skip the
warning). The full identity is stored in the entry and compared on reading, and so is a
CRC-32 of its arrays and of the header's description of them (types, shapes, the numbers
kept beside them): an entry that cannot be read whole (truncated, another format) or
whose bytes changed since it was written is ignored and replaced. Entries
are written atomically (:func:`fasteval.io.atomic.atomic_path`); the oldest are removed
once they take more than :data:`MAX_TOTAL_BYTES`. Only files this cache wrote are ever
removed (its own names, a regular file starting with its header, never a link): the folder
may be one a user keeps other files in. An entry holds the qrels' ids and
grades only: nothing else of the environment.

Examples
--------
>>> cache_dir().name
'qrels'
>>> load("no/such/qrels.txt") is None  # no file, no entry
True
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import mmap
import os
import re
import struct
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

MAGIC = b"FEQRELS1"
MAX_ENTRY_BYTES = 512 * 2**20
"""Largest entry written, counted as the prepared arrays take in memory (about 9 M judgments)."""
MAX_TOTAL_BYTES = 2 * 2**30
"""The folder is trimmed to this size, oldest entries first, after each write."""
SETTLE_SECONDS = 2.0
"""A file changed more recently than this is read but not cached."""
_ALIGN = 64
_ENTRY_NAME = re.compile(r"[0-9a-f]{32}\.qrels")
"""The name :func:`_entry_path` gives an entry; the only files :func:`_trim` considers."""
_FINGERPRINT: str | None = None
_PENDING: list[threading.Thread] = []


def cache_dir() -> Path:
    """The folder of the entries: ``$FASTEVAL_CACHE_DIR/qrels``, else
    ``$XDG_CACHE_HOME/fasteval/qrels``, else ``~/.cache/fasteval/qrels``."""
    base = os.environ.get("FASTEVAL_CACHE_DIR")
    if base:
        return Path(base) / "qrels"
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return root / "fasteval" / "qrels"


def _fingerprint() -> str:
    """Digest of the code that reads and prepares qrels, with the versions of fasteval,
    polars and numpy: an entry written by other code is never found."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        import polars as pl

        import fasteval

        pkg = Path(fasteval.__file__).resolve().parent
        h = hashlib.sha256()
        h.update(f"{fasteval.__version__}|{pl.__version__}|{np.__version__}|{MAGIC!r}".encode())
        kernels = [pkg / "kernels" / f"{m}.py" for m in ("ids", "groups", "qrels_index", "rank")]
        files = sorted([*pkg.glob("io/*.py"), *pkg.glob("prepare/*.py"), *kernels,
                        Path(__file__).resolve()])
        for f in files:
            h.update(f.name.encode())
            h.update(f.read_bytes())
        _FINGERPRINT = h.hexdigest()
    return _FINGERPRINT


def identity(path: Any, fmt: str | None = None) -> dict | None:
    """The identity of a regular file as an entry is keyed on (see the module notes); None
    for anything else (standard input, a FIFO, a device, a missing file)."""
    try:
        real = os.path.realpath(os.fspath(path))
        st = os.stat(real)
    except (OSError, TypeError, ValueError):
        return None
    import stat

    if not stat.S_ISREG(st.st_mode):
        return None
    return {"path": real, "dev": st.st_dev, "ino": st.st_ino, "size": st.st_size,
            "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "format": fmt,
            "code": _fingerprint()}


def _entry_path(ident: dict) -> Path:
    name = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:32]
    return cache_dir() / f"{name}.qrels"


def load(path: Any, fmt: str | None = None, *, ident: dict | None = None) -> dict | None:
    """The stored parts of the prepared qrels of file ``path`` (for :func:`restore`), or
    None: no entry, an entry of another identity, or one that cannot be read whole.
    ``ident``: the file's :func:`identity`, when the caller has it. Imports neither numba
    nor the kernels, so it may run while they load."""
    if ident is None:
        ident = identity(path, fmt)
    if ident is None:
        return None
    entry = _entry_path(ident)
    try:
        with open(entry, "rb") as fh:
            # a private mapping: the pages are the page cache's until written (never, but
            # the arrays keep the writability they were prepared with), and a later
            # replacement of the entry (a rename) leaves this one as it was. Not populated
            # up front: that would copy every page of a writable private mapping
            mapped = mmap.mmap(fh.fileno(), 0, flags=mmap.MAP_PRIVATE,
                               prot=mmap.PROT_READ | mmap.PROT_WRITE)
        buf = np.frombuffer(mapped, dtype=np.uint8)
        parts = _decode(buf, ident)
        if parts is not None:
            _touch(entry)
        return parts
    except Exception:  # noqa: BLE001 - a missing or damaged entry is a miss
        return None


def _touch(entry: Path) -> None:
    """Mark ``entry`` as used now, for trimming; a cache folder the job may not write (one
    shared read-only) is still read."""
    try:
        os.utime(entry, follow_symlinks=False)
    except (OSError, NotImplementedError):
        pass


def _decode(buf: np.ndarray, ident: dict) -> dict | None:
    head = bytes(buf[: len(MAGIC) + 8])
    if head[: len(MAGIC)] != MAGIC:
        return None
    (hlen,) = struct.unpack("<Q", head[len(MAGIC):])
    start = len(MAGIC) + 8
    header = json.loads(bytes(buf[start:start + hlen]).decode())
    if header.get("identity") != ident:
        return None
    data = start + hlen + (-(start + hlen) % _ALIGN)
    blobs = header["blobs"]
    if any(off < 0 or n < 0 or data + off + n > buf.shape[0] for off, n in blobs):
        return None
    parts = [buf[data + off:data + off + n] for off, n in blobs]
    if _checksum([_layout(header["tree"], blobs), *parts]) != header.get("crc32"):
        return None  # bytes changed since it was written: a miss, never a wrong index
    return {"tree": header["tree"], "blobs": parts}


def _layout(tree: dict, blobs: list) -> bytes:
    """The header's description of the arrays (types, shapes, numbers, places) as the
    checksum covers it: a changed number in the header is a miss like a changed array."""
    return json.dumps([tree, blobs], sort_keys=True).encode()


def _checksum(blobs: list) -> int:
    """CRC-32 of the blobs in order (zlib's, 2 GB/s here, without the GIL)."""
    import zlib

    crc = 0
    for b in blobs:
        crc = zlib.crc32(memoryview(b).cast("B"), crc)
    return crc


def restore(parts: dict) -> Any:
    """The :class:`fasteval.prepare.PreparedQrels` of :func:`load`'s parts."""
    import polars as pl

    from fasteval.prepare.qrels import PreparedQrels, QrelsIndex

    blobs = parts["blobs"]

    def value(node: Any) -> Any:
        kind = node["t"]
        if kind == "array":
            a = blobs[node["i"]].view(np.dtype(node["dtype"])).reshape(node["shape"])
            if node["ro"]:
                a = a.view()
                a.flags.writeable = False
            return a
        if kind == "view32":  # an id column's views as 32-bit words (a view of its bytes)
            return value(node["of"]).view(np.uint32)
        if kind == "series":
            return pl.read_ipc(blobs[node["i"]].tobytes()).to_series()
        if kind == "tuple":
            return tuple(value(v) for v in node["v"])
        return node["v"]

    tree = parts["tree"]
    index = tree["index"]
    fields = {k: value(v) for k, v in tree.items() if k != "index"}
    return PreparedQrels(**fields, index=QrelsIndex(**{k: value(v) for k, v in index.items()}))


def store(pq: Any, ident: dict, *, taken_ns: int | None = None) -> bool:
    """Write the entry of prepared qrels ``pq`` read from the file of identity ``ident``
    (taken before it was read, at ``time.time_ns()`` ``taken_ns``; None: now), if the file
    is unchanged since and was settled when the identity was taken, and the entry not too
    large (see the module notes). Returns whether it was written; a failure to write (a
    full disk, no permission) is no error.

    Settled when taken, not when stored: a file changed just before its identity was taken
    may change again, within the same tick of the file system's clock, while it is read;
    its times would then not tell, however long the reading took."""
    if pq.index is None or pq.frame is not None:
        return False
    now = identity(ident["path"], ident["format"])
    if now != ident:
        return False
    taken = time.time_ns() if taken_ns is None else taken_ns
    if taken - max(ident["mtime_ns"], ident["ctime_ns"]) < SETTLE_SECONDS * 1e9:
        return False
    if _array_bytes(pq) > MAX_ENTRY_BYTES:
        return False
    try:
        blobs: list[Any] = []
        tree = _encode_qrels(pq, blobs)
        if tree is None:
            return False
        total = sum(len(memoryview(b).cast("B")) for b in blobs)
        if total > MAX_ENTRY_BYTES:
            return False
        _write(_entry_path(ident), ident, tree, blobs)
        _trim()
        return True
    except Exception:  # noqa: BLE001 - the cache is an optimisation: the job goes on
        return False


def _array_bytes(pq: Any) -> int:
    """Bytes of the arrays of ``pq`` (about the size of its entry)."""
    total = 0
    for obj in (pq, pq.index):
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            for a in v if isinstance(v, tuple) else (v,):
                total += a.nbytes if isinstance(a, np.ndarray) else 0
    return total + pq.query_ids.estimated_size() + pq.doc_ids.estimated_size()


def store_in_background(pq: Any, ident: dict, *, taken_ns: int | None = None) -> threading.Thread:
    """:func:`store` on a thread (the job goes on meanwhile); :func:`wait` for it before
    the process ends."""
    thread = threading.Thread(target=store, args=(pq, ident), kwargs={"taken_ns": taken_ns},
                              name="fasteval-qrels-cache")
    thread.start()
    _PENDING.append(thread)
    return thread


def wait() -> None:
    """Wait for the entries being written (:func:`store_in_background`)."""
    while _PENDING:
        _PENDING.pop().join()


def _encode_qrels(pq: Any, blobs: list) -> dict | None:
    """The JSON tree of ``pq``'s fields (arrays and series as blob numbers), None if a
    field is of a kind the decoder would not give back exactly."""
    import polars as pl

    def node(v: Any) -> dict | None:
        if isinstance(v, np.ndarray):
            if not v.flags.c_contiguous or not v.dtype.isnative or v.dtype.hasobject:
                return None
            blobs.append(np.ascontiguousarray(v).view(np.uint8).reshape(-1))
            return {"t": "array", "i": len(blobs) - 1, "dtype": v.dtype.str, "shape": list(v.shape),
                    "ro": not v.flags.writeable}
        if isinstance(v, pl.Series):
            import io

            out = io.BytesIO()
            pl.DataFrame([v]).write_ipc(out, compression="uncompressed")
            blobs.append(np.frombuffer(out.getvalue(), dtype=np.uint8))
            return {"t": "series", "i": len(blobs) - 1}
        if isinstance(v, bool | int | float | str) or v is None:
            return {"t": "scalar", "v": v}
        return None

    def id_col(col: tuple) -> dict | None:
        is_int, ints, v8, v32, data, base = col
        if v32.shape != (v8.shape[0], 4) or (v8.size and not np.shares_memory(v32, v8)):
            return None  # not the 32-bit view of the 16-byte views that decoding rebuilds
        bytes_ = node(v8)
        parts = [node(is_int), node(ints), bytes_, {"t": "view32", "of": bytes_},
                 node(data), node(base)]
        return None if any(p is None for p in parts) else {"t": "tuple", "v": parts}

    tree: dict[str, Any] = {}
    for f in dataclasses.fields(pq):
        if f.name in ("frame", "_alt", "index"):
            continue
        tree[f.name] = node(getattr(pq, f.name))
    index: dict[str, Any] = {}
    for f in dataclasses.fields(pq.index):
        v = getattr(pq.index, f.name)
        index[f.name] = id_col(v) if f.name in ("query_col", "doc_col") else node(v)
    if any(v is None for v in (*tree.values(), *index.values())):
        return None
    tree["index"] = index
    return tree


def _write(entry: Path, ident: dict, tree: dict, blobs: list) -> None:
    """The entry: magic, header length, JSON header, then the blobs, each at a multiple of
    64 bytes from the end of the header (offsets relative to there)."""
    from fasteval.io.atomic import atomic_path

    entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if entry.is_symlink():  # atomic_path writes through links: never out of the folder
        return
    views = [memoryview(b).cast("B") for b in blobs]
    offsets, pos = [], 0
    for v in views:
        pos = -(-pos // _ALIGN) * _ALIGN
        offsets.append([pos, len(v)])
        pos += len(v)
    text = json.dumps({"identity": ident, "tree": tree, "blobs": offsets,
                       "crc32": _checksum([_layout(tree, offsets), *views])}).encode()
    head = MAGIC + struct.pack("<Q", len(text)) + text
    with atomic_path(entry) as tmp, open(tmp, "wb") as fh:
        fh.write(head + b"\0" * (-len(head) % _ALIGN))
        pos = 0
        for (off, n), v in zip(offsets, views, strict=True):
            fh.write(b"\0" * (off - pos))
            fh.write(v)
            pos = off + n


def _own_entries(folder: Path) -> list[tuple[float, int, Path]]:
    """``(last use, size, path)`` of the entries in ``folder`` that this cache wrote: a
    regular file (not a link) named as :func:`_entry_path` names one and starting with
    :data:`MAGIC`. Anything else there (a user's own ``dl19.qrels`` in a folder that
    ``FASTEVAL_CACHE_DIR`` points into, a link out of the folder) is never listed, so
    never removed.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "dl19.qrels").write_text("19335 0 doc 1\\n")      # the user's own file
    >>> _ = (d / ("0" * 32 + ".qrels")).write_bytes(b"not an entry")  # our name, not our header
    >>> _ = (d / ("1" * 32 + ".qrels")).write_bytes(MAGIC + b"\\0" * 8)
    >>> [p.name[:4] for _, _, p in _own_entries(d)]
    ['1111']
    """
    found = []
    try:
        listing = list(os.scandir(folder))
    except OSError:
        return found
    for entry in listing:
        if _ENTRY_NAME.fullmatch(entry.name) is None:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                head = os.read(fd, len(MAGIC))
            finally:
                os.close(fd)
        except OSError:
            continue
        if head == MAGIC:
            found.append((st.st_mtime, st.st_size, Path(entry.path)))
    return found


def _trim() -> None:
    """Remove this cache's oldest entries (by last use, :func:`_own_entries` only) until
    they take at most :data:`MAX_TOTAL_BYTES`."""
    entries = _own_entries(cache_dir())
    total = sum(s for _, s, _ in entries)
    for _, size, p in sorted(entries, key=lambda e: e[0]):
        if total <= MAX_TOTAL_BYTES:
            break
        try:
            p.unlink()
        except OSError:
            continue
        total -= size
