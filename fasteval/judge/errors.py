"""Errors raised by the LLM judge."""

from __future__ import annotations

from fasteval.errors import FastevalError, ParameterError


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
    >>> str(ReplyParseError("Missing expected keys in JSON: ['score']. Got keys: []"))
    "Missing expected keys in JSON: ['score']. Got keys: []"
    """


class MissingAPIKeyError(ParameterError):
    """The server needs an API key and none of the environment variables that hold it is set.

    A :class:`ValueError` with the message of Haystack's ``Secret.resolve_value``, so code that
    expects Haystack's error on ``warm_up()`` gets it from fasteval too.

    Examples
    --------
    >>> err = MissingAPIKeyError(("OPENAI_API_KEY",))
    >>> str(err), isinstance(err, ValueError), err.parameter
    ("None of the following authentication environment variables are set: ('OPENAI_API_KEY',)", True, 'api_key_env')
    """

    def __init__(self, env_vars: tuple[str, ...]) -> None:
        super().__init__("api_key_env", "the name of a set environment variable holding an API key", env_vars)
        self.env_vars = env_vars
        self.args = (f"None of the following authentication environment variables are set: {env_vars}",)

    def __str__(self) -> str:
        return str(self.args[0])
