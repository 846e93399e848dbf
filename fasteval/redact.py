"""Keep credentials out of everything fasteval prints or stores (the LLM judge, Ray addresses).

One helper, :func:`redact`, is applied to every text that leaves the judge: error messages
(stderr, the output table's ``error`` column, :class:`fasteval.judge.JudgeError`), and
``repr()`` / ``to_dict()`` of the client. It removes the secrets it is given (the API key,
the password of a URL, sensitive header values) wherever they appear, for example in a
server's reply that echoes the key, and the usual shapes of credentials whatever their
value: a URL's ``user:password@``, ``Bearer``/``Basic`` tokens, OpenAI-style ``sk-`` keys.
"""

from __future__ import annotations

import base64
import logging
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, unquote_plus, urlencode, urlsplit, urlunsplit

__all__ = ["MASK", "redact", "split_credentials", "split_query_secrets", "url_secrets", "clean_url",
           "is_sensitive_header", "header_secrets", "generator_secrets", "setting_secrets", "redact_exception",
           "redact_http_logs", "scrub_config", "check_env_name"]

MASK = "***"

_URL_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@?#]+@")
# a URL written without its scheme: ``user:password@host``
_BARE_USERINFO = re.compile(r"(?<![\w.~%+*/:@-])[\w.~%+-]+:[^\s/@?#:'\"]+@(?=[\w\[])")
_AUTH_TOKEN = re.compile(r"(?i)\b(bearer|basic|token)(\s+|=)([A-Za-z0-9._~+/=-]{4,})")
_KEY_SHAPE = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")
_SENSITIVE_WORDS = ("auth", "key", "token", "secret", "cookie", "password", "credential")
# query names of signed URLs (Azure SAS, S3 presigned) and of Azure Functions' key
_SIGNATURES = ("sig", "signature", "code")
_QUERY_SECRET = re.compile(
    rf"(?i)(?P<name>[?&;](?:[\w.-]*(?:{'|'.join(_SENSITIVE_WORDS)})[\w.-]*"
    rf"|{'|'.join(_SIGNATURES)})=)[^&#\s'\"<>]+")
_MIN_SECRET = 4  # shorter "secrets" would mask ordinary text


def is_sensitive_header(name: str | bytes) -> bool:
    """Whether an HTTP header carries credentials (``Authorization``, ``X-Api-Key``...).

    Examples
    --------
    >>> is_sensitive_header("Authorization"), is_sensitive_header("X-Request-Id")
    (True, False)
    >>> is_sensitive_header(b"X-Api-Key")
    True
    """
    if isinstance(name, bytes):
        name = name.decode("latin-1")
    lowered = str(name).lower()
    return any(word in lowered for word in _SENSITIVE_WORDS)


_CREDENTIAL_FIELD = re.compile(
    r"(?i)token|(?:.*[_-])?(?:api[_-]?key|access[_-]?key|secret(?:[_-]?key)?|password|passwd"
    r"|credentials?|(?:access|api|auth|bearer|refresh|session)[_-]?token)")
"""A request-body or settings field that holds a credential (``api_key``, ``openai_api_key``,
``client_secret``, ``password``, ``access_token``); ``max_tokens``, ``prompt_cache_key`` are
not."""


