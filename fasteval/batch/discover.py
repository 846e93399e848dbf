"""Find the runs behind command-line arguments: files, globs, directories, hive partitions.

Rules
-----
* A parquet **file** is one table. Its run name is the file name without ``.parquet``,
  unless the table has a ``run_id`` column (then it may hold several runs).
* A quoted **glob** (``'dumps/bm25/part-*.parquet'``) is one table made of all matching files;
  the ``key=value`` folders it matches below its fixed part (``'dumps/*/*.parquet'`` over
  ``dumps/run_id=bm25/``) are hive partitions, as in a directory.
* A **directory** is

  - one table when it is hive-partitioned (``run_id=bm25/part-0.parquet``: the
    ``key=value`` path components become columns, their values percent-decoded as polars
    and pyarrow write them: ``run_id=bm25%2Fdense`` names ``bm25/dense``) or when its
    files carry a ``run_id`` column; ``key=value`` folders that name no run, inside
    folders that are not ``key=value`` ones (``bm25/lang=en/part-0.parquet``), in files
    without a ``run_id`` column, leave those folders runs of their own;
  - otherwise a directory of runs: each parquet file directly inside is one run named
    after the file, each sub-directory one run (its files are parts) named after it, and
    each file of another run format (``.txt``, ``.run``, ``.trec``, ``.csv``, ``.jsonl``,
    ``.gz`` of these...) directly inside is one run read whole.

  Any other file (a suffix that names no run format, or a non-parquet file where parquet
  parts are expected) stops the job with the list of such files: nothing is skipped
  silently. Names starting with ``.`` or ``_`` (``_SUCCESS``) are not runs.
* Any other file (TREC text, CSV/TSV, JSONL, ``.gz``) is read whole with
  :func:`fasteval.read_run`; its run name is the file name.
* ``-`` (standard input), a FIFO or a character device (``/dev/stdin`` on a pipe,
  ``<(command)``) is read once, whole, into memory, and parsed like a file: the format
  from the name's suffix if it has one, else from the first bytes (TREC text, parquet,
  JSON, JSON Lines).

Columns are found as :func:`fasteval.read_run` finds them: the canonical names
(``query_id``, ``doc_id``, ``score``, optional ``rank`` and ``run_id``) or an alias
(PyTerrier's ``qid``/``docno``, ``docid``, ``sim``, ``runid``..., any case; the first
alias present wins: :func:`fasteval.io._common.find_column`), in each file on its own, so
the parts of one table may spell them differently. A hive folder may give the run id
(``run_id=bm25/``, or an alias of it), no other column. The parts of one table must agree
on whether they have a run id and a rank column.

Every parquet file is checked before any work starts (readable footer, at least one
row, the needed columns with compatible types), so a bad file in a directory stops
the job with a one-line error naming it. A file reached twice (a run given twice,
overlapping globs) is refused, as are two runs of one name: their rows would be merged.
"""

from __future__ import annotations

import glob as _glob
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from fasteval._words import text_name
from fasteval.errors import InputError, first_line
from fasteval.io._common import (
    HIVE_NULL,
    missing_path,
    null_partition,
    undecodable_name,
    walk_input,
)
from fasteval.io.files import STDIN

PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
RUN_COLUMNS = ("query_id", "doc_id", "score")
_GLOB_CHARS = set("*?[")


@dataclass
class RunSource:
    """One logical run table.

    Attributes
    ----------
    name : str
        Run name used when the table has no ``run_id`` column.
    kind : str
        ``"parquet"`` (streamed in row batches), ``"frame"`` (an in-memory table) or
        ``"file"`` (another format, read whole).
    files : list of Path
        Parquet files (in order) for ``"parquet"``; the one file for ``"file"``.
    hive : list of dict
        Per parquet file, the ``key=value`` pairs from its path (hive partitioning); the
        run id a folder gives (``run_id=``, or an alias of it) is under ``"run_id"``.
    maps : list of dict
        Per parquet file, its run columns: canonical name -> the file's column (the
        readers' aliases, :func:`column_map`); empty for other sources.
    has_run_id : bool
        The table carries its own ``run_id`` column.
    rows : int
        Number of rows (from parquet metadata; the frame height), -1 if unknown.
    frame : polars.DataFrame or None
        The table for ``"frame"`` sources.
    duplicates : str
        Policy for duplicate (query, doc) rows: ``"error"`` or ``"keep_best"``.
    started : tuple or None
        ``(batch_rows, batches)``: the first file's read, already under way
        (:func:`fasteval.batch.driver.start_reading`).
    """

    name: str
    kind: str
    files: list[Path] = field(default_factory=list)
    hive: list[dict[str, str]] = field(default_factory=list)
    maps: list[dict[str, str]] = field(default_factory=list)
    has_run_id: bool = False
    rows: int = -1
    frame: pl.DataFrame | None = None
    columns: list[str] = field(default_factory=list)
    duplicates: str = "error"
    started: tuple | None = field(default=None, repr=False, compare=False)


