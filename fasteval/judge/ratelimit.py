"""Client-side rate limiting and retry delays.

The limiter is a token bucket that hands out *reservations*: ``reserve(n)`` books ``n``
units at once and returns how long the caller must sleep before using them. Bookings are
made under a thread lock and never hold an asyncio primitive, so one limiter serves any
number of event loops and threads.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections.abc import Mapping


class TokenBucket:
    """Token bucket refilled at ``per_minute / 60`` units per second.

    Parameters
    ----------
    per_minute : float
        Sustained rate (requests or tokens per minute); must be positive.
    burst_seconds : float
        Capacity of the bucket, in seconds' worth of refill (at least one unit).

    Examples
    --------
    >>> bucket = TokenBucket(120)          # 2 per second, capacity 2
    >>> [round(bucket.reserve(1), 2) for _ in range(4)]
    [0.0, 0.0, 0.5, 1.0]
    """

    def __init__(self, per_minute: float, burst_seconds: float = 1.0) -> None:
        from fasteval.errors import ParameterError

        if not per_minute > 0:
            raise ParameterError("per_minute", "a positive number", per_minute)
        self.rate = float(per_minute) / 60.0
        self.capacity = max(1.0, self.rate * burst_seconds)
        self._level = self.capacity
        self._stamp = time.monotonic()
        self._lock = threading.Lock()

    def reserve(self, amount: float) -> float:
        """Book ``amount`` units; return the seconds to wait before using them."""
        with self._lock:
            now = time.monotonic()
            self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
            self._stamp = now
            # A request larger than the bucket waits for a full bucket, then runs into debt.
            need = min(float(amount), self.capacity)
            delay = max(0.0, (need - self._level) / self.rate)
            self._level -= float(amount)
            return delay

    def adjust(self, delta: float) -> None:
        """Give back (``delta > 0``) or charge (``delta < 0``) units after the fact."""
        with self._lock:
            self._level = min(self.capacity, self._level + float(delta))


class RateLimiter:
    """Requests-per-minute and tokens-per-minute limits together.

    Parameters
    ----------
    requests_per_minute, tokens_per_minute : float, optional
        ``None`` means unlimited.

    Examples
    --------
    >>> limiter = RateLimiter(requests_per_minute=60)
    >>> limiter.reserve(tokens=500)
    0.0
    """

    def __init__(
        self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None
    ) -> None:
        self.requests = TokenBucket(requests_per_minute) if requests_per_minute else None
        self.tokens = TokenBucket(tokens_per_minute) if tokens_per_minute else None

    def reserve(self, tokens: float) -> float:
        """Book one request of about ``tokens`` tokens; return the seconds to wait."""
        delay = 0.0
        if self.requests is not None:
            delay = max(delay, self.requests.reserve(1))
        if self.tokens is not None:
            delay = max(delay, self.tokens.reserve(tokens))
        return delay

    def settle(self, estimated: float, actual: float | None) -> None:
        """Correct the token booking once the server reported the real usage."""
        if self.tokens is not None and actual is not None:
            self.tokens.adjust(estimated - actual)


def estimate_tokens(messages: list[dict], max_tokens: int | None = None) -> int:
    """Rough token count of a chat request (4 characters per token, plus the reply budget).

    Examples
    --------
    >>> estimate_tokens([{"role": "user", "content": "x" * 400}], max_tokens=50)
    154
    """
    chars = sum(len(str(m.get("content", ""))) for m in messages)
    return chars // 4 + 4 * len(messages) + int(max_tokens or 0)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait according to ``Retry-After`` (seconds or HTTP date) or ``retry-after-ms``.

    Examples
    --------
    >>> parse_retry_after({"retry-after": "2"})
    2.0
    >>> parse_retry_after({"retry-after-ms": "150"})
    0.15
    >>> parse_retry_after({}) is None
    True
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: uniform in ``[d/2, d]``, ``d = min(cap, base * 2**attempt)``.

    Examples
    --------
    >>> 0.25 <= backoff_delay(1, 0.25, 10.0) <= 0.5
    True
    """
    d = min(cap, base * (2.0**attempt))
    r = (rng or random).random()
    return d * (0.5 + 0.5 * r)
