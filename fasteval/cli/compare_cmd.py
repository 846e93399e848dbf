"""``fasteval compare QRELS RUN RUN ... -m MEASURE``: paired significance tests between runs.

Scores the runs (or reads per-query results written by ``fasteval eval -q`` with
``--results``, so nothing is scored twice), then prints a paper-style table of means with
significance marks and a list of the comparisons, or writes it (``-o``, atomically) as
Markdown, LaTeX (booktabs), HTML, CSV or parquet. Runs on the base install (scipy is a
dependency); only ``--plot`` needs an extra (matplotlib: ``pip install ".[plot]"``), and is
refused up front without it.

Plots never change the statistics: the tested family (what the multiple-testing correction
counts) is the ``-m`` measures (with ``--results``: ``-m``, else every measure of the files),
whatever is plotted. Scoring runs, ``--plot cutoffs`` draws each ``-m`` measure that has a
rank cutoff at k = 1 to 1000 (:data:`fasteval.compare.plots.PLOT_CUTOFFS`) and ``--plot pr``
draws ``iprec_at_recall_0.00 .. 1.00``, both evaluated for the plot alone; ``--plot
cutoffs`` without such a measure (``-m map`` alone) is refused before anything is read,
naming what it needs (``-m ndcg@10``). With ``--results`` the two plots draw the measures
the files hold, and files without them are refused before the comparison.

Examples
--------
>>> from fasteval.cli import main
>>> main(["compare", "qrels.txt", "bm25.txt", "dense.txt", "-m", "ndcg@10", "-m", "map",
...       "--baseline", "bm25", "--test", "t", "--test", "randomization"])  # doctest: +SKIP
0
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, get_args

from fasteval.cli import STDIN, add_command, check_format_agrees, input_source, stdin_once, worded
from fasteval.errors import InputError, ParameterError
from fasteval.options import (
    Alternative,
    CiMethod,
    Correction,
    CorrectionFamily,
    Marks,
    MeasureNames,
    Missing,
    ZeroMethod,
)

FORMATS = ("table", "markdown", "latex", "html", "csv", "parquet")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``fasteval compare``."""
    p = add_command(
        subparsers,
        "compare",
        (
            "Compare runs with paired significance tests (t-test, Wilcoxon, sign, randomization, "
            "bootstrap, Tukey HSD), multiple-testing correction and effect sizes. Give QRELS "
            "and two or more RUNs to score them, or --results with per-query result files "
            "from `fasteval eval -q` (long or --wide; parquet, CSV, JSON, JSONL, the text "
            "table) or trec_eval -q output (.trec, .eval, .txt)."
        ),
    )
    for flags, options in _ARGUMENTS:
        p.add_argument(*flags, **options)
    return p


def _ci_level(text: str) -> float | None:
    """``--ci``: a number, or ``none`` for no confidence interval (range checked later)."""
    if text.strip().lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or none, got {text!r}") from None