def is_credential_field(name: str) -> bool:
    """Whether a field of a request body or of settings holds a credential by its name.

    Examples
    --------
    >>> [is_credential_field(n) for n in ("api_key", "x-api-key", "client_secret", "token")]
    [True, True, True, True]
    >>> [is_credential_field(n) for n in ("max_tokens", "prompt_cache_key", "eos_token", "tokenizer")]
    [False, False, False, False]
    """
    return _CREDENTIAL_FIELD.fullmatch(str(name)) is not None


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
    >>> redact("got 'me:hunter2@127.0.0.1:8000/v1'")
    "got '***@127.0.0.1:8000/v1'"
    """
    out = str(text)
    for secret in sorted({s for s in secrets if s and len(s) >= _MIN_SECRET}, key=len,
                         reverse=True):
        out = out.replace(secret, MASK)
    out = _URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", out)
    out = _BARE_USERINFO.sub(f"{MASK}@", out)
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
    ``api_key`` taken, and, in its attributes and the mappings they hold
    (``generation_kwargs``, ``http_client_kwargs``...), the sensitive values of header
    mappings (``headers``, ``default_headers``, ``extra_headers``...) and of query-parameter
    mappings (``extra_query``, ``default_query``, ``params``), and the credentials of URLs
    (``api_base_url``, a ``proxy``: :func:`url_secrets`) added.

    Examples
    --------
    >>> class Generator:
    ...     def __init__(self):
    ...         self.api_key, self.default_headers = "k3y-value", {"X-Api-Key": "h3ader-value"}
    ...         self.generation_kwargs = {"extra_headers": {"Authorization": "Bearer t0ken"},
    ...                                   "extra_query": {"api_key": "qu3ry-key", "v": "1"}}
    ...         self.http_client_kwargs = {"proxy": "http://me:pr0xy-pw@proxy:3128"}
    >>> generator_secrets(Generator())
    ['k3y-value', 'h3ader-value', 'Bearer t0ken', 't0ken', 'qu3ry-key', 'me', 'pr0xy-pw', 'bWU6cHIweHktcHc=']
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
        else:
            found.extend(setting_secrets(str(name), value))
    return list(dict.fromkeys(found))


def setting_secrets(name: str, value: Any, depth: int = 2) -> list[str]:
    """The credentials in one setting of a client: the sensitive values of a header mapping
    (a name with "headers") or of a query-parameter mapping (a name with "query", or
    ``params``), a URL's credentials (:func:`url_secrets`), the text of fields named as
    credentials (:func:`is_credential_field`); other mappings are searched ``depth`` levels
    down.

    Examples
    --------
    >>> setting_secrets("generation_kwargs", {"extra_query": {"sig": "s1gnature", "v": "1"},
    ...                                       "extra_headers": {"api-key": "h3ader"}})
    ['s1gnature', 'h3ader']
    """
    lowered = name.lower()
    if isinstance(value, str):
        return url_secrets(value) if _URL_START.match(value) else []
    if not isinstance(value, Mapping):
        return []
    if "headers" in lowered:
        return header_secrets(value)
    if "query" in lowered or lowered == "params":
        plain = [str(v) for k, v in value.items() if _is_sensitive_query(str(k))
                 and isinstance(v, (str, int)) and not isinstance(v, bool) and str(v)]
        # as given, and URL-encoded as a client sends it (a server may echo either)
        return list(dict.fromkeys(x for v in plain
                                  for x in (v, urlencode({"": v})[1:], quote(v, safe=""))))
    found = [str(v) for k, v in value.items()
             if isinstance(v, str) and v and is_credential_field(str(k))]
    if depth <= 0:
        return found
    return found + [s for key, item in value.items() for s in setting_secrets(str(key), item, depth - 1)]


def header_secrets(headers: Mapping[str, Any]) -> list[str]:
    """The values of sensitive headers (a ``bytes`` value as the text a server reads), and
    the token after ``Bearer``/``Basic`` in them.

    Examples
    --------
    >>> header_secrets({"Authorization": "Bearer tok-123", "Accept": "json"})
    ['Bearer tok-123', 'tok-123']
    >>> header_secrets({b"X-Api-Key": b"k3y-value"})
    ['k3y-value']
    """
    found = []
    for name, value in headers.items():
        if is_sensitive_header(name if isinstance(name, bytes) else str(name)) and value:
            text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            found.append(text)
            if " " in text:
                found.append(text.split(None, 1)[1])
    return found


def clean_url(url: str) -> str:
    """``url`` without its credentials: no ``user:password@``, no query parameter that
    carries one (``api_key=``, ``key=``, ``sig=``...); other parameters stay.

    Examples
    --------
    >>> clean_url("http://me:pw@127.0.0.1:8000/v1?api-version=1&api_key=s3cr3t")
    'http://127.0.0.1:8000/v1?api-version=1'
    """
    return split_query_secrets(split_credentials(url)[0])[0]


def redact_exception(exc: BaseException, secrets: Iterable[str | None] = ()) -> BaseException:
    """Mask credentials in the text of ``exc`` and of the exceptions chained to it
    (``__cause__``, ``__context__``, the members of an exception group), in place: their
    ``args`` and ``message`` strings (what ``str()``, ``repr()`` and a traceback show).
    The type stays, so ``except openai.AuthenticationError`` still catches it.

    Parameters
    ----------
    exc : BaseException
        Changed in place and returned.
    secrets : iterable of str
        Values to mask besides the shapes :func:`redact` knows.

    Examples
    --------
    >>> try:
    ...     try:
    ...         raise KeyError("key sk-abcdefghij12 refused")
    ...     except KeyError as inner:
    ...         raise RuntimeError("POST http://me:pw@host/v1 failed") from inner
    ... except RuntimeError as exc:
    ...     caught = redact_exception(exc)
    >>> str(caught), repr(caught.__cause__)
    ('POST http://***@host/v1 failed', "KeyError('key *** refused')")
    """
    secrets = [s for s in secrets if s]
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        try:
            current.args = tuple(redact(a, secrets) if isinstance(a, str) else a
                                 for a in current.args)
        except (AttributeError, TypeError):  # pragma: no cover - args that cannot be set
            pass
        message = getattr(current, "message", None)
        if isinstance(message, str):
            try:
                current.message = redact(message, secrets)  # type: ignore[attr-defined]
            except (AttributeError, TypeError):  # a read-only property
                pass
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        todo.extend(getattr(current, "exceptions", None) or ())
    return exc


class _LogRedactor(logging.Filter):
    """Masks credentials in the records of an HTTP client's logger (httpx logs each
    request's URL, query string included, at INFO)."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()
        self._lock = threading.Lock()

    def add(self, secrets: Iterable[str | None]) -> None:
        with self._lock:
            self.secrets |= {s for s in secrets if s}

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logging's to report
            return True
        clean = redact(text, tuple(self.secrets))
        if clean != text:
            record.msg, record.args = clean, None
        return True


