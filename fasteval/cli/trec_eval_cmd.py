"""``fasteval trec-eval``: a drop-in for the trec_eval 10 command line.

Prints byte for byte what trec_eval prints: ``%-22s\\t%s\\t%6.4f`` lines, integer counts,
trec_eval's measure order, ``runid`` and ``relstring``. ``--compat 9`` reproduces 9.0.8
(the version pytrec_eval embeds): scores held as single-precision floats, recall-point
rounding, no rbp/unj in ``all_trec``, and ``-c`` without printing the missing topics.

Usage::

    fasteval trec-eval [-q] [-n] [-c] [-J] [-l N] [-M N] [-N N] [-m MEASURE]... [-Z FILE]
                       [-R qrels|qrels_jg|prefs|qrels_prefs] [-T trec_results]
                       [--compat 9|10] QRELS RUN

trec_eval's long names work too (--query_eval_wanted, --nosummary, --measure=..., and
the others), as do unique abbreviations of them (--nosum). ``-o`` (trec_eval's obsolete
old-format switch) is accepted and ignored, as trec_eval 10 ignores it.
"""

from __future__ import annotations

import getopt
import io
import math
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np
import polars as pl

from fasteval._words import one_line
from fasteval.cli import add_command, worded
from fasteval.errors import InputError, ParameterError, UnknownMeasureError
from fasteval.measures import Measure, parse_measures, trec_order
from fasteval.measures.aggregate import summary
from fasteval.measures.parser import DEFAULT_SET
from fasteval.measures.registry import BY_KEY

USAGE = __doc__.split("Usage::", 1)[1].strip("\n")

# -R qrels_jg measures: computed per judgment group with the base family, then averaged.
_AVGJG = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}


# trec_eval's nickname "set" (measures.c set_names): its members without a ranking, taken
# as bare family names (a -m name.params of one of them sets its parameters)
_SET_NAMES = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
              "set_recall", "set_relative_P", "set_map", "set_F"]


@dataclass
class Options:
    per_query: bool = False
    summary: bool = True
    complete: bool = False
    judged_only: bool = False
    level: int = 1
    max_docs: int | None = None
    num_docs: int = 0
    measures: list[str] = field(default_factory=list)
    zscores: str | None = None
    rel_format: str = "qrels"
    res_format: str = "trec_results"
    compat: int = 10
    files: list[str] = field(default_factory=list)