def _is_parquet(p: Path) -> bool:
    return p.suffix.lower() in PARQUET_SUFFIXES


def _hive_parts(path: Path, root: Path) -> dict[str, str]:
    """The ``key=value`` pairs of the folders of ``path`` below ``root``, percent-decoded as
    polars, pyarrow and Spark write and read them (``run_id=bm25%2Fdense`` is the run
    ``bm25/dense``).

    Examples
    --------
    >>> _hive_parts(Path("d/run_id=x%3Ay/part=1/p.parquet"), Path("d"))
    {'run_id': 'x:y', 'part': '1'}
    """
    from urllib.parse import unquote

    parts: dict[str, str] = {}
    for comp in path.relative_to(root).parts[:-1]:
        if "=" in comp:
            k, v = comp.split("=", 1)
            parts[unquote(k)] = unquote(v)
    return parts


def _folders_below(path: Path, root: Path) -> tuple[str, ...]:
    """The folders of ``path`` below ``root`` (none if it is not below it)."""
    try:
        return path.relative_to(root).parts[:-1]
    except ValueError:
        return ()


def _hive_run_key(files: list[Path], root: Path) -> bool:
    """Whether a ``key=value`` folder of ``files`` below ``root`` names the run
    (``run_id=``, or an alias of it such as ``system=``)."""
    from fasteval.io._common import find_column

    keys = list(dict.fromkeys(k for f in files for k in _hive_parts(f, root)))
    return find_column(keys, "run_id", None, source=str(root), required=False) is not None


def _walk_parquet(root: Path, others: list[Path] | None = None) -> list[Path]:
    """Parquet files under ``root``, in order; the other files go to ``others``. Folders
    reached through symbolic links are walked too; a link to a folder that holds it (a
    loop) is an error naming it."""
    found = []
    for dirpath, _, filenames in walk_input(root):
        for f in sorted(filenames):
            if f.startswith((".", "_")):
                continue
            p = Path(dirpath) / f
            if _is_parquet(p):
                found.append(p)
            elif others is not None:
                others.append(p)
    return found


def _refuse_skipped(skipped: list[Path], root: Path, why: str) -> None:
    if skipped:
        names = [str(p.relative_to(root)) for p in skipped]
        shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        raise InputError(f"{why}: {shown}; move them out (nothing is skipped silently)",
                         source=str(root))


def check_parquet(path: Path, hive: dict[str, str] | None = None, *,
                  rows_needed: bool = True) -> tuple[int, pl.Schema, dict[str, str]]:
    """Validate one parquet file; return its row count, its polars schema and its run
    columns (:func:`column_map`; ``hive``: the ``key=value`` pairs of its folders).
    ``rows_needed=False`` takes a file of no rows (one part of several: writers such as
    Spark leave empty parts).

    Raises
    ------
    InputError
        Naming the file: empty (0 bytes, or 0 rows where ``rows_needed``), unreadable or
        corrupt footer, or a missing required column.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.parquet"
    >>> pl.DataFrame({"qid": ["q"], "docno": ["d"], "score": [1.0]}).write_parquet(p)
    >>> n, schema, columns = check_parquet(p)
    >>> n, columns
    (1, {'query_id': 'qid', 'doc_id': 'docno', 'score': 'score'})
    """
    if path.stat().st_size == 0:
        raise InputError("empty file (0 bytes), expected a parquet file", source=str(path))
    try:
        num_rows = parquet_rows(path)
        schema = pl.scan_parquet(path, glob=False).collect_schema()  # a file, never a pattern
    except (OSError, ValueError, pl.exceptions.PolarsError) as exc:
        raise InputError(f"not a readable parquet file ({first_line(exc)})", source=str(path)) from None
    columns = column_map(list(schema), hive or {}, source=str(path))
    if num_rows == 0 and rows_needed:
        raise InputError("no rows (empty table)", source=str(path))
    return num_rows, schema, columns


