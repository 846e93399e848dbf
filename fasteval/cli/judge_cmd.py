"""``fasteval judge faithfulness|context-relevance INPUT -o OUT``: LLM-judged columns for a table.

Reads a table (parquet, JSON lines, JSON, CSV), judges every row against an OpenAI-compatible
chat-completions server, and writes the input columns plus the per-row results. Replies are
cached (``--cache-dir``), so a job that was interrupted resumes where it stopped and a rerun
only repeats failed rows. A summary (rows, failures, cache hits, requests, tokens) goes to stderr.
Result columns: ``statements`` and ``statement_scores`` (faithfulness) or ``relevant_statements``
(context relevance) as the model wrote them (statements as text, scores as floats), ``score``,
``status``, ``error`` and ``cached``.
Failed rows get a NaN score and their reason in ``error``; stderr says how many failed. The exit
status is 0 when at least one row was judged, 1 when every row failed (the table is written all
the same) or the job stopped at a failed row (``--raise-on-failure``), 2 for a usage error.

Examples
--------
::

    fasteval judge faithfulness rag.parquet --question-col question --contexts-col contexts \\
        --answer-col answer --base-url http://127.0.0.1:8000/v1 --model qwen2.5-7b-instruct \\
        --max-concurrency 32 -o judged.parquet
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from fasteval.cli import add_command
from fasteval.errors import InputError, OutputError, ParameterError, require_extra
from fasteval.io import _json

DEFAULT_MAX_REPLY_BYTES = 8 * 2**20  # fasteval.judge.client.DEFAULT_MAX_REPLY_BYTES (not imported: httpx-free help)

def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``judge`` and its two metrics."""
    parser = add_command(
        subparsers, "judge",
        "Judge each row of a table with an LLM served by any OpenAI-compatible server.",
    )
    metrics = parser.add_subparsers(dest="metric", metavar="METRIC")
    metrics.required = True
    for name, help_text in (
        ("faithfulness", "share of each answer's statements supported by its contexts"),
        ("context-relevance", "1 when the contexts hold sentences that help answer the question, else 0"),
    ):
        sub = metrics.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("input", metavar="INPUT", help="table: .parquet, .jsonl/.ndjson, .json or .csv; - reads standard input")
        sub.add_argument("-o", "--output", required=True, metavar="OUT",
                         help="output table (.parquet or .jsonl), written atomically")
        sub.add_argument("--question-col", default="question", help="column of questions (default: question)")
        sub.add_argument("--contexts-col", default="contexts",
                         help="column of context lists; strings holding a JSON list are decoded (default: contexts)")
        if name == "faithfulness":
            sub.add_argument("--answer-col", default="answer", help="column of predicted answers (default: answer)")
        sub.add_argument("--base-url", default=None,
                         help="server root, e.g. http://127.0.0.1:8000/v1 (default: $OPENAI_BASE_URL or OpenAI)")
        sub.add_argument("--model", default="gpt-5-mini", help="model name (default: gpt-5-mini)")
        sub.add_argument("--api-key-env", default="OPENAI_API_KEY",
                         help="environment variable holding the API key (default: OPENAI_API_KEY)")
        sub.add_argument("--max-concurrency", type=int, default=8, help="rows in flight at once (default: 8)")
        sub.add_argument("--requests-per-minute", type=float, default=None, help="client-side request rate limit")
        sub.add_argument("--tokens-per-minute", type=float, default=None, help="client-side token rate limit")
        sub.add_argument("--timeout", type=float, default=60.0,
                         help="seconds per HTTP request, reading the whole reply included (default: 60)")
        sub.add_argument("--max-retries", type=int, default=5, help="retries on 429/5xx/timeouts (default: 5)")
        sub.add_argument("--max-retry-wait", type=float, default=300.0, metavar="SECONDS",
                         help="longest wait honoured from a server's Retry-After header (default: 300)")
        sub.add_argument("--deadline", type=float, default=None, metavar="SECONDS",
                         help="seconds the whole job may take; rows not judged by then fail "
                              "(a rerun judges them; default: no limit)")
        sub.add_argument("--max-reply-bytes", type=int, default=DEFAULT_MAX_REPLY_BYTES, metavar="N",
                         help="largest reply read from the server; a larger one fails its row "
                              f"(default: {DEFAULT_MAX_REPLY_BYTES}, 8 MiB)")
        sub.add_argument("--temperature", type=float, default=None, help="sampling temperature")
        sub.add_argument("--seed", type=int, default=42, help="sampling seed sent to the server (default: 42)")
        sub.add_argument("--max-tokens", type=int, default=None, help="reply length limit")
        sub.add_argument("--no-json-mode", action="store_true",
                         help="do not send response_format=json_object")
        sub.add_argument("--examples", default=None, metavar="FILE",
                         help="JSON file with few-shot examples replacing the defaults")
        sub.add_argument("--cache-dir", default=None,
                         help="reply cache (default: $FASTEVAL_CACHE_DIR/judge or ~/.cache/fasteval/judge)")
        sub.add_argument("--no-cache", action="store_true", help="neither read nor write the reply cache")
        sub.add_argument("--raise-on-failure", action="store_true",
                         help="stop at the first failed row (default: record it and go on)")
        sub.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def _read_table(path: str) -> Any:
    from fasteval.io.files import read_table_file

    return read_table_file(path, default=None)


