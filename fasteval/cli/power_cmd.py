"""``fasteval power``: how many topics a test collection needs (topic-set size design).

From pilot per-query results (``--results``, two or more runs; the residual variance of
their two-way ANOVA estimates the variance) or a given standard deviation (``--sd``),
prints, per measure and per ``--min-diff``, the smallest number of topics at which the
paired t-test (or, with ``--design anova --systems M``, the topic-blocked ANOVA F test)
detects that difference with the requested power; with ``--topics N`` it prints the power
at ``N`` topics instead. See :mod:`fasteval.compare.power`.

Examples
--------
>>> from fasteval.cli import main
>>> main(["power", "--sd", "0.15", "--min-diff", "0.05"])  # doctest: +NORMALIZE_WHITESPACE
measure  sd    min_diff  alpha  power  topics
-        0.15  0.05      0.05   0.802  73
0
"""

from __future__ import annotations

import argparse
import math
from typing import get_args

from fasteval.cli import add_command
from fasteval.errors import InputError, ParameterError, options_named
from fasteval.options import Alternative, Design


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``fasteval power``."""
    p = add_command(
        subparsers,
        "power",
        (
            "Topic-set size design (Sakai): the number of topics needed to detect a "
            "difference with a given power, from pilot per-query results (--results, two or "
            "more runs) or a standard deviation of paired differences (--sd)."
        ),
    )
    p.add_argument("--results", nargs="+", metavar="FILE",
                   help="pilot per-query result files (fasteval eval -q)")
    p.add_argument("-m", "--measure", action="append", default=[], metavar="MEASURE",
                   help="measure(s) of the pilot results to use (default: all)")
    p.add_argument("--sd", type=float, default=None,
                   help="standard deviation of a paired difference (design t) or of the ANOVA "
                        "error (design anova), instead of --results")
    p.add_argument("--min-diff", type=float, action="append", required=True, metavar="D",
                   help="smallest difference (t) or range of system means (anova) to detect; "
                        "repeatable")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    p.add_argument("--power", type=float, default=None,
                   help="power wanted (0.8); not with --topics, which prints the power")
    p.add_argument("--design", choices=get_args(Design), default="t",
                   help="paired t-test (two systems) or topic-blocked ANOVA over --systems systems")
    p.add_argument("--systems", type=int, default=None, metavar="M", help="systems (anova)")
    p.add_argument("--alternative", choices=get_args(Alternative), default="two-sided")
    p.add_argument("--topics", type=int, default=None, metavar="N",
                   help="print the power at N topics")
    p.add_argument("--format", choices=("table", "csv"), default="table")
    return p


_OPTION_NAMES = {"alpha": "--alpha", "min_diff": "--min-diff", "sd": "--sd", "power": "--power",
                 "n_topics": "--topics", "n_systems": "--systems", "design": "--design",
                 "alternative": "--alternative", "measures": "-m/--measure"}
"""The API's parameter names (:mod:`fasteval.compare.power`) -> this command's options."""


@options_named(_OPTION_NAMES)
def run(args: argparse.Namespace) -> int:
    """Execute ``fasteval power``."""
    _check_args(args)
    table = _table(args, _sources(args))
    from fasteval.io.atomic import write_stdout

    if args.format == "csv":
        write_stdout(table.write_csv())
        return 0
    from fasteval._words import one_line

    cells = [
        [one_line(m), f"{sd:.4g}", f"{d:g}", f"{a:g}", f"{pw:.3f}", str(n)]
        for m, sd, d, a, pw, n in table.iter_rows()
    ]
    header = list(table.columns)
    widths = [max(len(r[i]) for r in [header, *cells]) for i in range(len(header))]
    write_stdout("".join("  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip() + "\n"
                         for r in [header, *cells]))
    return 0


def _check_args(args: argparse.Namespace) -> None:
    """The options that go together checked (``--power`` defaults to 0.8 here)."""
    if (args.results is None) == (args.sd is None):
        raise ParameterError("--results/--sd", "exactly one of them",
                             "neither" if args.results is None else "both")
    if args.topics is not None and args.topics > 2**63 - 1:  # the table's topics are Int64
        raise ParameterError("--topics", f"an integer from 2 to {2**63 - 1}", args.topics)
    if args.topics is not None and args.power is not None:
        raise ParameterError("--power", "left out with --topics (which prints the power at N "
                             "topics)", args.power)
    if args.power is None:
        args.power = 0.8
    if args.systems is not None and args.design != "anova":
        raise ParameterError("--systems", "used with --design anova only", args.systems)


def _sources(args: argparse.Namespace) -> list[tuple[str, float]]:
    """``(measure, sd)`` of each pilot measure, or ``("-", --sd)``."""
    from fasteval.compare.power import pilot_variance

    if args.results is None:
        if args.measure:
            raise ParameterError("-m/--measure", "used with --results only", args.measure)
        return [("-", args.sd)]
    files = [str(f) for f in args.results]
    pilot = pilot_variance(files if len(files) > 1 else files[0], args.measure or None)
    sources = [
        (r["measure"], r["sd_diff"] if args.design == "t" else r["residual_variance"] ** 0.5)
        for r in pilot.iter_rows(named=True)
    ]
    for measure, sd in sources:
        if sd == 0:
            raise InputError(
                f"measure {measure!r}: the pilot runs have no residual variance (they "
                "differ by one constant on every topic), so no topic-set size follows "
                "from them; give pilot runs that vary, or --sd", source="results")
        if not math.isfinite(sd):
            raise InputError(
                f"measure {measure!r}: the pilot runs' standard deviation overflows float64 "
                f"({sd}); their values are too large for a variance", source="results")
    return sources


def _table(args: argparse.Namespace, sources: list[tuple[str, float]]):
    """One row per measure and ``--min-diff``: the topics needed and the power there (or
    the power at ``--topics``)."""
    import polars as pl

    from fasteval.compare.power import power, topic_set_size

    kw = {"alpha": args.alpha, "design": args.design, "n_systems": args.systems,
          "alternative": args.alternative}
    rows = []
    for measure, sd in sources:
        for d in args.min_diff:
            if args.topics is not None:
                n = args.topics
            else:
                n = topic_set_size(d, sd, power=args.power, **kw)
            rows.append((measure, sd, d, args.alpha, power(n, d, sd, **kw), n))
    schema = {"measure": pl.Utf8, "sd": pl.Float64, "min_diff": pl.Float64, "alpha": pl.Float64,
              "power": pl.Float64, "topics": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")