_ARGUMENTS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("inputs",), dict(metavar="QRELS RUN", nargs="*",
        help="qrels file followed by run files; one of them may be - (standard input)")),
    (("--results",), dict(nargs="+", metavar="FILE", default=None,
        help="per-query result files instead of QRELS/RUNs (a file without run_id is named by "
             "its stem, or its file name or path where stems repeat); - reads one from standard "
             "input (named stdin), whose format, as a FIFO's without a suffix, its first bytes tell")),
    (("-m", "--measure"), dict(action="append", default=[], metavar="MEASURE",
        help="measure to compare (repeatable; any spelling the parser knows: ndcg@10, map, P_5). "
             "Required with QRELS/RUNs; with --results the default is every measure in the files")),
    (("--baseline",), dict(metavar="NAME",
        help="compare every run against this one (default: all pairs)")),
    (("--test",), dict(action="append", default=[], metavar="TEST",
        help="t, wilcoxon, sign, randomization, bootstrap (bootstrap-t), tukey (topic-blocked HSD), "
             "randomized-tukey (repeatable; default: t, randomization, bootstrap)")),
    (("--correction",), dict(default="holm", choices=get_args(Correction),
        help="multiple-testing correction within each --family (holm); by (Benjamini-Yekutieli) "
             "controls the FDR under any dependence; maxt (Dunnett-style "
             "with --baseline) and stepdown (Westfall-Young) need --test randomization alone")),
    (("--family",), dict(default="report", choices=get_args(CorrectionFamily),
        help="correction family: every comparison of the report, or per measure")),
    (("--alternative",), dict(default="two-sided", choices=get_args(Alternative),
        help="greater: a run scores higher than the one it is compared with (two-sided)")),
    (("--ci-method",), dict(default="t", choices=get_args(CiMethod),
        help="bootstrap interval of mean differences and run means: bootstrap-t, BCa or "
             "percentile (t)")),
    (("--zero-method",), dict(default="wilcox", choices=get_args(ZeroMethod),
        help="Wilcoxon: drop zero differences (wilcox) or rank them (pratt)")),
    (("--continuity",), dict(action="store_true",
        help="Wilcoxon: continuity correction of the normal approximation")),
    (("--alpha",), dict(type=float, default=0.05, help="significance level (0.05)")),
    (("--resamples",), dict(type=str, default="10000", metavar="N",
        help="randomization and bootstrap resamples, e.g. 10000 or 1e5 (10000)")),
    (("--seed",), dict(type=int, default=0, help="seed of the resampling draws (0)")),
    (("--ci",), dict(type=_ci_level, default=0.95,
        help="bootstrap confidence level of the mean difference (0.95); none: no interval "
             "(no bootstrap unless --test bootstrap)")),
    (("--missing",), dict(choices=get_args(Missing), default="drop",
        help="queries absent from some run: drop them from every run, or score them 0")),
    (("--mark-test",), dict(default=None, metavar="TEST",
        help="test whose adjusted p-values mark the table (default: the first --test)")),
    (("--marks",), dict(choices=get_args(Marks), default=None,
        help="significance marks (default: dagger with --baseline, else letters)")),
    (("--digits",), dict(type=int, default=4, help="decimals in the table (4)")),
    (("--names",), dict(choices=get_args(MeasureNames), default="display",
        help="measure names in the table: as papers write them (nDCG@10) or canonical "
             "(ndcg_cut_10)")),
    (("--no-caption",), dict(action="store_true",
        help="LaTeX: a bare tabular with the notes as comments instead of a table with a caption")),
    (("--label",), dict(default=None, help="LaTeX: \\label of the table")),
    (("--format",), dict(choices=FORMATS, default=None,
        help="output format (default: from the -o suffix, else table)")),
    (("-o", "--output"), dict(metavar="OUT",
        help="write the report here (atomically) instead of stdout")),
    (("--details",), dict(metavar="FILE",
        help="also write every comparison (tests + effects) as CSV or parquet")),
    (("--plot",), dict(action="append", default=[], metavar="KIND=PATH",
        help="write a plot (PNG/SVG/PDF; needs matplotlib: pip install \".[plot]\"): "
             "differences, distributions, cutoffs (measure@k curves) or pr (interpolated "
             "precision-recall); repeatable, e.g. --plot differences=diff.png. A plot never changes "
             "the statistics: scoring runs, cutoffs draws each -m measure with a cutoff at k = 1 to "
             "1000 and pr draws iprec_at_recall, both evaluated for the plot alone (not tested, not "
             "in the correction); with --results they draw the measures the files hold")),
    (("-l", "--relevance-level"), dict(type=int, default=1, metavar="N",
        help="grade at or above which a document is relevant (1)")),
    (("-c", "--complete"), dict(action="store_true",
        help="qrels queries missing from a run score 0 (as trec_eval -c)")),
    (("-J", "--judged-only"), dict(action="store_true",
        help="drop unjudged documents first (trec_eval -J)")),
)


def _plots(specs: list[str]) -> list[tuple[str, str]]:
    """``(kind, path)`` of each ``--plot``, checked (matplotlib, kind, image suffix) before
    anything is read or written."""
    from fasteval.compare.plots import PLOTS, check_path, require_plotting

    if specs:
        require_plotting("--plot")
    out = []
    for spec in specs:
        kind, sep, path = spec.partition("=")
        if not sep or kind not in PLOTS or not path:
            raise ParameterError("--plot", f"KIND=PATH with KIND one of {', '.join(PLOTS)}", spec)
        check_path(path, f"--plot {kind}")
        out.append((kind, path))
    return out


_PLOT_NEEDS = {
    "cutoffs": "--results files holding one measure at two or more cutoffs (e.g. ndcg_cut_5 "
               "and ndcg_cut_10, from fasteval eval -q -m ndcg@5 -m ndcg@10)",
    "pr": "--results files holding iprec_at_recall_0.00 .. iprec_at_recall_1.00 (from "
          "fasteval eval -q -m iprec_at_recall)",
}


