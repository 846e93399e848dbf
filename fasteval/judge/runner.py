"""Judge many prompts concurrently: cache lookup, request, parse, one corrective retry."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any

from fasteval.errors import OutputError, ParameterError
from fasteval.judge.aio import run_sync
from fasteval.judge.cache import ReplyCache
from fasteval.judge.errors import JudgeError, ReplyParseError
from fasteval.judge.parsing import correction_message
from fasteval.judge.protocol import Backend, ChatReply
from fasteval.judge.redact import generator_secrets, redact, redact_http_logs
from fasteval.progress import Progress

logger = logging.getLogger(__name__)


@dataclass
class RowOutcome:
    """What happened to one prompt.

    Attributes
    ----------
    result : dict or None
        The parsed, validated reply; ``None`` when the row failed.
    error : str or None
        Why the row failed.
    cached : bool
        The reply came from the cache, or from an earlier row of the job with the same
        prompt while the cache is on (no request made).
    requests : int
        Chat calls made for this row (a corrective retry counts; HTTP retries inside the
        built-in client do not, they are in ``meta["attempts"]``).
    corrected : bool
        The accepted reply came from the corrective retry.
    meta : dict
        Reply metadata (model, usage, finish reason).
    """

    result: dict[str, Any] | None = None
    error: str | None = None
    cached: bool = False
    requests: int = 0
    corrected: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def usage(self) -> dict[str, int]:
        usage = self.meta.get("usage") or {}
        return {k: int(v) for k, v in usage.items() if isinstance(v, (int, float))}


@dataclass
class JobReport:
    """Outcomes in input order plus totals.

    Examples
    --------
    >>> JobReport([RowOutcome(result={"a": 1}, cached=True), RowOutcome(error="x")]).summary()
    {'rows': 2, 'evaluated': 1, 'failed': 1, 'cache_hits': 1, 'requests': 0, 'corrected': 0, 'prompt_tokens': 0, 'completion_tokens': 0, 'seconds': 0.0}
    """

    outcomes: list[RowOutcome]
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """Counts of rows, failures, cache hits, requests and tokens used by requests made now."""
        fresh = [o for o in self.outcomes if not o.cached]
        return {
            "rows": len(self.outcomes),
            "evaluated": sum(o.result is not None for o in self.outcomes),
            "failed": sum(o.result is None for o in self.outcomes),
            "cache_hits": sum(o.cached for o in self.outcomes),
            "requests": sum(o.requests for o in self.outcomes),
            "corrected": sum(o.corrected for o in self.outcomes),
            "prompt_tokens": sum(o.usage.get("prompt_tokens", 0) for o in fresh),
            "completion_tokens": sum(o.usage.get("completion_tokens", 0) for o in fresh),
            "seconds": round(self.seconds, 3),
        }


def _probe_cache(cache: ReplyCache, unwritable: list[BaseException]) -> None:
    """Warn, before the first request, that replies will not be kept when ``cache``'s
    folder cannot be written (the job goes on without it); ``unwritable`` records it, so
    that the warning is not repeated at the first reply."""
    try:
        cache.check_writable()
    except (OSError, OutputError) as exc:
        unwritable.append(exc)
        logger.warning("the reply cache in %s cannot be written (%s): replies are not cached",
                       cache.directory, exc)


async def judge_prompts_async(
    generator: Any,
    prompts: Sequence[str],
    parse: Callable[[str | None], dict[str, Any]],
    *,
    expected_keys: Sequence[str] = (),
    max_concurrency: int = 8,
    cache: ReplyCache | str | None = None,
    corrective_retry: bool = True,
    raise_on_failure: bool = True,
    progress_bar: bool = False,
    desc: str | None = None,
    deadline: float | None = None,
    prefer_async: bool = True,
    trace_parent: Any = None,
) -> JobReport:
    """Judge ``prompts`` (one user message each) with at most ``max_concurrency`` in flight.

    Each row: look up the cache; else send the prompt; parse the reply with ``parse``; when
    that raises :class:`ReplyParseError`, send once more with the reply and a corrective
    message appended; store the accepted reply in the cache. Failed rows are not cached.
    With the cache on, rows whose prompts are equal send one request: the later rows take
    the first one's accepted reply (and send their own when it failed).

    Parameters
    ----------
    generator : object
        A fasteval chat generator or a Haystack chat generator.
    prompts : sequence of str
        One prompt per row.
    parse : callable
        ``parse(text) -> dict``; raises ``ReplyParseError`` for unusable replies.
    expected_keys : sequence of str
        Named in the corrective message.
    max_concurrency : int
        Most rows in flight at once.
    cache : ReplyCache or path, optional
        Reply cache; ``None`` disables caching.
    corrective_retry : bool
        Ask again once after an unusable reply.
    raise_on_failure : bool
        Raise :class:`JudgeError` on the first failed row (other rows are cancelled, accepted
        replies stay cached); otherwise record ``None`` and the reason.
    progress_bar : bool
        Show progress on stderr (:class:`fasteval.progress.Progress`: after two seconds, a
        bar on a terminal, plain lines elsewhere).
    desc : str, optional
        Progress bar label.
    deadline : float, optional
        Seconds the whole job may take. Rows not judged by then fail with a message saying
        so (they are not cached, so a rerun judges them); with ``raise_on_failure`` the job
        raises :class:`JudgeError` instead. ``None``: no limit.
    prefer_async : bool
        Call the generator's ``run_async`` when it has one (``True``), or always its ``run``
        on worker threads (``False``, what :func:`judge_prompts` does).
    trace_parent : span, optional
        Parent of the Haystack tracing spans (one per request, when Haystack tracing is on).

    Returns
    -------
    JobReport

    Notes
    -----
    Error messages (``RowOutcome.error``, :class:`JudgeError`) pass through
    :func:`fasteval.judge.redact.redact`: an API key echoed by a server, a URL's password
    or a bearer token never reach them.
    """
    if not isinstance(max_concurrency, int) or isinstance(max_concurrency, bool) or max_concurrency < 1:
        raise ParameterError("max_concurrency", "an integer >= 1", max_concurrency)
    if deadline is not None and not (
        isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and 0 < deadline < float("inf")
    ):
        raise ParameterError("deadline", "a positive number of seconds or None", deadline)
    if cache is not None and not isinstance(cache, ReplyCache):
        cache = ReplyCache(cache)
    started = time.perf_counter()
    executor = _DaemonThreads()  # at most max_concurrency calls at once: the semaphore
    backend = Backend(generator, executor, prefer_async=prefer_async, trace_parent=trace_parent)
    namespace = backend.cache_namespace() if cache is not None else {}
    semaphore = asyncio.Semaphore(max_concurrency)
    bar = Progress(len(prompts), desc, "rows", enabled=progress_bar)
    secrets = generator_secrets(generator)
    unwritable: list[BaseException] = []  # the first failed cache write, warned about once
    in_flight: dict[str, asyncio.Future] = {}  # cache key -> the accepted record of its first row
    accepted: dict[str, dict[str, Any]] = {}  # cache key -> the record its first row accepted
    redact_http_logs(secrets)  # the generator's HTTP client may log its URLs
    if cache is not None:  # said before the first request, not after the first reply
        _probe_cache(cache, unwritable)

    def failure(text: str) -> str:
        return redact(text, secrets)

    async def call(messages: list[dict[str, str]], outcome: RowOutcome) -> ChatReply:
        async with semaphore:
            outcome.requests += 1
            reply = await backend.call(_sendable(messages))
        usage = outcome.usage
        for k, v in reply.usage.items():
            usage[k] = usage.get(k, 0) + v
        outcome.meta = {**reply.meta, "usage": usage}
        return reply

    def from_record(record: dict[str, Any] | None) -> RowOutcome | None:
        """The outcome of a stored reply (no request made); None when it no longer parses."""
        if record is None:
            return None
        try:
            result = parse(record["text"])
        except ReplyParseError:
            return None  # stale or corrupt entry: judge again and overwrite it
        return RowOutcome(result=result, cached=True, corrected=bool(record.get("corrected")),
                          meta=dict(record.get("meta") or {}))

    async def one(index: int) -> RowOutcome:
        """A row through the cache: a prompt that an earlier row of this job is judging
        waits for that row's reply (one request for both) instead of sending its own."""
        if cache is None:
            return await judge(index, "")
        key = ReplyCache.key(namespace, [{"role": "user", "content": prompts[index]}])
        leader = in_flight.get(key)
        if leader is not None:
            outcome = from_record(await asyncio.shield(leader))
            if outcome is not None:
                return outcome
            return await judge(index, key)  # the earlier row failed: this one tries itself
        in_flight[key] = leader = asyncio.get_running_loop().create_future()
        try:
            return await judge(index, key)
        finally:  # later rows of this prompt find it in the cache
            del in_flight[key]
            leader.set_result(accepted.pop(key, None))

    async def judge(index: int, key: str) -> RowOutcome:
        messages = [{"role": "user", "content": prompts[index]}]
        if cache is not None:
            record = cache.get(key)
            outcome = from_record(record)
            if outcome is not None:
                accepted[key] = record
                return outcome
        outcome = RowOutcome()
        try:
            reply = await call(messages, outcome)
        except ParameterError:
            raise  # configuration error (e.g. no API key): fail the job, not the row
        except Exception as exc:
            outcome.error = failure(f"request failed: {type(exc).__name__}: {exc}")
            return outcome
        text = reply.text
        try:
            outcome.result = parse(text)
        except ReplyParseError as first:
            if not corrective_retry:
                outcome.error = failure(f"unusable reply: {first}")
                return outcome
            follow_up = messages + [
                {"role": "assistant", "content": text or ""},
                {"role": "user", "content": correction_message(str(first), expected_keys)},
            ]
            try:
                reply = await call(follow_up, outcome)
            except Exception as exc:
                outcome.error = failure(
                    f"unusable reply: {first}; corrective request failed: {type(exc).__name__}: {exc}")
                return outcome
            text = reply.text
            try:
                outcome.result = parse(text)
            except ReplyParseError as second:
                outcome.error = failure(f"unusable reply: {first}; after the corrective retry: {second}")
                return outcome
            outcome.corrected = True
        if cache is not None:
            accepted[key] = record = {"text": text, "corrected": outcome.corrected, "meta": outcome.meta}
            try:
                cache.put(key, record)
            except (OSError, OutputError) as exc:  # a full or read-only disk must not lose the
                if not unwritable:                  # judgement itself: said once, job goes on
                    unwritable.append(exc)
                    logger.warning("the reply cache in %s cannot be written (%s): replies are "
                                   "not cached", cache.directory, exc)
        return outcome

    async def indexed(i: int) -> tuple[int, RowOutcome]:
        return i, await one(i)

    outcomes: list[RowOutcome | None] = [None] * len(prompts)
    tasks = [asyncio.ensure_future(indexed(i)) for i in range(len(prompts))]
    loop = asyncio.get_running_loop()
    end = None if deadline is None else loop.time() + deadline
    try:
        pending: set[asyncio.Future] = set(tasks)
        while pending:
            wait = None if end is None else max(0.0, end - loop.time())
            done, pending = await asyncio.wait(pending, timeout=wait,
                                               return_when=asyncio.FIRST_COMPLETED)
            if not done:  # the job's deadline: what is still running fails
                late = sum(o is None for o in outcomes)
                message = (f"the job's deadline ({deadline:g} s) passed before this row was "
                           "judged")
                if raise_on_failure:
                    raise JudgeError(f"{message}: {late} of {len(prompts)} rows unfinished")
                for k, o in enumerate(outcomes):
                    if o is None:
                        outcomes[k] = RowOutcome(error=message)
                break
            finished = [fut.result() for fut in done]  # a configuration error propagates
            for i, outcome in sorted(finished, key=lambda item: item[0]):
                outcomes[i] = outcome
                bar.update(1)
                if outcome.result is None and raise_on_failure:
                    prompt = prompts[i]
                    raise JudgeError(failure(f"row {i}: {outcome.error} (prompt: {prompt[-300:]!r})"))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        bar.close()
    return JobReport([o if o is not None else RowOutcome(error="not run") for o in outcomes],
                     time.perf_counter() - started)