def _strings(df: Any, column: str, source: str) -> list[str]:
    if column not in df.columns:
        raise InputError(f"column not found; available columns: {df.columns}", source=source, column=column)
    values = df.get_column(column).to_list()
    for row, value in enumerate(values):
        if value is None:
            raise InputError("missing value (null); every row needs one", source=source, row=row, column=column)
    return [v if isinstance(v, str) else str(v) for v in values]


def _contexts(df: Any, column: str, source: str) -> list[list[str]]:
    if column not in df.columns:
        raise InputError(f"column not found; available columns: {df.columns}", source=source, column=column)
    out: list[list[str]] = []
    for row, value in enumerate(df.get_column(column).to_list()):
        if value is None:
            out.append([])
        elif isinstance(value, str):
            try:
                decoded = _json.loads(value)
            except ValueError:
                decoded = [value]
            if isinstance(decoded, str):
                decoded = [decoded]
            if not isinstance(decoded, list):
                raise InputError(f"expected a list of strings, got {value!r}", source=source, row=row, column=column)
            out.append([str(v) for v in decoded if v is not None])
        elif isinstance(value, (list, tuple)):
            out.append([str(v) for v in value if v is not None])
        else:
            raise InputError(f"expected a list of strings, got {value!r}", source=source, row=row, column=column)
    return out


def _build_evaluator(args: argparse.Namespace) -> Any:
    from fasteval.evaluators.llm import ContextRelevanceEvaluator, FaithfulnessEvaluator
    from fasteval.judge.cache import default_cache_dir
    from fasteval.judge.client import OpenAIChatClient

    if args.max_concurrency < 1:
        raise ParameterError("--max-concurrency", "an integer >= 1", args.max_concurrency)
    generation: dict[str, Any] = {}
    if args.seed is not None:
        generation["seed"] = args.seed
    if args.temperature is not None:
        generation["temperature"] = args.temperature
    if args.max_tokens is not None:
        generation["max_tokens"] = args.max_tokens
    try:
        client = OpenAIChatClient(
            model=args.model, base_url=args.base_url, api_key_env=args.api_key_env or None,
            json_mode=not args.no_json_mode, generation_kwargs=generation, timeout=args.timeout,
            max_retries=args.max_retries, max_retry_after=args.max_retry_wait,
            max_reply_bytes=args.max_reply_bytes, requests_per_minute=args.requests_per_minute,
            tokens_per_minute=args.tokens_per_minute,
        )
    except ParameterError as exc:  # named as on the command line
        raise ParameterError(_OPTION_NAMES.get(exc.parameter, exc.parameter), exc.constraint,
                             exc.value) from None
    examples = None
    if args.examples:
        try:
            examples = _json.loads(Path(args.examples).read_text(encoding="utf-8"))
        except _json.JsonDepthError as exc:
            raise _json.input_error(exc, args.examples) from None
        except ValueError as exc:
            raise InputError(f"not valid JSON: {exc}", source=args.examples) from exc
    cache_dir = None if args.no_cache else (args.cache_dir or default_cache_dir())
    cls = FaithfulnessEvaluator if args.metric == "faithfulness" else ContextRelevanceEvaluator
    try:
        return cls(
            examples=examples, progress_bar=not args.no_progress, raise_on_failure=args.raise_on_failure,
            chat_generator=client, max_concurrency=args.max_concurrency, cache_dir=cache_dir,
            deadline=args.deadline,
        )
    except ValueError as exc:
        if isinstance(exc, ParameterError):
            raise ParameterError(_OPTION_NAMES.get(exc.parameter, exc.parameter), exc.constraint,
                                 exc.value) from None
        raise InputError(str(exc), source=args.examples or "examples") from exc


