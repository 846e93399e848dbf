"""Errors raised by the LLM judge."""

from __future__ import annotations

from fasteval.errors import FastevalError


class JudgeError(FastevalError):
    """A judged row failed (request or reply) and ``raise_on_failure`` was set.

    It is a :class:`ValueError` subclass, like the errors Haystack's LLM evaluators raise.

    Examples
    --------
    >>> str(JudgeError("row 3: reply has no JSON object"))
    'row 3: reply has no JSON object'
    """


class RequestError(FastevalError):
    """A chat-completions request failed for good (non-retryable status, or retries used up).

    Parameters
    ----------
    message : str
        What went wrong.
    status : int, optional
        The last HTTP status received, ``None`` for timeouts and connection errors.
    attempts : int
        How many HTTP requests were made.

    Examples
    --------
    >>> err = RequestError("HTTP 401: bad key", status=401, attempts=1)
    >>> (str(err), err.status, err.attempts)
    ('HTTP 401: bad key', 401, 1)
    """

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        self.status = status
        self.attempts = attempts
        super().__init__(message)


class ReplyParseError(FastevalError):
    """A model reply is not a JSON object with the expected keys and value types.

    Examples
    --------
    >>> str(ReplyParseError("missing keys ['score']"))
    "missing keys ['score']"
    """
