"""``fasteval fuse RUN RUN [RUN ...] -m METHOD [-o OUT]``: fuse runs into one.

Runs may be TREC text, parquet, CSV/TSV or JSON Lines files. The fused run goes to ``-o``
(format from the suffix: ``.parquet``/``.pq`` parquet, ``.trec``/``.run``/``.txt`` TREC
text, ``.csv``, ``.tsv``, ``.jsonl``, each text format + ``.gz`` gzipped; ``--format``
chooses for another suffix and must agree with one of these, ``.txt`` taking any text
format), written atomically; without ``-o`` (or with ``-o -``) it is printed as TREC
text. An output that is one of the inputs, or a name the writer cannot honour, is refused
before anything is read. One RUN may be ``-``: read from standard input.

Examples
--------
>>> from fasteval.cli import main
>>> main(["fuse", "bm25.run", "dense.run", "-m", "rrf", "-o", "fused.parquet"])  # doctest: +SKIP
0
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any, get_args

from fasteval.cli import STDIN, add_command, check_format_agrees, input_source, stdin_once
from fasteval.errors import ParameterError, options_named
from fasteval.options import WriteFormat

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     r"|[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
"""A decimal number as ``strtod`` reads one (``float`` would also read ``1_0`` or non-ASCII
digits); inf and nan are read, for the range checks to name them."""


def _decimal(text: str) -> float:
    if not _NUMBER.fullmatch(text):
        raise ValueError(text)
    return float(text)


def _weights(text: str) -> list[float]:
    items = re.split(r"\s*,\s*|\s+", text.strip())
    try:
        if "" in items:  # "0.3,,0.7" or a trailing comma: a weight left out
            raise ValueError(text)
        return [_decimal(x) for x in items]
    except ValueError:
        raise ParameterError("weights", "numbers separated by commas (0.3,0.7), none "
                             "empty", text) from None


def _number(option: str):
    def parse(text: str) -> float:
        try:
            return _decimal(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} must be a number, got {text!r}") from None

    return parse


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``fasteval fuse``."""
    p = add_command(
        subparsers,
        "fuse",
        (
            "Fuse two or more runs into one, as ranx's fuse does: the runs' scores are "
            "normalised per query (--norm), then combined (--method). Each query's fused "
            "documents are ranked by score, ties by doc id descending (trec_eval's order)."
        ),
    )
    p.add_argument("runs", metavar="RUN", nargs="+",
                   help="run files (TREC, parquet, CSV, JSONL); - reads one from standard input")
    p.add_argument("-m", "--method", default="rrf", metavar="METHOD",
                   help="rrf (default), sum, mnz, anz, max, min, med, gmnz, isr, log_isr, "
                        "logn_isr, rbc, bordafuse, condorcet, wsum, wmnz, mixed, w_bordafuse, "
                        "w_condorcet (combsum, combmnz, borda... also read)")
    p.add_argument("--norm", default="min-max", metavar="NORM",
                   help="score normalisation: min-max (default), max, sum, zmuv (z-score), rank, "
                        "borda, min-max-inverted, none")
    p.add_argument("-w", "--weights", default=None, metavar="W1,W2,...",
                   help="one weight per run, in order (weighted methods)")
    p.add_argument("--k", type=_number("--k"), default=None, help="RRF's k (60)")
    p.add_argument("--phi", type=_number("--phi"), default=None, help="RBC's persistence, 0 < phi < 1")
    p.add_argument("--gamma", type=_number("--gamma"), default=None, help="CombGMNZ's exponent")
    p.add_argument("--sigma", type=_number("--sigma"), default=None, help="logn_isr's sigma (0.01)")
    p.add_argument("-o", "--output", metavar="OUT", default=None,
                   help="write here (atomically; format from the suffix); default or -: TREC "
                        "text on standard output")
    p.add_argument("--format", default=None, choices=get_args(WriteFormat),
                   help="output format (default: from the -o suffix)")
    p.add_argument("--tag", default=None, help="run tag of TREC output (default: fused-METHOD)")
    if hasattr(p, "_negative_number_matcher"):  # -w -1,2: a value (the weights' own check
        p._negative_number_matcher = _NEGATIVE_NUMBERS  # names what is wrong), not an option
    return p


_NEGATIVE_NUMBERS = re.compile(r"^-\.?\d[\d.,eE+-]*$")
"""Arguments read as values, not options: argparse's negative numbers, and lists of numbers
starting with one (``-1,2``, ``-0.5,1e-3``)."""


_OPTION_NAMES = {"method": "-m/--method", "norm": "--norm", "weights": "-w/--weights", "k": "--k",
                 "phi": "--phi", "gamma": "--gamma", "sigma": "--sigma"}
""":func:`fasteval.fuse`'s parameter names -> this command's options."""


@options_named(_OPTION_NAMES)
def run(args: argparse.Namespace) -> int:
    """Run ``fasteval fuse``."""
    import polars as pl

    from fasteval.fusion.api import fuse
    from fasteval.fusion.options import resolve
    from fasteval.io.atomic import STDOUT, check_outputs
    from fasteval.io.writers import output_format, write_table

    if len(args.runs) < 2:
        raise ParameterError("RUN", "given at least twice (two runs to fuse)", args.runs)
    stdin_once(args.runs, "RUN")
    if args.tag is not None and (not args.tag or any(c.isspace() for c in args.tag)):
        # the tag is a TREC field: whitespace would split it (and "" leave the line short)
        raise ParameterError("--tag", "non-empty text without whitespace", args.tag)
    weights = None if args.weights is None else _weights(args.weights)
    spec = resolve(args.method, args.norm, weights, n_runs=len(args.runs), k=args.k,
                   phi=args.phi, gamma=args.gamma, sigma=args.sigma)  # before reading
    output = STDOUT if args.output is None else args.output
    fmt = args.format or ("trec" if output == STDOUT else None)
    if args.output is None and fmt == "parquet":  # binary on a terminal; -o - writes it on purpose
        raise ParameterError("--format parquet", "used with -o OUT or -o - (parquet is not printed "
                             "unless asked for)", STDOUT)
    check_outputs({"-o/--output": output}, args.runs)
    if output != STDOUT and args.format is not None:
        check_format_agrees(output_format(output, args.format, param="-o/--output", format_param="--format"),
                            output, _named_format(output))
    fmt = output_format(output, fmt, param="-o/--output", format_param="--format")
    runs: dict[str, Any] = {}  # fuse reads them, naming each file's lines in its errors
    for i, path in enumerate(args.runs):  # named by path (a path given twice: by position)
        name = "stdin" if path == STDIN else path
        name = name if name not in runs else f"{name} (run {i + 1})"
        runs[name] = input_source(path)
    fused = fuse(runs, method=spec.method, norm=spec.norm, weights=spec.weights,
                 **{p: v for p, v in spec.params.items() if p != "weights"})
    if fmt == "trec":
        fused = fused.with_columns(pl.lit(args.tag or f"fused-{spec.method}").alias("tag"))
    write_table(fused, output, fmt)
    return 0


def _named_format(output: str) -> str | None:
    """The format the suffix of ``output`` (past a ``.gz``) names: ``"any text"`` for
    ``.txt``, None for a suffix that names none."""
    from fasteval.io.writers import WRITE_SUFFIX

    suffix = Path(Path(output).name.lower().removesuffix(".gz")).suffix
    return "any text" if suffix == ".txt" else WRITE_SUFFIX.get(suffix)