def _sendable(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """``messages`` with text that UTF-8 can carry: a lone surrogate (a cut emoji's JSON
    ``\\ud83d`` escape, in a row's input or in a reply quoted by the corrective retry) is
    sent as U+FFFD, a surrogate pair as its character. HTTP clients encode the request as
    UTF-8 and would fail the row otherwise.

    Examples
    --------
    >>> _sendable([{"role": "user", "content": "cut \\ud83d"}])
    [{'role': 'user', 'content': 'cut \ufffd'}]
    """
    def fix(text: Any) -> Any:
        if not isinstance(text, str) or text.isascii():
            return text
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return text

    return [{k: fix(v) for k, v in m.items()} for m in messages]


class _DaemonThreads(Executor):
    """Runs each call on a daemon thread of its own: a synchronous generator that hangs past
    the job's ``deadline`` keeps neither the job nor the interpreter's exit waiting for it
    (``ThreadPoolExecutor`` threads are joined when the interpreter exits).

    Examples
    --------
    >>> _DaemonThreads().submit(sum, [1, 2]).result()
    3
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=work, name="fasteval-judge", daemon=True).start()
        return future


def judge_prompts(generator: Any, prompts: Sequence[str], parse: Callable[[str | None], dict[str, Any]],
                  **options: Any) -> JobReport:
    """Synchronous :func:`judge_prompts_async`; works from scripts and inside a running event loop.

    The generator's ``run`` is called (on up to ``max_concurrency`` worker threads), never its
    ``run_async``: what a synchronous Haystack component does, so a patched ``run`` is honoured.

    Examples
    --------
    >>> from fasteval.judge.parsing import make_parser
    >>> class Echo:                      # a tiny fasteval chat generator
    ...     def run(self, messages):
    ...         return '{"score": %d}' % len(messages[0]["content"])
    >>> report = judge_prompts(Echo(), ["a", "bb"], make_parser(["score"]))
    >>> [o.result for o in report.outcomes]
    [{'score': 1}, {'score': 2}]
    """

    from fasteval.judge.tracing import current_span

    # a synchronous caller gets the generator's own ``run`` (threads give the concurrency)
    options.setdefault("prefer_async", False)
    options.setdefault("trace_parent", current_span())  # this thread's span, not the loop's
    return run_sync(lambda: judge_prompts_async(generator, prompts, parse, **options))
