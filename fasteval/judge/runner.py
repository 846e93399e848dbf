"""Judge many prompts concurrently: cache lookup, request (through one :class:`Backend` for
any kind of chat generator), parse, one corrective retry."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any

from fasteval.errors import OutputError, ParameterError
from fasteval.judge.aio import run_sync
from fasteval.judge.cache import ReplyCache, endpoint_key
from fasteval.judge.errors import JudgeError, ReplyParseError
from fasteval.judge.openai_sdk import as_chat_generator
from fasteval.judge.parsing import correction_message
from fasteval.judge.protocol import (
    ChatReply,
    MessageDict,
    _is_haystack_style,
    _to_chat_messages,
    normalize_reply,
)
from fasteval.judge.tracing import active_tracer, chat_span, current_span, set_output
from fasteval.progress import Progress
from fasteval.redact import generator_secrets, redact, redact_http_logs

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

    usage = ChatReply.usage  # the numeric counts of ``meta["usage"]``


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


class Backend:
    """Uniform async access to a fasteval or Haystack chat generator.

    Parameters
    ----------
    generator : object
        A fasteval chat generator (e.g. :class:`~fasteval.judge.client.OpenAIChatClient`), a
        Haystack chat generator, or an ``openai.OpenAI`` / ``AsyncOpenAI`` client object.
    executor : Executor, optional
        Where synchronous ``run`` calls go (so they still run concurrently).
    prefer_async : bool
        ``True`` (for ``run_async`` callers): use the generator's ``run_async`` when it has
        one. ``False`` (for synchronous callers): always its ``run``, on ``executor``'s
        threads, as Haystack's synchronous ``run`` does; a patched or mocked ``run`` is
        therefore what gets called. (fasteval's own client, whose ``run`` only waits for its
        ``run_async``, is awaited directly unless its ``run`` was replaced.)
    trace_parent : span, optional
        Parent of the ``haystack.chat_generator.run`` spans (see :mod:`fasteval.judge.tracing`);
        default: the span active where the backend is made.

    Examples
    --------
    >>> class Both:
    ...     def run(self, messages):
    ...         return "sync"
    ...     async def run_async(self, messages):
    ...         return "async"
    >>> async def ask(backend):
    ...     return (await backend.call([{"role": "user", "content": "hi"}])).text
    >>> asyncio.run(ask(Backend(Both()))), asyncio.run(ask(Backend(Both(), prefer_async=False)))
    ('async', 'sync')
    """

    def __init__(self, generator: Any, executor: Executor | None = None, *,
                 prefer_async: bool = True, trace_parent: Any = None) -> None:
        generator = as_chat_generator(generator)  # an openai.OpenAI / AsyncOpenAI client object
        if not callable(getattr(generator, "run", None)):
            raise ParameterError(
                "chat_generator", "an object with a run(messages) method", type(generator).__name__
            )
        self.generator = generator
        self.executor = executor
        self.haystack_style = _is_haystack_style(generator)
        run_async = getattr(generator, "run_async", None)
        if not (callable(run_async) and inspect.iscoroutinefunction(run_async)):
            run_async = None
        if not prefer_async and not _run_awaits_run_async(generator):
            run_async = None
        self._run_async: Callable[..., Any] | None = run_async
        self._tracer = active_tracer()
        if self._tracer is not None and trace_parent is None:
            trace_parent = self._tracer.current_span()
        self._trace_parent = trace_parent

    def cache_namespace(self) -> dict[str, Any]:
        """What, besides the messages, determines a reply: model, generation settings and
        the server the generator calls (its ``api_base_url``, ``base_url``, ``azure_endpoint``
        or ``url``)."""
        gen = self.generator
        custom = getattr(gen, "cache_namespace", None)
        if callable(custom):
            return dict(custom())
        model = getattr(gen, "model", None) or getattr(gen, "model_name", None)
        kwargs = getattr(gen, "generation_kwargs", None) or {}
        kwargs = {k: v for k, v in dict(kwargs).items() if k != "response_format"}
        server = next((v for a in _ENDPOINT_ATTRIBUTES if (v := getattr(gen, a, None)) is not None), None)
        return {
            "model": str(model) if model is not None else type(gen).__qualname__,
            "params": json.loads(json.dumps(kwargs, sort_keys=True, default=str)),
            **endpoint_key(server),
        }

    async def call(self, messages: list[dict[str, str]]) -> ChatReply:
        """Send ``messages``; return the first reply."""
        payload: Any = (_to_chat_messages(messages) if self.haystack_style
                        else [MessageDict(m) for m in messages])
        tracer = self._tracer
        if self._run_async is not None:
            if tracer is None:
                result = await self._run_async(messages=payload)
            else:
                with chat_span(tracer, self.generator, payload, self._trace_parent) as span:
                    result = await self._run_async(messages=payload)
                    set_output(span, result)
        else:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self.executor, self._run_sync, payload)
        return normalize_reply(result)

    def _run_sync(self, payload: Any) -> Any:
        tracer = self._tracer
        if tracer is None:
            return self.generator.run(messages=payload)
        with chat_span(tracer, self.generator, payload, self._trace_parent) as span:
            result = self.generator.run(messages=payload)
            set_output(span, result)
        return result


def _run_awaits_run_async(generator: Any) -> bool:
    """Whether ``generator.run`` is fasteval's client's own ``run``, which only waits for
    ``run_async`` on a background loop (so awaiting ``run_async`` is the same call)."""
    if type(generator).__module__ != "fasteval.judge.client" or "run" in vars(generator):
        return False
    run = getattr(type(generator), "run", None)  # patched or mocked: another function, or none
    return (getattr(run, "__module__", None) == "fasteval.judge.client"
            and getattr(run, "__qualname__", None) == "OpenAIChatClient.run")


_ENDPOINT_ATTRIBUTES = ("api_base_url", "base_url", "azure_endpoint", "url")
"""Where a chat generator names its server (Haystack's OpenAI, Azure, ... generators)."""


async def judge_prompts_async(generator: Any, prompts: Sequence[str],
                              parse: Callable[[str | None], dict[str, Any]], *,
                              expected_keys: Sequence[str] = (), max_concurrency: int = 8,
                              cache: ReplyCache | str | None = None, corrective_retry: bool = True,
                              raise_on_failure: bool = True, progress_bar: bool = False,
                              desc: str | None = None, deadline: float | None = None,
                              prefer_async: bool = True, trace_parent: Any = None) -> JobReport:
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
    :func:`fasteval.redact.redact`: an API key echoed by a server, a URL's password
    or a bearer token never reach them.
    """
    check_job_limits(max_concurrency, deadline)
    if cache is not None and not isinstance(cache, ReplyCache):
        cache = ReplyCache(cache)
    started = time.perf_counter()
    job = _Job(generator, prompts, parse, cache, expected_keys=expected_keys, max_concurrency=max_concurrency,
               corrective_retry=corrective_retry, prefer_async=prefer_async, trace_parent=trace_parent)
    bar = Progress(len(prompts), desc, "rows", enabled=progress_bar)
    outcomes = await job.run(bar, deadline, raise_on_failure)
    return JobReport([o if o is not None else RowOutcome(error="not run") for o in outcomes],
                     time.perf_counter() - started)


def check_job_limits(max_concurrency: Any, deadline: Any) -> None:
    """Refuse a ``max_concurrency`` or ``deadline`` of :func:`judge_prompts_async` out of range.

    Examples
    --------
    >>> check_job_limits(8, None)
    >>> check_job_limits(0, None)
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: max_concurrency must be an integer >= 1, got 0
    """
    if not isinstance(max_concurrency, int) or isinstance(max_concurrency, bool) or max_concurrency < 1:
        raise ParameterError("max_concurrency", "an integer >= 1", max_concurrency)
    if deadline is not None and not (
        isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and 0 < deadline < float("inf")
    ):
        raise ParameterError("deadline", "a positive number of seconds or None", deadline)


class _Job:
    """What the rows of one :func:`judge_prompts_async` job share: the backend, the cache,
    the limit on requests in flight, and the prompts that a row is judging now."""

    def __init__(self, generator: Any, prompts: Sequence[str],
                 parse: Callable[[str | None], dict[str, Any]], cache: ReplyCache | None, *,
                 expected_keys: Sequence[str], max_concurrency: int, corrective_retry: bool,
                 prefer_async: bool, trace_parent: Any) -> None:
        self.prompts, self.parse, self.cache = prompts, parse, cache
        self.expected_keys, self.corrective_retry = expected_keys, corrective_retry
        executor = _DaemonThreads()  # at most max_concurrency calls at once: the semaphore
        self.backend = Backend(generator, executor, prefer_async=prefer_async, trace_parent=trace_parent)
        self.namespace = self.backend.cache_namespace() if cache is not None else {}
        self.semaphore = asyncio.Semaphore(max_concurrency)
        self.secrets = generator_secrets(generator)
        self.unwritable: list[BaseException] = []  # the first failed cache write, warned about once
        self.in_flight: dict[str, asyncio.Future] = {}  # cache key -> the accepted record of its first row
        self.accepted: dict[str, dict[str, Any]] = {}  # cache key -> the record its first row accepted
        redact_http_logs(self.secrets)  # the generator's HTTP client may log its URLs
        if cache is not None:  # said before the first request, not after the first reply
            try:
                cache.check_writable()
            except (OSError, OutputError) as exc:
                self.cache_failed(exc)

    def cache_failed(self, exc: BaseException) -> None:
        """Warn, once per job, that replies are not kept: the cache's folder cannot be
        written (a full or read-only disk must not lose the judgements; the job goes on)."""
        if not self.unwritable:
            self.unwritable.append(exc)
            logger.warning("the reply cache in %s cannot be written (%s): replies are not cached",
                           self.cache.directory, exc)

    def failure(self, text: str) -> str:
        return redact(text, self.secrets)

    async def call(self, messages: list[dict[str, str]], outcome: RowOutcome) -> ChatReply:
        async with self.semaphore:
            outcome.requests += 1
            reply = await self.backend.call(_sendable(messages))
        usage = outcome.usage
        for k, v in reply.usage.items():
            usage[k] = usage.get(k, 0) + v
        outcome.meta = {**reply.meta, "usage": usage}
        return reply

    def from_record(self, record: dict[str, Any] | None) -> RowOutcome | None:
        """The outcome of a stored reply (no request made); None when it no longer parses."""
        if record is None:
            return None
        try:
            result = self.parse(record["text"])
        except ReplyParseError:
            return None  # stale or corrupt entry: judge again and overwrite it
        return RowOutcome(result=result, cached=True, corrected=bool(record.get("corrected")),
                          meta=dict(record.get("meta") or {}))

    async def one(self, index: int) -> tuple[int, RowOutcome]:
        """Row ``index`` through the cache: a prompt that an earlier row of this job is judging
        waits for that row's reply (one request for both) instead of sending its own."""
        if self.cache is None:
            return index, await self.judge(index, "")
        key = ReplyCache.key(self.namespace, [{"role": "user", "content": self.prompts[index]}])
        leader = self.in_flight.get(key)
        if leader is not None:
            outcome = self.from_record(await asyncio.shield(leader))
            if outcome is not None:
                return index, outcome
            return index, await self.judge(index, key)  # the earlier row failed: this one tries itself
        self.in_flight[key] = leader = asyncio.get_running_loop().create_future()
        try:
            return index, await self.judge(index, key)
        finally:  # later rows of this prompt find it in the cache
            del self.in_flight[key]
            leader.set_result(self.accepted.pop(key, None))

    async def judge(self, index: int, key: str) -> RowOutcome:
        """Row ``index``: its cached reply, else a request; an accepted reply is cached."""
        cache = self.cache
        if cache is not None:
            record = cache.get(key)
            outcome = self.from_record(record)
            if outcome is not None:
                self.accepted[key] = record
                return outcome
        outcome = RowOutcome()
        text = await self.ask([{"role": "user", "content": self.prompts[index]}], outcome)
        if cache is not None and outcome.error is None:
            self.accepted[key] = record = {"text": text, "corrected": outcome.corrected, "meta": outcome.meta}
            try:
                cache.put(key, record)
            except (OSError, OutputError) as exc:
                self.cache_failed(exc)
        return outcome

    async def ask(self, messages: list[dict[str, str]], outcome: RowOutcome) -> str | None:
        """Send ``messages`` and parse the reply into ``outcome.result``, asking once more
        after an unusable reply (``corrective_retry``); a failure goes to ``outcome.error``.
        Returns the accepted reply's text."""
        try:
            reply = await self.call(messages, outcome)
        except ParameterError:
            raise  # configuration error (e.g. no API key): fail the job, not the row
        except Exception as exc:
            outcome.error = self.failure(f"request failed: {type(exc).__name__}: {exc}")
            return None
        text = reply.text
        try:
            outcome.result = self.parse(text)
        except ReplyParseError as first:
            if not self.corrective_retry:
                outcome.error = self.failure(f"unusable reply: {first}")
                return None
            follow_up = messages + [
                {"role": "assistant", "content": text or ""},
                {"role": "user", "content": correction_message(str(first), self.expected_keys)},
            ]
            try:
                reply = await self.call(follow_up, outcome)
            except Exception as exc:
                outcome.error = self.failure(
                    f"unusable reply: {first}; corrective request failed: {type(exc).__name__}: {exc}")
                return None
            text = reply.text
            try:
                outcome.result = self.parse(text)
            except ReplyParseError as second:
                outcome.error = self.failure(f"unusable reply: {first}; after the corrective retry: {second}")
                return None
            outcome.corrected = True
        return text

    async def run(self, bar: Progress, deadline: float | None, raise_on_failure: bool) -> list[RowOutcome | None]:
        """Every row, at most ``max_concurrency`` requests in flight; the outcomes in input order
        (``None`` for a row not run)."""
        outcomes: list[RowOutcome | None] = [None] * len(self.prompts)
        tasks = [asyncio.ensure_future(self.one(i)) for i in range(len(self.prompts))]
        loop = asyncio.get_running_loop()
        end = None if deadline is None else loop.time() + deadline
        try:
            pending: set[asyncio.Future] = set(tasks)
            while pending:
                wait = None if end is None else max(0.0, end - loop.time())
                done, pending = await asyncio.wait(pending, timeout=wait,
                                                   return_when=asyncio.FIRST_COMPLETED)
                if not done:  # the job's deadline: what is still running fails
                    self.late(outcomes, deadline, raise_on_failure)
                    break
                finished = [fut.result() for fut in done]  # a configuration error propagates
                for i, outcome in sorted(finished, key=lambda item: item[0]):
                    outcomes[i] = outcome
                    bar.update(1)
                    if outcome.result is None and raise_on_failure:
                        prompt = self.prompts[i]
                        raise JudgeError(self.failure(f"row {i}: {outcome.error} (prompt: {prompt[-300:]!r})"))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            bar.close()
        return outcomes

    def late(self, outcomes: list[RowOutcome | None], deadline: Any, raise_on_failure: bool) -> None:
        """The job's deadline passed: the rows not judged fail (or the job, ``raise_on_failure``)."""
        late = sum(o is None for o in outcomes)
        message = f"the job's deadline ({deadline:g} s) passed before this row was judged"
        if raise_on_failure:
            raise JudgeError(f"{message}: {late} of {len(self.prompts)} rows unfinished")
        for k, o in enumerate(outcomes):
            if o is None:
                outcomes[k] = RowOutcome(error=message)


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
    # a synchronous caller gets the generator's own ``run`` (threads give the concurrency)
    options.setdefault("prefer_async", False)
    options.setdefault("trace_parent", current_span())  # this thread's span, not the loop's
    return run_sync(lambda: judge_prompts_async(generator, prompts, parse, **options))