def parquet_rows(path: str | os.PathLike) -> int:
    """The number of rows of the parquet file ``path``, from its footer (polars reads no
    data pages for it; pyarrow is not imported).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.parquet"
    >>> pl.DataFrame({"x": [1, 2, 3]}).write_parquet(p)
    >>> parquet_rows(p)
    3
    """
    lf = pl.scan_parquet(path, glob=False, hive_partitioning=False)  # a file, never a pattern
    return int(lf.select(pl.len()).collect().item())


def column_map(names: list[str], hive: dict[str, str], *, source: str) -> dict[str, str]:
    """The run columns of a parquet file with columns ``names`` under folders ``hive``
    (``key=value`` pairs), as :func:`fasteval.read_run` finds them (the canonical name or
    the first alias present, any case: :func:`fasteval.io._common.find_column`):
    canonical name -> the file's column, or the hive key that gives the run id.

    Raises
    ------
    InputError
        A required column missing (naming the names accepted for it), or a hive folder
        giving a run column other than the run id.

    Examples
    --------
    >>> column_map(["qid", "docno", "score", "rank"], {}, source="run.parquet")
    {'query_id': 'qid', 'doc_id': 'docno', 'score': 'score', 'rank': 'rank'}
    >>> column_map(["query_id", "doc_id", "sim"], {"system": "bm25"}, source="run.parquet")
    {'query_id': 'query_id', 'doc_id': 'doc_id', 'score': 'sim', 'run_id': 'system'}
    """
    from fasteval.io._common import ALIASES, find_column, resolve_columns

    found = names + [k for k in hive if k not in names]  # as polars adds hive columns
    missing = [c for c in RUN_COLUMNS if find_column(found, c, None, source=source, required=False) is None]
    if missing:
        accepted = "; ".join(f"{c}: {', '.join(ALIASES[c][1:])}" for c in missing)
        raise InputError(
            f"missing column(s) {missing}; expected {list(RUN_COLUMNS)} or another name "
            f"fasteval.read_run accepts for them (any case; {accepted}), found {names}",
            source=source, column=missing[0])
    mapping = resolve_columns(found, "run", {}, source=source)
    mapping.pop("tag", None)  # a TREC run's tag: not needed to score
    for canon, col in mapping.items():
        if col not in names and canon != "run_id":
            raise InputError(
                f"the {canon} would come from the folder names ({col}=...), which may give the "
                f"run id only; store {canon} as a column of the files", source=source, column=col)
    return mapping


def _check_same_schema(files: list[Path], schemas: list[pl.Schema], maps: list[dict[str, str]],
                       runs: list[str | None]) -> None:
    """The parts of one table: the same kinds of ids (text or integers, as read), and a run
    id (column or folder) and a rank column in every part or in none."""
    first, ref, ref_map = files[0], schemas[0], maps[0]
    for f, s, m, run in zip(files[1:], schemas[1:], maps[1:], runs[1:], strict=True):
        for c in ("run_id", "rank"):
            has, had = (run is not None if c == "run_id" else c in m), (
                runs[0] is not None if c == "run_id" else c in ref_map)
            if has != had:
                with_it, without = (f, first) if has else (first, f)
                raise InputError(
                    f"{with_it} has a {c} but {without} has none; the parts of one table "
                    f"need the same run columns", source=str(f), column=c)
        for c in ("query_id", "doc_id", "run_id"):  # ids as read (integral floats: integers)
            a, b = ref_map.get(c), m.get(c)
            kind = id_kind if c != "run_id" else _kind
            if a in ref and b in s and kind(ref[a]) != kind(s[b]):
                raise InputError(
                    f"type {s[b]} differs from {ref[a]} in {first}",
                    source=str(f),
                    column=b,
                )


def _kind(dtype: pl.DataType) -> str:
    if dtype.is_integer():
        return "int"
    if dtype.is_float():
        return "float"
    if dtype in (pl.Utf8, pl.Categorical) or isinstance(dtype, pl.Categorical | pl.Enum):
        return "str"
    return str(dtype)