_HTTP_LOGGERS = ("httpx", "httpx2", "httpcore", "openai", "openai._base_client")
"""Loggers of the HTTP clients a judge request goes through (a filter applies to the
records of its own logger only, so each is named)."""
_LOG_REDACTOR = _LogRedactor()
_INSTALL_LOCK = threading.Lock()


def redact_http_logs(secrets: Iterable[str | None] = ()) -> None:
    """Mask credentials in what the HTTP client libraries log (httpx's ``HTTP Request:``
    line shows the URL, an ``api_key=`` query parameter included): a filter on their
    loggers, added once, applies :func:`redact` with the shapes it knows and every secret
    passed here by any call. Only records are changed; handlers and levels stay.

    Examples
    --------
    >>> import io
    >>> stream = io.StringIO()
    >>> handler = logging.StreamHandler(stream)
    >>> logging.getLogger("httpx").addHandler(handler)
    >>> redact_http_logs(["zq9Xw7Vb"])
    >>> logging.getLogger("httpx").warning("POST http://h/v1?api_key=%s&t=zq9Xw7Vb", "abc123")
    >>> logging.getLogger("httpx").removeHandler(handler)
    >>> stream.getvalue()
    'POST http://h/v1?api_key=***&t=***\\n'
    """
    _LOG_REDACTOR.add(secrets)
    with _INSTALL_LOCK:
        for name in _HTTP_LOGGERS:
            logger = logging.getLogger(name)
            if _LOG_REDACTOR not in logger.filters:
                logger.addFilter(_LOG_REDACTOR)


_URL_FIELDS = frozenset({"api_base_url", "base_url", "azure_endpoint", "url", "endpoint"})