def _check_plot_data(plots: list[tuple[str, str]], names: list[str]) -> None:
    """Refuse, before the comparison, a plot of ``--results`` files that do not hold what it
    draws (a plot of scored runs evaluates its own measures: :func:`_plot_results`).

    Examples
    --------
    >>> _check_plot_data([("cutoffs", "c.png")], ["map", "P_5"])
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: --plot cutoffs must be used with --results files holding one measure at two or more cutoffs (e.g. ndcg_cut_5 and ndcg_cut_10, from fasteval eval -q -m ndcg@5 -m ndcg@10), got ['map', 'P_5']
    """
    from fasteval.compare.plots import check_data

    for kind, _ in plots:
        try:
            check_data(kind, names)
        except InputError:
            shown = names if len(names) <= 12 else [*names[:12], "..."]
            raise ParameterError(f"--plot {kind}", f"used with {_PLOT_NEEDS[kind]}",
                                 shown) from None


def _plot_results(plots: list[tuple[str, str]], measures: list[str], score_more):
    """The per-query results the ``cutoffs`` and ``pr`` plots of scored runs draw: their
    own measures (:func:`fasteval.compare.plots.plot_measures`), evaluated apart from the
    compared ones, so that a plot never enters the tested family; None when no plot needs
    any. ``score_more(measures)`` evaluates the runs again."""
    from fasteval.compare.plots import plot_measures

    wanted: dict[str, None] = {}
    for kind, _ in plots:
        wanted.update(dict.fromkeys(plot_measures(kind, measures)))
    return score_more(list(wanted)) if wanted else None


def _count(option: str, text: str) -> int:
    """A count given as ``10000`` or ``1e4``; anything else is a :class:`ParameterError`."""
    try:
        value = float(text)
        if value != int(value):
            raise ValueError(text)
    except (ValueError, OverflowError):
        raise ParameterError(option, "a whole number such as 10000 or 1e4", text) from None
    return int(value)


_OPTION_NAMES = {"tests": "--test", "alpha": "--alpha", "ci": "--ci", "n_resamples": "--resamples",
                 "seed": "--seed", "mark_test": "--mark-test", "correction": "--correction",
                 "family": "--family", "alternative": "--alternative", "baseline": "--baseline",
                 "measures": "-m/--measure", "ci_method": "--ci-method",
                 "zero_method": "--zero-method", "relevance_level": "-l/--relevance-level"}


#: the Python API's words for a value the command spells otherwise
_CLI_WORDS = {"ci": ("or None", "or none"), "seed": (" or None", "")}


def _as_option(exc):
    """A :class:`ParameterError` of :func:`compare` or :func:`evaluate` in the command's
    terms: its option (``--ci``) and values (``none``; ``--seed`` takes no None).

    Examples
    --------
    >>> from fasteval.errors import ParameterError
    >>> str(_as_option(ParameterError("ci", "a number between 0 and 1, or None", 1.0)))
    '--ci must be a number between 0 and 1, or none, got 1.0'
    """
    constraint = exc.constraint
    if exc.parameter in _CLI_WORDS:
        constraint = constraint.replace(*_CLI_WORDS[exc.parameter])
    return ParameterError(_OPTION_NAMES.get(exc.parameter, exc.parameter), constraint, exc.value)


def _check_options(args: argparse.Namespace, n_resamples: int):
    """Every option checked before any run is read or scored (named as on the command line);
    returns :func:`compare`'s options."""
    from fasteval.compare.settings import check_options

    if not 0 <= args.digits <= 17:
        raise ParameterError("--digits", "an integer from 0 to 17", args.digits)
    if args.marks == "dagger" and args.baseline is None:
        raise ParameterError("--marks", "letters or none without --baseline", args.marks)
    try:
        return check_options(
            tests=args.test or ("t", "randomization", "bootstrap"), correction=args.correction,
            alpha=args.alpha, ci=args.ci, n_resamples=n_resamples, seed=args.seed,
            missing=args.missing, family=args.family, mark_test=args.mark_test,
            alternative=args.alternative, ci_method=args.ci_method,
            zero_method=args.zero_method, continuity=args.continuity,
        )
    except ParameterError as exc:
        raise _as_option(exc) from None