def id_kind(dtype: pl.DataType) -> str:
    """The kind of ids a column of ``dtype`` gives once read (:func:`fasteval.batch.driver.convert_types`,
    as :func:`fasteval.read_run` converts them): ``"int"`` for integers and integral floats
    or decimals, ``"str"`` for anything else.

    Examples
    --------
    >>> id_kind(pl.Float64), id_kind(pl.Int32), id_kind(pl.Categorical())
    ('int', 'int', 'str')
    """
    return "int" if dtype.is_integer() or dtype.is_float() or dtype.is_decimal() else "str"


def _check_types(path: Path, schema: pl.Schema, columns: dict[str, str]) -> None:
    for c in ("query_id", "doc_id"):
        col = columns.get(c)
        if col in schema and (schema[col] == pl.Boolean or schema[col].is_nested()):
            raise InputError(f"expected string or integer ids, found {schema[col]}", source=str(path), column=col)
    col = columns.get("score")
    if col in schema and not (schema[col].is_numeric() or schema[col] in (pl.Boolean, pl.Utf8)):
        raise InputError(f"expected a numeric score, found {schema[col]}", source=str(path), column=col)


def _check_folder_run_id(path: Path, folder: str, column: str = "run_id") -> None:
    """A file under a ``run_id=NAME`` folder that has a ``run_id`` column (``column``) of
    its own: every row must name the folder's run (the column would otherwise win, silently)."""
    try:
        col = pl.read_parquet(path, columns=[column], hive_partitioning=False, glob=False).get_column(column)
    except (pl.exceptions.PolarsError, OSError):
        return  # unreadable: reading the rows reports it, with the file
    differs = (col.cast(pl.Utf8, strict=False) != folder).fill_null(True)
    if differs.any():
        row = int(differs.arg_true()[0])
        raise InputError(f"run_id {col[row]!r} differs from the folder's run_id={folder}; a run is "
                         "named by its folder or by the column, not both differently",
                         source=str(path), row=row, column=column)


def parquet_source(name: str, files: list[Path], root: Path | None = None) -> RunSource:
    """Build (and validate) a parquet :class:`RunSource` from its files."""
    if not files:
        raise InputError("no parquet files found", source=name)
    rows = 0
    schemas, maps, hive, runs = [], [], [], []
    for f in files:
        hv = _hive_parts(f, root) if root is not None else {}
        n, schema, columns = check_parquet(f, hv, rows_needed=len(files) == 1)
        _check_types(f, schema, columns)
        col = columns.get("run_id")
        if col is not None and hv.get(col) == HIVE_NULL:  # Spark's null: refused, never a run
            folder = next(c for c in _folders_below(f, root) if c.partition("=")[2] == HIVE_NULL)  # type: ignore[arg-type]
            raise null_partition(str(root / folder) if root is not None else str(f.parent), "run_id")
        if col is not None and col not in schema:  # the run id of the folder (run_id=NAME/)
            hv = {**hv, "run_id": hv[columns.pop("run_id")]}
        elif col is not None and col in hv:  # a run_id column under run_id=NAME/: they agree
            _check_folder_run_id(f, hv[col], col)
        rows += n
        schemas.append(schema)
        maps.append(columns)
        hive.append(hv)
        runs.append(col)
    if rows == 0:
        raise InputError(f"no rows: its {len(files)} parquet files are all empty", source=name)
    _check_same_schema(files, schemas, maps, runs)
    cols = list(dict.fromkeys([*maps[0], *(["run_id"] if "run_id" in hive[0] else [])]))
    return RunSource(name=name, kind="parquet", files=files, hive=hive, maps=maps,
                     has_run_id=runs[0] is not None, rows=rows, columns=cols)


