"""Keep credentials out of everything the judge prints or stores.

One helper, :func:`redact`, is applied to every text that leaves the judge: error messages
(stderr, the output table's ``error`` column, :class:`fasteval.judge.JudgeError`), and
``repr()`` / ``to_dict()`` of the client. It removes the secrets it is given (the API key,
the password of a URL, sensitive header values) wherever they appear, for example in a
server's reply that echoes the key, and the usual shapes of credentials whatever their
value: a URL's ``user:password@``, ``Bearer``/``Basic`` tokens, OpenAI-style ``sk-`` keys.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, unquote_plus, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "redact", "split_credentials", "split_query_secrets", "url_secrets",
           "is_sensitive_header", "header_secrets", "generator_secrets"]

MASK = "***"

_URL_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@?#]+@")
_AUTH_TOKEN = re.compile(r"(?i)\b(bearer|basic|token)(\s+|=)([A-Za-z0-9._~+/=-]{4,})")
_KEY_SHAPE = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")
_SENSITIVE_WORDS = ("auth", "key", "token", "secret", "cookie", "password", "credential")
_SIGNATURES = ("sig", "signature")  # query names of signed URLs (Azure SAS, S3 presigned)
_QUERY_SECRET = re.compile(
    rf"(?i)(?P<name>[?&;](?:[\w.-]*(?:{'|'.join(_SENSITIVE_WORDS)})[\w.-]*"
    rf"|{'|'.join(_SIGNATURES)})=)[^&#\s'\"<>]+")
_MIN_SECRET = 4  # shorter "secrets" would mask ordinary text


def is_sensitive_header(name: str) -> bool:
    """Whether an HTTP header carries credentials (``Authorization``, ``X-Api-Key``...).

    Examples
    --------
    >>> is_sensitive_header("Authorization"), is_sensitive_header("X-Request-Id")
    (True, False)
    """
    lowered = name.lower()
    return any(word in lowered for word in _SENSITIVE_WORDS)


def _is_sensitive_query(name: str) -> bool:
    return is_sensitive_header(name) or name.lower() in _SIGNATURES


def redact(text: Any, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with credentials replaced by ``***``.

    Parameters
    ----------
    text : object
        Converted with ``str()``.
    secrets : iterable of str
        Values to mask wherever they appear (an API key, a password); empty and very short
        values are ignored.

    Examples
    --------
    >>> redact("HTTP 401 from http://me:hunter2@host/v1: bad key sk-abcdefghij12", ["hunter2"])
    'HTTP 401 from http://***@host/v1: bad key ***'
    >>> redact("Authorization: Bearer abc.def-123")
    'Authorization: Bearer ***'
    >>> redact("POST http://host/v1/chat/completions?api-version=2024&api_key=abc123")
    'POST http://host/v1/chat/completions?api-version=2024&api_key=***'
    """
    out = str(text)
    for secret in sorted({s for s in secrets if s and len(s) >= _MIN_SECRET}, key=len,
                         reverse=True):
        out = out.replace(secret, MASK)
    out = _URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", out)
    out = _QUERY_SECRET.sub(lambda m: f"{m.group('name')}{MASK}", out)
    out = _AUTH_TOKEN.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", out)
    return _KEY_SHAPE.sub(MASK, out)


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """A URL without its ``user:password@`` part, and that part (``None`` if absent).

    Examples
    --------
    >>> split_credentials("http://me:pw@127.0.0.1:8000/v1")
    ('http://127.0.0.1:8000/v1', ('me', 'pw'))
    >>> split_credentials("http://127.0.0.1:8000/v1")
    ('http://127.0.0.1:8000/v1', None)
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None
    if "@" not in parts.netloc:
        return url, None
    netloc = parts.netloc.rsplit("@", 1)[1]
    credentials = (unquote(parts.username or ""), unquote(parts.password or ""))
    return urlunsplit(parts._replace(netloc=netloc)), credentials


def split_query_secrets(url: str) -> tuple[str, list[tuple[str, str]]]:
    """A URL without the query parameters that carry credentials (``api_key=``, ``key=``,
    ``access_token=``, ``sig=``...), and those parameters (decoded). Other parameters
    (``api-version=``) stay in the URL.

    Examples
    --------
    >>> split_query_secrets("http://127.0.0.1:8000/v1?api-version=2024-06-01&api_key=s3cr3t")
    ('http://127.0.0.1:8000/v1?api-version=2024-06-01', [('api_key', 's3cr3t')])
    >>> split_query_secrets("http://127.0.0.1:8000/v1")
    ('http://127.0.0.1:8000/v1', [])
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, []
    if not parts.query:
        return url, []
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    secret = [(k, v) for k, v in pairs if _is_sensitive_query(k)]
    if not secret:
        return url, []
    kept = [(k, v) for k, v in pairs if not _is_sensitive_query(k)]
    return urlunsplit(parts._replace(query=urlencode(kept))), secret