_OPTION_NAMES = {
    "model": "--model", "base_url": "--base-url", "timeout": "--timeout",
    "max_retries": "--max-retries", "max_retry_after": "--max-retry-wait",
    "max_reply_bytes": "--max-reply-bytes", "requests_per_minute": "--requests-per-minute",
    "tokens_per_minute": "--tokens-per-minute", "deadline": "--deadline",
    "max_concurrency": "--max-concurrency", "api_key_env": "--api-key-env",
}


def _text_list(value: Any) -> list[str | None]:
    """A reply's statements as a list of text: strings as they are, other items (numbers,
    objects) as JSON; a single string is a list of one (the evaluator keeps replies as the
    model wrote them and scores them as Haystack does, which takes any non-empty value).

    Examples
    --------
    >>> _text_list(["a", 1, None]), _text_list("one"), _text_list({"k": 1})
    (['a', '1', None], ['one'], ['{"k": 1}'])
    """
    def text(v: Any) -> str | None:
        return _utf8(v if isinstance(v, str) or v is None else json.dumps(v, ensure_ascii=False, default=str))

    if isinstance(value, (list, tuple)):
        return [text(v) for v in value]
    return [text(value)]


def _utf8(text: str | None) -> str | None:
    """``text`` as UTF-8 can hold it: a surrogate pair written as two escapes becomes its
    character, a lone surrogate (a cut emoji's ``\\ud83d``) becomes U+FFFD (the output
    tables cannot hold it).

    Examples
    --------
    >>> _utf8("cut \\ud83d"), _utf8("\\ud83d\\ude00"), _utf8(None)
    ('cut \ufffd', '\U0001f600', None)
    """
    if text is None or text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _number_list(value: Any) -> list[float]:
    """A reply's statement scores as floats (the evaluator took their mean, so they are
    numbers: 0/1, fractions, booleans, or one number alone).

    Examples
    --------
    >>> _number_list([1, 0]), _number_list([0.5, True]), _number_list(1)
    ([1.0, 0.0], [0.5, 1.0], [1.0])
    """
    import numpy as np

    return np.asarray(value, dtype=np.float64).ravel().tolist()