def _undecodable_apart(files: list[Path], folder: Path | None, others: list[Path]) -> list[Path]:
    """``files`` (parquet, found in ``folder``) without those whose names are not UTF-8,
    which polars cannot scan: one directly in ``folder`` joins ``others`` (a run of its
    own, read whole by the readers, which open it themselves); a part deeper down, of a run
    read in parts (any of them without ``folder``: a glob's), is an error naming it.

    Examples
    --------
    >>> others = []
    >>> _undecodable_apart([Path("d/a.parquet"), Path(os.fsdecode(b"d/\\xe9.parquet"))], Path("d"), others)
    [PosixPath('d/a.parquet')]
    >>> others
    [PosixPath('d/\\udce9.parquet')]
    """
    kept = [f for f in files if not undecodable_name(f)]
    for f in files:
        if f in kept:
            continue
        if folder is None or f.parent != folder:
            raise InputError("a parquet part whose name is not valid UTF-8 (polars cannot open "
                             "it by name); expected UTF-8 names for the parts of a run: rename it",
                             source=os.fspath(f))
        others.append(f)
    return kept


def _run_name(path: Path) -> str:
    name = path.name.removesuffix(".gz")
    for suf in PARQUET_SUFFIXES:
        if name.lower().endswith(suf):
            name = name[: -len(suf)]
    return name


def discover(spec: str | os.PathLike[str]) -> list[RunSource]:
    """Turn one command-line run argument into run sources (see the module rules).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for n in ("bm25", "dense"):
    ...     pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]}).write_parquet(d / f"{n}.parquet")
    >>> [s.name for s in discover(d)]
    ['bm25', 'dense']
    """
    text = os.fspath(spec)
    if not text:  # Path("") is the working directory: never read it for an empty argument
        raise InputError("a run path is empty; expected a file, a directory of runs, a glob "
                         "or - (standard input)")
    path = Path(text)
    if text == STDIN:
        return [RunSource(name="stdin", kind="file", files=[path])]
    if any(ch in text for ch in _GLOB_CHARS) and not path.exists():
        matches = sorted(Path(m) for m in _glob.glob(text, recursive=True))
        files = [m for m in matches if m.is_file() and _is_parquet(m)]
        if not files:
            raise InputError("glob matches no parquet file", source=text)
        _undecodable_apart(files, None, [])  # parts of one run: polars scans them by name
        prefix = re.split(r"[*?\[]", text, maxsplit=1)[0]
        base = Path(prefix) if prefix.endswith(("/", os.sep)) else Path(prefix).parent
        name = base.name if prefix else ""
        # folders the pattern matched as run_id=NAME/ name their runs, as in a directory
        hive = any("=" in comp for f in files for comp in _folders_below(f, base))
        return [parquet_source(name or text, files, root=base if hive else None)]
    if not path.exists():
        raise missing_path(text)
    if not path.is_dir() and not path.is_file():  # a FIFO, /dev/stdin on a pipe: read once
        return [RunSource(name=_run_name(path), kind="file", files=[path])]
    if path.is_file():
        if _is_parquet(path) and not undecodable_name(text):  # (polars cannot scan such a
            return [parquet_source(_run_name(path), [path])]   # name: the reader opens it)
        return [RunSource(name=_run_name(path), kind="file", files=[path])]
    # a directory
    from fasteval.io.readers import format_from_name

    others: list[Path] = []
    files = _undecodable_apart(_walk_parquet(path, others), path, others)
    runs = [f for f in others if f.parent == path and format_from_name(f) is not None]
    if not files and not runs:
        _refuse_skipped(others, path, "directory holds no run file, only")
        raise InputError("directory holds no parquet file", source=text)
    hive = any("=" in comp for f in files for comp in f.relative_to(path).parts[:-1])
    if hive and not _hive_run_key(files, path) and any(
            "=" not in f.relative_to(path).parts[0] for f in files if f.parent != path) \
            and "run_id" not in check_parquet(files[0], rows_needed=False)[2]:
        hive = False  # key=value folders inside run folders (bm25/lang=en/): one run per folder
    if hive:
        _refuse_skipped(others, path, "hive-partitioned directory also holds non-parquet files")
        return [parquet_source(path.name, files, root=path)]
    direct = [f for f in files if f.parent == path]
    if direct and "run_id" in check_parquet(direct[0], rows_needed=False)[2]:
        _refuse_skipped(others, path, "directory of parquet parts also holds other files")
        return [parquet_source(path.name, files)]
    _refuse_skipped([f for f in others if f not in runs], path,
                    "files of no run format (or not parquet among parquet parts)")
    sources = [
        parquet_source(_run_name(f), [f]) if _is_parquet(f) and not undecodable_name(f)
        else RunSource(name=_run_name(f), kind="file", files=[f])
        for f in sorted(direct + runs)
    ]
    subdirs = sorted({f.relative_to(path).parts[0] for f in files if f.parent != path})
    for sub in subdirs:
        sub_files = [f for f in files if f.relative_to(path).parts[0] == sub]
        sources.append(parquet_source(sub, sub_files))
    return sources