def _run_names(paths: list[str]) -> list[str]:
    """Each run file's name in the report: its stem, or its file name (or path) where stems
    repeat; standard input is ``stdin`` whichever.

    Examples
    --------
    >>> _run_names(["a/run.txt", "b/run.txt", "-"])
    ['a/run.txt', 'b/run.txt', 'stdin']
    """
    from fasteval._words import text_name  # (a name that is not UTF-8: its bytes as \xNN)

    for rule in (lambda p: Path(p).stem, lambda p: Path(p).name, str):
        names = ["stdin" if p == STDIN else text_name(rule(p)) for p in paths]
        if len(set(names)) == len(names):
            return names
    return [text_name(p) for p in paths]  # pragma: no cover - a path given twice is refused before


def _score(args: argparse.Namespace, plots: list[tuple[str, str]]):
    """The runs scored with ``-m``, and a function that scores them with other measures
    (for the plots). A plot that cannot be drawn is refused before anything is read."""
    import polars as pl

    import fasteval

    if len(args.inputs) < 2:
        raise ParameterError(
            "QRELS RUN",
            "a qrels file and at least one run file (or --results FILE...)",
            args.inputs,
        )
    if not args.measure:
        raise ParameterError(
            "-m/--measure", "given at least once when scoring runs (e.g. -m ndcg@10)", None
        )
    from fasteval.compare.plots import plot_measures

    for kind, _ in plots:  # a plot without the measures it needs: refused before any read
        plot_measures(kind, args.measure)
    stdin_once(args.inputs, "QRELS RUN")
    qrels = fasteval.read_qrels(input_source(args.inputs[0]))
    run_paths = args.inputs[1:]
    seen_paths: dict[Path, str] = {}
    for path in run_paths:
        if path == STDIN:
            continue
        key = Path(path).resolve()
        if key in seen_paths:
            raise InputError("run file given twice; give each run once", source=path)
        seen_paths[key] = path
    runs: dict[str, pl.DataFrame] = {}
    files: dict[str, str] = {}

    def add(name: str, table: pl.DataFrame, path: str) -> None:
        if name in runs:  # a second table of that name would replace the first, silently
            raise InputError(f"a second run named {name!r}; each run may be given once",
                             source=path)
        runs[name] = table
        files[name] = path

    for name, path in zip(_run_names(run_paths), run_paths, strict=True):
        df = fasteval.read_run(input_source(path))
        if "run_id" in df.columns and df.get_column("run_id").n_unique() > 1:
            for (rid,), part in df.group_by("run_id", maintain_order=True):
                add(str(rid), part.drop("run_id"), path)
        else:
            add(name, df.drop("run_id") if "run_id" in df.columns else df, path)
    options = {"relevance_level": args.relevance_level}
    if args.complete:
        options["complete"] = True
    if args.judged_only:
        options["judged_only"] = True
    results = fasteval.evaluate(qrels, runs, args.measure, **options)
    _refuse_undefined(results, files, args.judged_only)
    return results, lambda measures: fasteval.evaluate(qrels, runs, measures, **options)


def _refuse_undefined(results, files: dict[str, str], judged_only: bool) -> None:
    """Refuse a measure that is NaN for a query (trec_eval's ``0 / 0``: ``iprec_at_recall``
    and ``11pt_avg`` of a ranking that ``-J`` leaves empty), naming the run file, the query
    and the measure: the tests have no difference to take there.

    Examples
    --------
    >>> import polars as pl
    >>> res = pl.DataFrame({"run_id": ["r1"], "query_id": ["q2"], "measure": ["11pt_avg"],
    ...                     "value": [float("nan")]})
    >>> _refuse_undefined(res, {"r1": "r1.txt"}, judged_only=True)
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: r1.txt: 11pt_avg is undefined (NaN, trec_eval's 0/0) for query 'q2': -J leaves that query no judged document; compare other measures (-m) or leave out -J
    """
    import polars as pl

    bad = results.filter(pl.col("value").is_nan())
    if bad.height == 0:
        return
    r = bad.row(0, named=True)
    why = ("-J leaves that query no judged document; compare other measures (-m) or leave "
           "out -J" if judged_only else "compare other measures (-m)")
    raise InputError(f"{r['measure']} is undefined (NaN, trec_eval's 0/0) for query "
                     f"{r['query_id']!r}: {why}", source=files.get(r["run_id"], r["run_id"]))


_ADVICE = {
    "keep_best_run": "a document is ranked once per query",
    "keep_best_qrels": "a document is judged once per query",
}
"""The readers' advice (:data:`fasteval.errors.ADVICE`) in this command's terms (it has no
duplicates option)."""