def _check_output(path: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in (".parquet", ".jsonl", ".ndjson"):
        raise ParameterError("-o/--output", "a .parquet, .jsonl or .ndjson path", path)
    return suffix


def _write(df: Any, path: str) -> None:
    from fasteval.io.atomic import atomic_path

    suffix = _check_output(path)
    with atomic_path(path) as tmp:
        if suffix == ".parquet":
            df.write_parquet(tmp)
        else:
            df.write_ndjson(tmp)


def _check_outputs(args: argparse.Namespace) -> None:
    """Check every place the job writes before a row is read or a request paid for: the
    output (its format, never over an input, writable: :func:`check_outputs`) and the
    reply cache folder (``--cache-dir`` or the default), refused when it cannot be
    written: a job that cannot keep its replies would pay for them again on every rerun.
    ``--no-cache`` judges without one."""
    from fasteval.io.atomic import check_outputs

    _check_output(args.output)
    check_outputs({"-o/--output": args.output}, [args.input, args.examples])
    if args.no_cache:
        return
    from fasteval.judge.cache import ReplyCache, default_cache_dir

    folder = args.cache_dir or default_cache_dir()
    try:
        ReplyCache(folder).check_writable()
    except OutputError as exc:
        raise ParameterError("--cache-dir", f"a folder the judge can write ({exc.problem}; pass "
                             "--no-cache to judge without the reply cache)", str(folder)) from None


def run(args: argparse.Namespace) -> int:
    """Judge the table and write the results; returns the exit status."""
    from fasteval.judge.errors import JudgeError

    require_extra("llm", "fasteval judge", load=True)  # before any row is read or sent
    _check_outputs(args)
    df = _read_table(args.input)
    inputs = _inputs(df, args)
    evaluator = _build_evaluator(args)
    try:
        out = evaluator.run(**inputs)
    except ParameterError as exc:  # found at the first request (the key's value): named as an option
        if type(exc) is not ParameterError or exc.parameter not in _OPTION_NAMES:
            raise
        raise ParameterError(_OPTION_NAMES[exc.parameter], exc.constraint, exc.value) from None
    except JudgeError as exc:
        summary = evaluator.last_report.summary() if evaluator.last_report else None
        print(f"fasteval judge: stopped at a failed row: {exc}", file=sys.stderr)
        if summary:
            print(f"fasteval judge: {summary}", file=sys.stderr)
        return 1
    meta = out["meta"] or [{} for _ in out["results"]]
    columns = _result_columns(args.metric, out["results"], meta)
    replaced = [c for c in columns if c in df.columns]
    if replaced:
        print(f"fasteval judge: input columns {replaced} are replaced by the results", file=sys.stderr)
    _write(df.with_columns(**columns), args.output)
    return _report(args, evaluator.last_report.summary(), out["score"], meta)


def _inputs(df: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The evaluator's inputs from the table's columns (an error at a row names the file's line)."""
    try:
        inputs: dict[str, Any] = {
            "questions": _strings(df, args.question_col, args.input),
            "contexts": _contexts(df, args.contexts_col, args.input),
        }
        if args.metric == "faithfulness":
            inputs["predicted_answers"] = _strings(df, args.answer_col, args.input)
    except InputError as exc:  # a table row: the file's line for text files, as elsewhere
        if exc.row is None:
            raise
        from fasteval.io.files import table_file_locator

        raise exc.at(**{"row": None, **table_file_locator(args.input)(exc.row)}) from None
    return inputs


def _result_columns(metric: str, results: list[dict[str, Any]], meta: list[dict[str, Any]]) -> dict[str, Any]:
    """The result columns added to the table: the metric's statements, score, status, error, cached."""
    import polars as pl

    columns: dict[str, pl.Series] = {}
    if metric == "faithfulness":
        columns["statements"] = pl.Series([_text_list(r["statements"]) for r in results],
                                          dtype=pl.List(pl.Utf8))
        columns["statement_scores"] = pl.Series([_number_list(r["statement_scores"]) for r in results],
                                                dtype=pl.List(pl.Float64))
    else:
        columns["relevant_statements"] = pl.Series([_text_list(r["relevant_statements"]) for r in results],
                                                   dtype=pl.List(pl.Utf8))
    columns["score"] = pl.Series([float(r["score"]) for r in results], dtype=pl.Float64)
    columns["status"] = pl.Series([r["status"] for r in results], dtype=pl.Utf8)
    columns["error"] = pl.Series([_utf8(m.get("error")) for m in meta], dtype=pl.Utf8)
    columns["cached"] = pl.Series([bool(m.get("cached")) for m in meta], dtype=pl.Boolean)
    return columns


def _report(args: argparse.Namespace, s: dict[str, Any], mean: Any, meta: list[dict[str, Any]]) -> int:
    """Print the job's summary (and the commonest reasons rows failed); the exit status."""
    mean_text = "nan" if mean is None or (isinstance(mean, float) and math.isnan(mean)) else f"{mean:.4f}"
    print(
        f"{args.metric}: {s['rows']} rows, {s['evaluated']} evaluated, {s['failed']} failed; "
        f"mean score {mean_text} (failed rows excluded)\n"
        f"requests {s['requests']} ({s['corrected']} rows needed a corrective retry), cache hits {s['cache_hits']}; "
        f"tokens: prompt {s['prompt_tokens']}, completion {s['completion_tokens']}; {s['seconds']:.1f} s\n"
        f"wrote {args.output}",
        file=sys.stderr,
    )
    if s["failed"]:
        reasons: dict[str, int] = {}
        for m in meta:
            if m.get("error"):
                key = m["error"][:120]
                reasons[key] = reasons.get(key, 0) + 1
        for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:5]:
            print(f"  {n} x {reason}", file=sys.stderr)
        print(f"fasteval judge: {s['failed']} of {s['rows']} rows failed (score NaN, status "
              "'error'); rerun to judge them again (accepted rows come from the cache)",
              file=sys.stderr)
        if s["failed"] == s["rows"]:  # nothing judged: the job failed, whatever was written
            return 1
    return 0