def _int_opt(flag: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ParameterError(flag, "an integer", value) from None


# trec_eval's getopt_long names (trec_eval.c), as the short flags they stand for
_LONG_FLAGS = {
    "--help": "-h", "--version": "-v", "--query_eval_wanted": "-q", "--measure": "-m",
    "--complete_rel_info_wanted": "-c", "--level_for_rel": "-l", "--nosummary": "-n",
    "--Judged_docs_only": "-J", "--Number_docs_in_coll": "-N", "--Max_retrieved_per_topic": "-M",
    "--Rel_info_format": "-R", "--Results_format": "-T", "--Zscore": "-Z",
}
_LONG = [name[2:] + ("=" if short[1] in "mlNMRTZ" else "") for name, short in _LONG_FLAGS.items()]


def parse_args(argv: list[str]) -> Options:
    """Parse trec_eval's getopt-style flags (``-l2``, ``-mP.5``, ``-qc`` all work)."""
    try:
        pairs, rest = getopt.gnu_getopt(argv, "hvqncJol:M:N:m:Z:R:T:", ["compat=", *_LONG])
    except getopt.GetoptError as exc:
        raise ParameterError(
            "trec-eval option", "one of -q -n -c -J -o -l -M -N -m -Z -R -T", str(exc)
        ) from None
    o = Options()
    for flag, value in pairs:
        flag = _LONG_FLAGS.get(flag, flag)
        if flag in ("-h", "--help"):
            raise SystemExit(_print_usage())
        elif flag == "-v":
            print("fasteval trec-eval (trec_eval 10.0 compatible)")
            raise SystemExit(0)
        elif flag == "-o":
            pass  # trec_eval 10 accepts -o (the old output format) and ignores it
        elif flag == "-q":
            o.per_query = True
        elif flag == "-n":
            o.summary = False
        elif flag == "-c":
            o.complete = True
        elif flag == "-J":
            o.judged_only = True
        elif flag == "-l":
            o.level = _int_opt("-l", value)
        elif flag == "-M":
            o.max_docs = _int_opt("-M", value)
        elif flag == "-N":
            o.num_docs = _int_opt("-N", value)
            if not 0 <= o.num_docs < 2**63:
                raise ParameterError("-N", "an integer from 0 to 2**63 - 1 (the collection size)",
                                     value)
        elif flag == "-m":
            o.measures.append(value)
        elif flag == "-Z":
            o.zscores = value
        elif flag == "-R":
            o.rel_format = value
        elif flag == "-T":
            o.res_format = value
        elif flag == "--compat":
            if value not in ("9", "10"):
                raise ParameterError("--compat", "9 or 10", value)
            o.compat = int(value)
    if o.rel_format not in ("qrels", "qrels_jg", "prefs", "qrels_prefs"):
        raise ParameterError("-R", "one of qrels, qrels_jg, prefs, qrels_prefs", o.rel_format)
    if o.res_format != "trec_results":
        raise ParameterError("-T", "trec_results", o.res_format)
    if o.zscores is not None and o.rel_format != "qrels":
        # z-scores are converted for -R qrels measures only: elsewhere -Z has no meaning
        raise ParameterError("-Z", f"used with -R qrels (z-scores of -R {o.rel_format} "
                             "measures are not computed)", o.zscores)
    if o.max_docs is not None and o.max_docs <= 0:
        raise ParameterError("-M", "a positive integer", o.max_docs)
    if not 0 <= o.level < 2**31:
        raise ParameterError("-l", "an integer from 0 to 2147483647", o.level)
    if len(rest) != 2:
        raise ParameterError("trec-eval arguments", "exactly two files: QRELS RUN", rest)
    o.files = rest
    return o


def _print_usage() -> int:
    print(USAGE)
    return 0


def _fmt(name: str, qid: str, value: float, integer: bool) -> str:
    """One line of trec_eval's output (``%-22s\\t%s\\t%6.4f``, or the integer); a control
    character or line break in the name or the query id is written as an escape
    (:func:`fasteval._words.one_line`), so that no id forges lines or drives the terminal.

    Examples
    --------
    >>> _fmt("map", "q1", 0.25, False), _fmt("num_ret", "q\\x1b[2J", 3.0, True)
    ('map                   \\tq1\\t0.2500', 'num_ret               \\tq\\\\x1b[2J\\t3')
    """
    name, qid = one_line(name), one_line(qid)
    if integer:
        return f"{name:<22}\t{qid}\t{int(value)}"
    if math.isnan(value):
        # C's printf keeps the NaN's sign: 0.0 / 0.0 on x86 gives "-nan", a NaN read from
        # text (a z-score file's "nan") gives "nan"
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return f"{name:<22}\t{qid}\t{text:>6}"
    return f"{name:<22}\t{qid}\t{value:6.4f}"


def _plan(o: Options) -> tuple[list[Measure], bool, list[tuple[str, Measure]]]:
    """(trec measures in output order, print runid?, avgjg measures as (name, base))."""
    names = o.measures or [DEFAULT_SET]  # trec_eval without -m
    runid = False
    avgjg: list[tuple[str, Measure]] = []
    jg_parts: list[tuple[str, str]] = []  # (key, -m text) of the judgment-group averages
    plain: list[str] = []
    for name in names:
        # trec_eval cuts a nickname's ".params" off and ignores them (official.5)
        nick = name.partition(".")[0]
        parts = _SET_NAMES if nick == "set" else [name]
        for part in parts:
            if nick in ("official", "all_trec", "qrels_jg", "set") or part == "runid":
                runid = True
            if part == "runid":
                continue
            if nick == "qrels_jg":
                plain.append("num_q")
                jg_parts.extend((key, key) for key in _AVGJG)
                continue
            jg = next((k for k in _AVGJG if part == k or part.startswith(k + ".")), None)
            if jg is not None:
                jg_parts.append((jg, part))
                continue
            plain.append(part)
    # trec_eval's table order (map_avgjg, P_avgjg, Rprec_mult_avgjg), not the -m order; the
    # first key.params of each sets its parameters, over the bare key or qrels_jg
    for key in _AVGJG:
        asked = [part for k, part in jg_parts if k == key]
        given_params = [_avgjg_members(key, part) for part in asked if part != key]
        if asked:
            avgjg.extend((key, m) for m in (given_params[0] if given_params
                                            else _avgjg_members(key, key)))
    # like trec_eval, the first -m name.params of a family sets its parameters, over a set
    # or a bare name, before or after it (-m all_trec -m relstring.20: relstring_20;
    # -m P.5 -m P.10: P_5 alone); a set only adds families; other spellings (P_5,
    # ndcg@10, which trec_eval does not know) add their members whatever else is asked
    by_family: dict[str, list[Measure]] = {}
    given: set[str] = set()  # families whose parameters a name.params set
    members: list[Measure] = []  # asked for by a member's own spelling
    for part in plain:
        with_params = "." in part and part.partition(".")[0] in BY_KEY
        if not with_params and part not in BY_KEY and part not in ("official", "all_trec"):
            members += [m for m in parse_measures(part, trec_eval_syntax=True)
                        if m not in members]
            continue
        groups: dict[str, list[Measure]] = {}
        for m in parse_measures(part, trec_eval_syntax=True):
            groups.setdefault(m.family, []).append(m)
        for fam, ms in groups.items():
            if fam in given or (part in ("official", "all_trec") and fam in by_family):
                continue
            if with_params:
                given.add(fam)
                by_family[fam] = ms
            else:
                by_family[fam] = by_family.get(fam, []) + [
                    m for m in ms if m not in by_family.get(fam, [])]
    measures = [m for ms in by_family.values() for m in ms]
    measures += [m for m in members if m not in measures]
    if o.compat == 9:
        # 9.0.8 has no rbp, rbp_resid or unj: all_trec goes without them; named, they are
        # refused, as 9.0.8 refuses them ("illegal measure"), not left out
        for part in plain:
            if part.partition(".")[0] in ("official", "all_trec", "set"):
                continue
            with warnings.catch_warnings():  # the parse above has given them
                warnings.simplefilter("ignore")
                new = [m.family for m in parse_measures(part, trec_eval_syntax=True)
                       if "v10" in BY_KEY[m.family].sets]
            if new:
                raise ParameterError(
                    "-m with --compat 9", f"a measure trec_eval 9.0.8 has ({new[0]} came with "
                    "trec_eval 10)", part)
        measures = [m for m in measures if "v10" not in BY_KEY[m.family].sets]
    return trec_order(measures), runid, avgjg


def _avgjg_members(key: str, part: str) -> list[Measure]:
    """The base measures of the judgment-group average ``key`` asked for as ``part``
    (``P_avgjg.5,10``: P_5 and P_10); errors and warnings name ``part`` as written."""
    spelled = _AVGJG[key] + part[len(key):]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            members = parse_measures(spelled, trec_eval_syntax=True)
    except UnknownMeasureError as exc:
        raise UnknownMeasureError(str(exc).replace(repr(spelled), repr(part), 1)) from None
    for w in caught:
        text = str(w.message).replace(repr(spelled), repr(part), 1)
        warnings.warn(text.replace(f"of {_AVGJG[key]} (", f"of {key} (", 1), w.category,
                      stacklevel=4)
    return members


_ASCII_WS = re.compile(r"[ \t\r\n\x0b\x0c]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)",
                      re.IGNORECASE)


def _read_zscores(path: str) -> dict[tuple[str, str], tuple[float, float]]:
    from fasteval.io._common import fmt_value as _shown

    out: dict[tuple[str, str], tuple[float, float]] = {}
    try:
        with open(path, encoding="utf-8-sig") as fh:  # -sig: a byte order mark is dropped
            for lineno, line in enumerate(fh, 1):
                f = _ASCII_WS.split(line.strip(" \t\r\n\x0b\x0c"))  # C's isspace, as trec_eval
                if f == [""] or line.startswith("#"):
                    continue
                if len(f) != 4:
                    raise InputError(
                        f"expected 4 fields (qid measure mean stddev), got {len(f)}",
                        source=path, line=lineno,
                    )
                # decimal numbers as strtod reads them; float() would also read "1_000" and
                # other scripts' digits, which atof reads in part
                bad = [v for v in f[2:] if not _DECIMAL.fullmatch(v)]
                if bad:
                    raise InputError(f"mean and stddev must be numbers, got {_shown(bad[0])}",
                                     source=path, line=lineno)
                out[(f[0], f[1])] = (float(f[2]), float(f[3]))
    except FileNotFoundError:
        raise InputError("file not found", source=path) from None
    except IsADirectoryError:
        raise InputError("is a directory; expected a z-score file", source=path) from None
    except UnicodeDecodeError:
        raise InputError("not valid UTF-8 text", source=path) from None
    if not out:
        # trec_eval refuses an empty file too ("Cannot read zscores file"); every value
        # would otherwise print as a z-score of 0
        raise InputError("no z-score lines (qid measure mean stddev); the file is empty "
                         "or holds only comments", source=path)
    return out


def _relstring(labels: np.ndarray, s: int, e: int, length: int) -> str:
    out = []
    for v in labels[s : min(e, s + max(length, 0))]:
        if v > 9:
            out.append(">")
        elif v >= 0:
            out.append(chr(48 + int(v)))
        elif v == -1:
            out.append("-")
        elif v == -2:
            out.append(".")
        else:
            out.append("<")
    return "".join(out)


def _read_qrels_jg(path: str) -> pl.DataFrame:
    """qrels_jg text: ``qid jg docno rel`` (the judgment group replaces ``iter``)."""
    from fasteval.io._common import fmt_value as shown

    rows = []
    # read once (a FIFO cannot be read again), then decompressed if gzip
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", source=path) from None
    except FileNotFoundError:
        raise InputError("file not found", source=path) from None
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", source=path) from None
    if data[:2] == b"\x1f\x8b":  # inflated as a stream, checked as it comes
        from fasteval.io.inflate import inflate_bytes

        data = inflate_bytes(data, path)
    from fasteval.io._common import GRADE_MAX, GRADE_MIN, check_text_encoding, fix_line_endings

    check_text_encoding(data, path)
    data = fix_line_endings(data, path)
    seen: dict[tuple[str, str, str], int] = {}
    data = data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark
    ascii_ws = b" \t\r\x0b\x0c"  # C-locale isspace, as trec_eval and the qrels reader
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        if raw.startswith(b"#") or not raw.strip(ascii_ws):
            continue
        f = [t.decode("utf-8", "surrogateescape") for t in re.split(rb"[ \t\r\x0b\x0c]+", raw.strip(ascii_ws))]
        if len(f) != 4:
            raise InputError(f"expected 4 fields (qid jg docno rel), got {len(f)}",
                             source=path, line=lineno)
        # ASCII digits, a zero fraction allowed (atol agrees on those); int() would also
        # read "1_0" as 10 and other scripts' digits, where atol reads 1 and 0
        whole = re.fullmatch(r"([+-]?[0-9]+)(?:\.0*)?", f[3])
        if whole is None:
            raise InputError(f"relevance is not an integer: {shown(f[3])}", source=path,
                             line=lineno, column="relevance")
        # more digits than any 32-bit grade has are out of range (int() refuses thousands)
        digits = whole.group(1).lstrip("+-").lstrip("0")
        rel = int(whole.group(1)) if len(digits) <= 40 else None
        if rel is None or not GRADE_MIN <= rel <= GRADE_MAX:
            value = whole.group(1)[:40] + "..." if rel is None else rel
            raise InputError(f"relevance {value} is outside the 32-bit range of grades "
                             f"({GRADE_MIN} to {GRADE_MAX})", source=path, line=lineno,
                             column="relevance")
        key = (f[0], f[1], f[2])
        if key in seen:
            raise InputError(f"document {shown(f[2])} is judged twice for query "
                             f"{shown(f[0])} in judgment group {shown(f[1])} (first on line "
                             f"{seen[key]})", source=path, line=lineno, column="doc_id")
        seen[key] = lineno
        rows.append((f[0], f[1], f[2], rel))
    if not rows:
        raise InputError("no judgments in file", source=path)
    return pl.DataFrame(rows, schema=["query_id", "jg", "doc_id", "relevance"], orient="row")


def _run_source(run_path: str):
    """The run file, or standard input for ``-`` (trec_eval's rule: the run only)."""
    if run_path != "-":
        return run_path
    if sys.stdin is None or sys.stdin.closed:
        raise InputError("standard input is closed; expected the run on it", source="-")
    return sys.stdin


def _buffered(source: str | TextIO, run_path: str) -> io.BytesIO:
    """The whole content of ``source`` (an open stream, or the path of a FIFO or device) in
    memory, named as the readers name the source in their errors."""
    if isinstance(source, str):
        data = Path(source).read_bytes()
        name = source
    else:
        data = source.buffer.read() if hasattr(source, "buffer") else source.read()
        if isinstance(data, str):
            data = data.encode()
        name = getattr(source, "name", None)
        name = name if isinstance(name, str) else run_path
    buf = io.BytesIO(data)
    buf.name = name  # type: ignore[attr-defined]
    return buf


def _read_trec_run(o: Options, run_path: str, tie_docno_desc: bool = True,
                   judged: Callable[[], pl.Series] | None = None) -> pl.DataFrame:
    """The run file. trec_eval looks for a document ranked twice only among the documents
    it evaluates (form_res_rels.c): with -M, each topic's top -M; with ``judged`` (the
    judged topics, asked for only when the run has a duplicate), the topics it judges.
    A duplicate outside them is no error, and the rows outside them are dropped.
    ``tie_docno_desc``: the tie order of the measures (doc id descending; the preference
    measures rank ties ascending)."""
    from fasteval.io.readers import read_once_only, read_run

    source = _run_source(run_path)
    if source is not run_path or read_once_only(run_path):
        # standard input, a FIFO or a device can be read only once, and a duplicate is
        # looked at on a second reading: its bytes are kept, under its own name
        source = _buffered(source, run_path)
    try:
        return read_run(source, format="trec")
    except InputError as exc:
        if exc.advice != "keep_best_run" or (o.max_docs is None and judged is None):
            raise
        first = exc
    if isinstance(source, io.BytesIO):
        source.seek(0)
    run = read_run(source, format="trec", duplicates="ignore").with_row_index("_row")
    tag = run.get_column("tag")[-1]
    if judged is not None:
        run = run.filter(pl.col("query_id").is_in(judged().implode()))
    if o.max_docs is not None:
        # trec_eval's order (score descending, ties by docno byte-wise; 9.0.8 holds scores
        # as single-precision floats): the top -M rows of each topic, in file order
        score = pl.col("score").cast(pl.Float32) if o.compat == 9 else pl.col("score")
        top = (run.sort([pl.col("query_id"), score, pl.col("doc_id")],
                        descending=[False, True, tie_docno_desc], maintain_order=True)
               .filter(pl.int_range(pl.len()).over("query_id") < o.max_docs)
               .get_column("_row").sort())
        run = run.filter(pl.col("_row").is_in(top.implode()))
    later = ~run.select(pl.struct("query_id", "doc_id").is_first_distinct()).to_series()
    if later.any():  # a document twice among those evaluated: trec_eval stops too
        row = run.row(int(later.arg_true()[0]), named=True)
        raise _duplicate_at(first, source, row) from None
    # the last line's tag is the runid, though that line may be cut
    return run.drop("_row").with_columns(pl.lit(tag).alias("tag"))


def _duplicate_at(first: InputError, source: str | io.BytesIO, row: dict) -> InputError:
    """The reader's duplicate error ``first`` moved to ``row`` (a later copy of a pair,
    ``_row`` its data row in the file), with that row's file line."""
    from fasteval.io._common import fix_line_endings
    from fasteval.io._common import fmt_value as shown
    from fasteval.io.readers import load_bytes
    from fasteval.io.trec import data_line_numbers

    what = f"duplicate (query_id, doc_id) pair ({shown(row['query_id'])}, {shown(row['doc_id'])})"
    if what == first.what:
        return first
    if isinstance(source, io.BytesIO):
        data: str | bytes = source.getvalue()
        if data[:2] == b"\x1f\x8b":
            from fasteval.io.inflate import inflate_bytes

            data = inflate_bytes(data, str(first.source))
    else:
        data = load_bytes(source, source)
    data = fix_line_endings(data, str(first.source))  # old-Mac (CR-only) lines as the reader reads them
    line = int(data_line_numbers(data, "run", str(first.source))[row["_row"]])
    return InputError(what, advice=first.advice, source=first.source, line=line)


def _prefs_v9(lines: list, missing: set[str], n_topics: int, o: Options) -> list:
    """trec_eval 9.0.8's preference lines from 10's with every judged topic evaluated
    (``-c``): the topics the run lacks are not evaluated (nor printed); the counts sum over
    the others, and the means divide by them, or by every judged topic with ``-c``."""
    kept = [line for line in lines if line[1] != "all" and line[1] not in missing]
    n = n_topics if o.complete else n_topics - len(missing)
    out = kept if o.per_query else []
    if not o.summary:
        return out
    for name, qid, value in lines:
        if qid != "all":
            continue
        if name == "num_q":
            value = n
        elif name != "runid":
            mine = [v for m, _, v in kept if m == name]
            if isinstance(value, (int, np.integer)):
                value = int(sum(mine))
            else:
                acc = 0.0
                for v in mine:  # topic order, as trec_eval accumulates
                    acc += float(v)
                value = acc / n if n else 0.0
        out.append((name, qid, value))
    return out


def _topic_stop(o: Options, qids: list[str], present: np.ndarray) -> int:
    """trec_eval's stops on the topics the run answers (``qids``: the qrels topics in
    order, ``present``: which of them the run has), as its exit status; 0 to go on.

    10.0 loops over the qrels topics: without -c the first one the run lacks stops it (4).
    9.0.8 loops over the run's topics: when none of them has judgments it stops (7), -c
    or not (the check counts the topics evaluated, before -c widens the average)."""
    if o.compat == 10 and not o.complete and not present.all():
        missing = qids[int(np.argmax(~present))]
        print(f"trec_eval: result qid '{one_line(missing)}' not found in qrels", file=sys.stderr)
        return 4
    if o.compat == 9 and not present.any():
        print("trec_eval: No queries with both results and relevance info", file=sys.stderr)
        return 7
    return 0


def _put(out: TextIO, text: str) -> None:
    """Write ``text`` to ``out``; on standard output a failed write (a full disk, a closed
    descriptor) is an :class:`~fasteval.errors.OutputError` naming it."""
    if out is sys.stdout:
        from fasteval.io.atomic import write_stdout

        write_stdout(text)
    else:
        out.write(text)


def run_trec_eval(o: Options, out: TextIO | None = None) -> int:
    """Evaluate and print to ``out`` (``sys.stdout`` at the time of the call); returns the
    exit status."""
    if out is None:
        out = sys.stdout
    from fasteval.evaluation import Evaluator
    from fasteval.io.readers import read_qrels

    qrels_path, run_path = o.files
    if qrels_path == "-":
        raise InputError("standard input holds the run only, as in trec_eval; give the "
                         "qrels as a file", source="-")
    if o.rel_format in ("prefs", "qrels_prefs"):
        return _run_prefs(o, qrels_path, run_path, out)
    measures, print_runid, avgjg = _plan(o)
    qrels_table: list[pl.DataFrame] = []

    def qrels() -> pl.DataFrame:
        """The judgments, read once: when the run has a duplicate (to know the judged
        topics, whose documents trec_eval checks), else after the run."""
        if not qrels_table:
            qrels_table.append(_read_qrels_jg(qrels_path) if o.rel_format == "qrels_jg"
                               else read_qrels(qrels_path, format="trec"))
        return qrels_table[0]

    run = _read_trec_run(o, run_path, judged=lambda: qrels().get_column("query_id"))
    runid = one_line(str(run.get_column("tag")[-1])) if "tag" in run.columns and run.height else ""
    opts = dict(
        relevance_level=o.level, max_docs=o.max_docs, judged_only=o.judged_only,
        num_docs=o.num_docs, compat=o.compat,
    )
    numeric = [m for m in measures if m.family != "relstring"]
    if o.rel_format == "qrels_jg":
        _check_jg_measures(o, measures)
        return _run_jg(o, qrels(), run, runid, numeric, print_runid, avgjg, opts, out)
    if avgjg:
        # trec_eval computes the judgment-group averages from qrels_jg judgments only (with
        # others it stops: "Can't calculate measure 'map_avgjg'"): refused, not left out
        named = ", ".join(dict.fromkeys(key for key, _ in avgjg))
        raise ParameterError(
            "-R", f"qrels_jg with -m {named} (judgment-group averages are computed from "
            "qrels_jg judgments only)", o.rel_format,
        )
    ev = Evaluator(qrels(), numeric or ["num_q"], complete=True,
                   **opts)
    batch = ev.prepare(run.select("query_id", "doc_id", "score"), complete=True)
    values = (ev.score(batch, trec_eval_names=True) if numeric
              else np.zeros((len(batch.qidx), 0)))
    qids = [str(q) for q in ev.qrels.query_ids.gather(batch.qidx).to_list()]
    stop = _topic_stop(o, qids, batch.present)
    if stop:
        return stop
    keep = batch.present if (not o.complete or o.compat == 9) else np.ones(len(qids), dtype=bool)
    zs = _read_zscores(o.zscores) if o.zscores else None
    z_values = _zscore(values, numeric, qids, zs) if zs is not None else values
    prefix = "Z" if zs is not None else ""
    lines = (_query_lines(measures, numeric, qids, keep, batch, z_values, prefix)
             if o.per_query else [])
    if o.summary:  # -n: trec_eval's print_final steps print nothing
        if print_runid:
            lines.append(_fmt("runid", "all", 0, True).replace("\t0", "\t" + runid, 1))
        rows = keep if o.compat == 10 or not o.complete else np.ones(len(qids), dtype=bool)
        lines += _summary_lines(o, numeric, z_values, rows, prefix, ev)
    _put(out, "".join(line + "\n" for line in lines))
    return 0


def _run_prefs(o: Options, qrels_path: str, run_path: str, out: TextIO) -> int:
    """trec-eval with preference judgments (``-R prefs`` / ``-R qrels_prefs``)."""
    from fasteval.prefs import evaluate_prefs

    run = _read_trec_run(o, run_path, tie_docno_desc=False)
    # trec_eval's topic loop is the same for preference judgments: 10 stops at the first
    # judged topic the run lacks (without -c); 9.0.8 leaves such topics out. Then every
    # judged topic is evaluated once (the judgments are read once: a FIFO cannot be read
    # again), and the lines are cut to what trec_eval prints
    cut = o.compat == 9 or not o.complete
    lines = evaluate_prefs(
        qrels_path, run, mode=o.rel_format, measures=o.measures or None,
        per_query=cut or o.per_query, max_docs=o.max_docs, complete=True, summary=cut or o.summary,
    )
    if cut:
        qids = sorted({qid for _, qid, _ in lines if qid != "all"})
        answered = set(run.get_column("query_id").cast(pl.Utf8).to_list())
        stop = _topic_stop(o, qids, np.array([q in answered for q in qids], dtype=bool))
        if stop:
            return stop
        missing = [q for q in qids if q not in answered]
        if missing:  # --compat 9 only
            lines = _prefs_v9(lines, set(missing), len(qids), o)
        else:  # every judged topic answered: -c changes nothing
            lines = [line for line in lines if (o.summary if line[1] == "all" else o.per_query)]
    _put(out, "".join(
        f"{one_line(name):<22}\t{one_line(qid)}\t{one_line(value)}\n" if isinstance(value, str)
        else _fmt(name, qid, value, isinstance(value, (int, np.integer))) + "\n"
        for name, qid, value in lines))
    return 0


def _check_jg_measures(o: Options, measures: list[Measure]) -> None:
    """trec_eval computes no other measure from qrels_jg judgments (they stop it with
    "Can't calculate measure"): refused, not left out of the output."""
    other = [m.name for m in measures if m.family != "num_q"]
    if other:
        shown = ", ".join(other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3 else "")
        if not o.measures:  # trec_eval's default set, official, is not for qrels_jg
            raise ParameterError(
                "-R qrels_jg", "used with -m qrels_jg (or num_q, map_avgjg, P_avgjg, "
                "Rprec_mult_avgjg): the default measures, official, are not computed "
                "from qrels_jg judgments", "no -m")
        raise ParameterError(
            "-m with -R qrels_jg", "num_q, map_avgjg, P_avgjg, Rprec_mult_avgjg or qrels_jg "
            "(no other measure is computed from qrels_jg judgments)", shown,
        )


def _query_lines(measures: list[Measure], numeric: list[Measure], qids: list[str],
                 keep: np.ndarray, batch, z_values: np.ndarray, prefix: str) -> list[str]:
    """trec_eval's per-query lines (``-q``) of the topics ``keep`` marks."""
    lines: list[str] = []
    for qi, qid in enumerate(qids):
        if not keep[qi]:
            continue
        for m in measures:
            if m.spec.scope == "summary":
                continue
            if m.family == "relstring":
                s, e = batch.offsets[qi], batch.offsets[qi + 1]
                rs = _relstring(batch.labels, int(s), int(e), int(m.cutoff))
                if not batch.present[qi] and m.base_name == "relstring":
                    # trec_eval 10 clears the placeholder's string (-c) only when the
                    # measure is named exactly "relstring": relstring.N keeps its "-"
                    rs = ""
                lines.append(f"{one_line(m.base_name):<22}\t{one_line(qid)}\t'{rs}'")
                continue
            v = z_values[qi, numeric.index(m)]
            lines.append(prefix + _fmt(m.base_name, qid, v, m.spec.integer and not prefix))
    return lines


def _summary_lines(o: Options, numeric: list[Measure], z_values: np.ndarray, rows: np.ndarray,
                   prefix: str, ev) -> list[str]:
    """trec_eval's summary lines (qid ``all``) over the topics ``rows`` marks."""
    lines = []
    for j, m in enumerate(numeric):
        if m.spec.scope == "query":
            continue
        if m.family == "num_q":
            v = float(rows.sum())
        elif m.family == "num_rel" and o.complete:
            # trec_eval's -c average of num_rel recounts the qrels (grade > 0), over the
            # accumulated values, z-scores included (-Z -c prints that count as Znum_rel)
            v = float(ev.qrels.num_rel_all())
        else:
            v = summary(z_values[rows, j], m.spec.agg)
        lines.append(prefix + _fmt(m.base_name, "all", v, m.spec.integer and not prefix))
    return lines


MISSING_ZSCORE = -1000000.0
"""trec_eval's ``MISSING_ZSCORE_VALUE``: the z-score of a value the file cannot convert."""


def _zscore(values, measures, qids, zs):
    """trec_eval's ``te_convert_to_zscore``: ``(value - mean) / stddev``; a (query, measure)
    pair missing from the file, or a zero deviation with the value off the mean, gives
    :data:`MISSING_ZSCORE` (printed, and averaged into the summary, as trec_eval does); a
    zero deviation at the mean gives 0."""
    z = np.full_like(values, MISSING_ZSCORE)
    for qi, qid in enumerate(qids):
        for j, m in enumerate(measures):
            ms = zs.get((qid, m.base_name))
            if ms is None:
                continue
            mean, sd = ms
            if sd != 0.0:
                z[qi, j] = (values[qi, j] - mean) / sd
            elif values[qi, j] == mean:
                z[qi, j] = 0.0
    return z


def _run_jg(o, jq, run, runid, numeric, print_runid, avgjg, opts, out) -> int:
    from fasteval.evaluation import Evaluator

    # num_q alone still needs a pass to find the queries the run answers
    bases = [m for _, m in avgjg] or parse_measures("num_q")
    groups = jq.partition_by("jg", maintain_order=True, as_dict=True)
    all_q = jq.get_column("query_id").unique().sort()
    sums = np.zeros((len(all_q), len(bases)))
    counts = np.zeros(len(all_q))
    present_any = np.zeros(len(all_q), dtype=bool)
    table = run.select("query_id", "doc_id", "score")
    for _, g in groups.items():
        ev = Evaluator(g.select("query_id", "doc_id", "relevance"), bases, complete=True, **opts)
        batch = ev.prepare(table, complete=True)
        vals = ev.score(batch)
        idx = all_q.search_sorted(ev.qrels.query_ids.gather(batch.qidx)).to_numpy()
        sums[idx] += vals
        counts[idx] += 1
        present_any[idx] |= batch.present
    avg = sums / np.maximum(counts, 1)[:, None]
    qids = [str(q) for q in all_q.to_list()]
    stop = _topic_stop(o, qids, present_any)
    if stop:
        return stop
    # 9.0.8 prints only the topics it evaluated, and -c divides by every qrels topic
    keep = present_any if not o.complete or o.compat == 9 else np.ones(len(all_q), dtype=bool)
    n_avg = len(all_q) if o.complete else int(keep.sum())
    names = [f"{key}{m.base_name[len(m.family):]}" for key, m in avgjg]
    lines = [_fmt(nm, qid, avg[qi, j], False) for qi, qid in enumerate(qids) if keep[qi]
             for j, nm in enumerate(names)] if o.per_query else []
    if o.summary:  # -n: no summary lines
        if print_runid:
            lines.append(f"{'runid':<22}\tall\t{runid}")
        if any(m.family == "num_q" for m in numeric):
            lines.append(_fmt("num_q", "all", float(n_avg), True))
        for j, nm in enumerate(names):
            lines.append(_fmt(nm, "all", summary(avg[keep, j], "sum") / max(n_avg, 1), False))
    _put(out, "".join(line + "\n" for line in lines))
    return 0


_ADVICE = {
    "keep_best_run": "a document is ranked once per query (trec_eval stops here too)",
    "keep_best_qrels": "a document is judged once per query (trec_eval stops here too)",
}
"""The readers' advice (:data:`fasteval.errors.ADVICE`) in this command's terms: it has no
duplicates option (trec_eval quits on a duplicate document)."""


def main(argv: list[str]) -> int:
    """Entry point used by ``fasteval trec-eval``."""
    try:
        o = parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    with worded(_ADVICE):  # (a closed output pipe: the dispatcher's PIPE_CLOSED)
        return run_trec_eval(o)


def add_parser(subparsers) -> None:  # pragma: no cover - parsed by main() directly
    add_command(subparsers, "trec-eval")


def run(args) -> int:  # pragma: no cover - see main()
    return main([])