def run(args: argparse.Namespace) -> int:
    """Execute ``fasteval compare``."""
    with worded(_ADVICE):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from fasteval.compare._data import load_results
    from fasteval.compare.core import compare_checked
    from fasteval.io.atomic import check_outputs

    plots = _plots(args.plot)
    outputs = {"-o/--output": args.output, "--details": args.details}
    outputs.update({f"--plot {kind}": path for kind, path in plots})
    check_outputs(outputs, [*args.inputs, *(args.results or [])])  # before anything is read
    opts = _check_options(args, _count("--resamples", args.resamples))
    fmt = _report_format(args)
    details_fmt = _details_format(args.details) if args.details else None
    if args.results:
        if args.inputs:
            raise ParameterError("QRELS RUN", "omitted when --results is given", args.inputs)
        results = load_results(
            [str(p) for p in args.results] if len(args.results) > 1 else str(args.results[0])
        )
        measures = args.measure or None
        _check_plot_data(plots, results.get_column("measure").unique(maintain_order=True).to_list())
        score_more = None
    else:
        try:
            results, score_more = _score(args, plots)
        except ParameterError as exc:  # evaluate()'s names, as on the command line
            raise _as_option(exc) from None
        measures = None  # everything evaluated was asked for with -m
    try:
        cmp = compare_checked(results, args.baseline, measures, opts)
    except ParameterError as exc:  # named as on the command line
        raise _as_option(exc) from None
    # what the cutoffs and pr plots draw: every measure of --results files; for scored runs
    # their own measures, evaluated apart (never in the tested family)
    drawn = results if score_more is None else _plot_results(plots, args.measure, score_more)
    _write_report(cmp, fmt, args)
    if args.details:
        from fasteval.compare.report import write

        write(cmp, args.details, details_fmt)
    from fasteval.compare.plots import PLOTS

    for kind, path in plots:
        PLOTS[kind](drawn if kind in ("cutoffs", "pr") else cmp, path)
    return 0


def _report_format(args: argparse.Namespace) -> str:
    """The report's format: ``--format``, else from the ``-o`` suffix, else the text table;
    checked against ``-o`` before anything is read."""
    from fasteval.compare.report import SUFFIX_FORMATS

    fmt = args.format
    if fmt is not None and args.output and args.output != "-":
        by_suffix = SUFFIX_FORMATS.get(Path(args.output).suffix.lower())
        check_format_agrees(fmt, args.output, "any text" if by_suffix == "text" else by_suffix)
    if fmt is None:
        suffix = Path(args.output).suffix.lower() if args.output else ""
        if suffix and suffix not in SUFFIX_FORMATS:
            raise ParameterError("-o/--output", f"a name ending in {', '.join(SUFFIX_FORMATS)}, or "
                                 "--format to choose the format", args.output)
        by_suffix = SUFFIX_FORMATS.get(suffix)
        fmt = "table" if by_suffix in (None, "text") else by_suffix
    if fmt == "parquet" and not args.output:
        raise ParameterError("--format", "used with -o FILE for parquet output", fmt)
    return fmt


def _write_report(cmp, fmt: str, args: argparse.Namespace) -> None:
    """Write the report (``-o``, atomically) or print it."""
    from fasteval.compare.report import details_text, render, write
    from fasteval.io.atomic import write_stdout

    options = {
        "marks": args.marks,
        "digits": args.digits,
        "names": args.names,
        "caption": not args.no_caption,
        "label": args.label,
    }
    if args.output:
        if fmt in ("csv", "parquet"):
            write(cmp, args.output, fmt)
        else:
            write(cmp, args.output, "text" if fmt == "table" else fmt, **options)
    elif fmt == "csv":
        write_stdout(cmp.to_frame().write_csv())
    elif fmt == "table":
        write_stdout(render(cmp, "text", **options) + "\n" + details_text(cmp))
    else:
        write_stdout(render(cmp, fmt, **options))


def _details_format(path: str) -> str:
    """``--details``' format from its suffix: parquet for ``.parquet``/``.pq``, CSV for
    ``.csv`` or none; another suffix is refused (it would get CSV under its name).

    Examples
    --------
    >>> [_details_format(p) for p in ("all.pq", "all.csv", "all")]
    ['parquet', 'csv', 'csv']
    """
    suffix = Path(path).suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix in ("", ".csv"):
        return "csv"
    raise ParameterError("--details", "a name ending in .csv, .parquet or .pq", path)