def scrub_config(data: Any) -> Any:
    """A copy of a serialized component (``to_dict()`` output) without credentials: the
    URLs under the names servers go by (``api_base_url``, ``base_url``,
    ``azure_endpoint``, ``url``, ``endpoint``) and every other string that is a URL
    (``scheme://...``: a ``proxy``, say) cleaned by :func:`clean_url`, the sensitive entries
    of every header mapping (a key with "headers" in its name) and of every query-parameter
    mapping (a key with "query" in its name, or ``params``: the OpenAI SDK's ``extra_query``,
    httpx's ``params``) left out, an httpx ``auth`` (user and password) left out, and any
    text field named as a credential (:func:`is_credential_field`: ``api_key`` in
    ``generation_kwargs`` or its ``extra_body``) left out.
    A ``Secret`` serialized by Haystack (``{"type": "env_var", ...}``) names variables
    only and stays.

    Examples
    --------
    >>> scrub_config({"init_parameters": {"api_base_url": "http://me:pw@h/v1?key=k3y",
    ...     "generation_kwargs": {"extra_headers": {"Authorization": "Bearer t", "X-Team": "ir"}}}})
    {'init_parameters': {'api_base_url': 'http://h/v1', 'generation_kwargs': {'extra_headers': {'X-Team': 'ir'}}}}
    >>> scrub_config({"extra_query": {"api-version": "1", "api_key": "k3y"},
    ...               "http_client_kwargs": {"proxy": "http://me:pw@proxy:3128", "auth": ["me", "pw"]}})
    {'extra_query': {'api-version': '1'}, 'http_client_kwargs': {'proxy': 'http://proxy:3128'}}
    """
    if isinstance(data, Mapping):
        out: dict[Any, Any] = {}
        for key, value in data.items():
            name = str(key).lower()
            if name in _URL_FIELDS and isinstance(value, str):
                out[key] = clean_url(value)
            elif "headers" in name and isinstance(value, Mapping):
                out[key] = {k: scrub_config(v) for k, v in value.items()
                            if not is_sensitive_header(str(k))}
            elif ("query" in name or name == "params") and isinstance(value, Mapping):
                out[key] = {k: scrub_config(v) for k, v in value.items()
                            if not _is_sensitive_query(str(k))}
            elif (name == "auth" and value is not None and not isinstance(value, bool)
                  and not _names_env_vars(value)):
                continue  # httpx's (user, password) or an auth object's state
            elif isinstance(value, (str, bytes)) and value and is_credential_field(name):
                continue  # a key given in a request body (extra_body={"api_key": ...})
            else:
                out[key] = scrub_config(value)
        return out
    if isinstance(data, str):  # a URL is rewritten only when it holds a credential
        return clean_url(data) if _URL_START.match(data) and url_secrets(data) else data
    if isinstance(data, list):
        return [scrub_config(v) for v in data]
    if isinstance(data, tuple):
        return tuple(scrub_config(v) for v in data)
    return data


_URL_START = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://")


def _names_env_vars(value: Any) -> bool:
    """Whether ``value`` is a ``Secret`` as Haystack serializes one from environment
    variables (``{"type": "env_var", "env_vars": [...], ...}``): names, no secret."""
    return isinstance(value, Mapping) and value.get("type") == "env_var"


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_env_name(parameter: str, name: Any) -> None:
    """Refuse a value given where the *name* of an environment variable belongs that is no
    such name: most often the API key itself. The value is not shown (it may be the key).

    Raises
    ------
    fasteval.errors.ParameterError
        For anything but a string of letters, digits and ``_`` not starting with a digit
        (``None`` passes: no variable).

    Examples
    --------
    >>> check_env_name("api_key_env", "OPENAI_API_KEY")
    >>> check_env_name("api_key_env", "sk-abcdefghij12")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: api_key_env must be the name of an environment variable (letters, digits and _, not starting with a digit), not the key itself, got '<15 characters, not shown>'
    """
    if name is None:
        return
    if isinstance(name, str) and _ENV_NAME.fullmatch(name):
        return
    from fasteval.errors import ParameterError

    shown = f"<{len(name)} characters, not shown>" if isinstance(name, str) else f"<{type(name).__name__}>"
    raise ParameterError(parameter, "the name of an environment variable (letters, digits and _, "
                         "not starting with a digit), not the key itself", shown)