def _is_run_dict(d: Mapping) -> bool:
    """A ``{qid: {docid: score}}`` run, not a mapping ``{name: run}``."""
    first = next(iter(d.values()), None)
    return isinstance(first, Mapping) and not isinstance(next(iter(first.values()), None),
                                                          Mapping | pl.DataFrame)


def _read_table(spec: object) -> pl.DataFrame:
    """A run given in memory as a polars table: a polars one with the canonical columns
    and plain types as it is, any other (aliases such as ``qid``/``docno``, pandas,
    pyarrow, a run dict) through :func:`fasteval.read_run`, as :func:`fasteval.evaluate`
    takes it."""
    if isinstance(spec, pl.DataFrame) and set(RUN_COLUMNS) <= set(spec.columns):
        from fasteval.evaluation import canonical_names, plain_types

        if plain_types(spec.schema) and canonical_names(spec.columns):
            return spec
    from fasteval.io.readers import read_run

    return read_run(spec, duplicates="ignore")


def discover_all(specs: list) -> list[RunSource]:
    """Discover every run argument; in-memory tables become ``"frame"`` sources.

    A mapping ``{name: run}`` names its runs (tables, run dicts, or paths of one run each);
    other tables than polars' (pandas, pyarrow, ``{qid: {docid: score}}``) are converted by
    :func:`fasteval.read_run`.

    Duplicate run names are made unique by using the argument as written. A file reached
    twice (the same run given twice, overlapping globs) is an error, as are two runs that
    still share a name: either would merge two tables into one run of doubled rows.
    """
    sources: list[RunSource] = []
    named: list[tuple[str | None, object]] = []
    for spec in specs:
        if isinstance(spec, Mapping) and not _is_run_dict(spec):  # {name: table}
            named.extend((str(k), v) for k, v in spec.items())
        else:
            named.append((None, spec))
    for i, (key, spec) in enumerate(named):
        if isinstance(spec, RunSource):
            sources.append(spec)
        elif isinstance(spec, str | os.PathLike):
            found = discover(spec)
            if key is not None:  # one run under the mapping's name
                if len(found) != 1 or found[0].has_run_id:
                    holds = ("a run_id column" if len(found) == 1
                             else f"{len(found)} runs: {[f.name for f in found]}")
                    raise InputError(f"run {key!r}: a named path must hold one run, this one "
                                     f"holds {holds}; give it without a name",
                                     source=os.fspath(spec))
                found[0].name = key
            sources.extend(found)
        else:  # a table: polars as it is; aliases, pandas, pyarrow, {qid: {docid: score}} converted
            frame = _read_table(spec)
            if key is not None and "run_id" in frame.columns:  # the name given wins, as in
                frame = frame.drop("run_id")  # fasteval.evaluate({name: table})
            sources.append(
                RunSource(name=key if key is not None else f"run_{i}", kind="frame",
                          frame=frame, rows=frame.height,
                          has_run_id="run_id" in frame.columns, columns=frame.columns)
            )
    seen: dict[str, int] = {}
    for s in sources:
        seen[s.name] = seen.get(s.name, 0) + 1
    for s in sources:
        if seen[s.name] > 1 and s.files:
            s.name = os.fspath(s.files[0]) if len(s.files) == 1 else os.fspath(s.files[0].parent)
        s.name = text_name(s.name)  # a run named after a file whose name is not UTF-8
    owner: dict[Path, str] = {}
    names: set[str] = set()
    for s in sources:
        for f in s.files:
            key = f.resolve()
            if key in owner:
                where = (f"run {s.name!r}" if owner[key] == s.name
                         else f"runs {owner[key]!r} and {s.name!r}")
                raise InputError(f"given twice ({where}): its rows would count twice; give each "
                                 "run file once", source=str(f))
            owner[key] = s.name
        if s.name in names:
            raise InputError(f"two runs are named {s.name!r}; rename one", source=s.name)
        names.add(s.name)
    return sources