def url_secrets(url: str) -> list[str]:
    """The credentials in ``url``, in each spelling a server or a library may echo them: the
    parts of a ``user:password@`` (decoded and as written) and the Basic token they make, and
    the values of the query parameters that carry credentials (decoded, as written, and
    URL-encoded as a client sends them).

    Examples
    --------
    >>> url_secrets("http://127.0.0.1:8000/v1?api-version=1&api_key=a%2Fb+c")
    ['a%2Fb+c', 'a/b c', 'a%2Fb%20c']
    >>> url_secrets("http://me:p%40ss@host/v1")
    ['me', 'p@ss', 'p%40ss', 'bWU6cEBzcw==']
    """
    found: list[str] = []
    rest, auth = split_credentials(url)
    if auth is not None:
        written = urlsplit(url).netloc.rsplit("@", 1)[0].split(":", 1)
        found += [*auth, *written, base64.b64encode(":".join(auth).encode()).decode()]
    try:
        query = urlsplit(rest).query
    except ValueError:
        query = ""
    for field in re.split("[&;]", query):
        name, _, written = field.partition("=")
        if _is_sensitive_query(unquote_plus(name)):
            value = unquote_plus(written)
            found += [written, value, urlencode({"": value})[1:], quote(value, safe="")]
    return [s for s in dict.fromkeys(found) if s]


def generator_secrets(generator: Any) -> list[str]:
    """Secrets a chat generator knows of: fasteval's client lists its own
    (``_secrets()``); of a Haystack generator, every attribute that is a ``Secret``
    (``api_key``, Azure's ``azure_ad_token``, a ``token``...) is resolved, a plain string
    ``api_key`` taken, and the sensitive values of its header mappings (``headers``,
    ``default_headers``, ``extra_headers`` of ``generation_kwargs``...) added.

    Examples
    --------
    >>> class Generator:
    ...     def __init__(self):
    ...         self.api_key, self.default_headers = "k3y-value", {"X-Api-Key": "h3ader-value"}
    ...         self.generation_kwargs = {"extra_headers": {"Authorization": "Bearer t0ken"}}
    >>> generator_secrets(Generator())
    ['k3y-value', 'h3ader-value', 'Bearer t0ken', 't0ken']
    """
    own = getattr(generator, "_secrets", None)
    if callable(own):
        try:
            return [s for s in own() if s]
        except Exception:  # noqa: BLE001 - a secret lookup must never fail a job
            return []
    found: list[str] = []
    # the instance's own attributes (no property is run), and the two usual names
    attributes: dict[str, Any] = dict(getattr(generator, "__dict__", None) or {})
    for name in ("api_key", "headers", "generation_kwargs"):
        if name not in attributes:
            try:
                attributes[name] = getattr(generator, name, None)
            except Exception:  # noqa: BLE001 - a property that fails holds no secret
                continue
    kwargs = attributes.get("generation_kwargs")
    if isinstance(kwargs, Mapping):
        attributes.update({f"generation_kwargs.{k}": v for k, v in kwargs.items()})
    for name, value in attributes.items():
        resolve = getattr(value, "resolve_value", None)
        if callable(resolve) and not isinstance(value, type):
            try:
                value = resolve()
            except Exception:  # noqa: BLE001 - an unset key is not an error here
                value = None
            if isinstance(value, str) and value:
                found.append(value)
        elif name == "api_key" and isinstance(value, str) and value:
            found.append(value)
        elif "headers" in name.lower() and isinstance(value, Mapping):
            found.extend(header_secrets(value))
    return found


def header_secrets(headers: Mapping[str, Any]) -> list[str]:
    """The values of sensitive headers, and the token after ``Bearer``/``Basic`` in them.

    Examples
    --------
    >>> header_secrets({"Authorization": "Bearer tok-123", "Accept": "json"})
    ['Bearer tok-123', 'tok-123']
    """
    found = []
    for name, value in headers.items():
        if is_sensitive_header(str(name)) and value:
            text = str(value)
            found.append(text)
            if " " in text:
                found.append(text.split(None, 1)[1])
    return found
