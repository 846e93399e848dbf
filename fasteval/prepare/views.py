"""Arrow string views: the kernels' view of an id column (:func:`id_column`), and the
read-only and empty arrays handed to the kernels (one numba specialisation each)."""

from __future__ import annotations

import numpy as np
import polars as pl


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view (one numba specialisation whatever the source of an array)."""
    a = a.view()
    a.flags.writeable = False
    return a


_NO_INTS = readonly(np.zeros(0, dtype=np.int64))
_NO_VIEWS = readonly(np.zeros((0, 16), dtype=np.uint8))
_NO_BYTES = readonly(np.zeros(0, dtype=np.uint8))


def id_column(s: pl.Series) -> tuple:
    """The kernels' view of an id column: ``(is_int, ints, v8, v32, data, base)``.

    Integer ids as int64 values; text as its Arrow string views (zero-copy from polars for
    a single chunk; the views of several chunks are put end to end, their buffer numbers
    shifted) and the out-of-line bytes of all its data buffers.
    """
    if s.dtype.is_integer():
        ints = s.cast(pl.Int64).to_numpy()
        return (True, readonly(ints), _NO_VIEWS, _NO_VIEWS.view(np.uint32), _NO_BYTES, _NO_INTS)
    chunks = [_string_views(c) for c in s.cast(pl.Utf8).get_chunks()]
    if len(chunks) == 1:
        v8, datas = chunks[0]
        v8 = np.ascontiguousarray(v8)
    else:
        v8 = np.empty((len(s), 16), dtype=np.uint8)
        datas = []
        pos = 0
        for views, bufs in chunks:
            n = len(views)
            v8[pos:pos + n] = views
            if datas and n:  # out-of-line views name their buffer: count the earlier ones
                words = v8[pos:pos + n].view(np.uint32)
                words[words[:, 0] > 12, 2] += len(datas)
            datas.extend(bufs)
            pos += n
    base = np.zeros(len(datas), dtype=np.int64)
    if len(datas) == 1:
        data = datas[0]
    elif datas:
        base[1:] = np.cumsum([len(d) for d in datas])[:-1]
        data = np.concatenate(datas)
    else:
        data = _NO_BYTES
    return (False, _NO_INTS, readonly(v8), readonly(v8).view(np.uint32), readonly(data),
            readonly(base))


def _string_views(chunk: pl.Series) -> tuple[np.ndarray, list[np.ndarray]]:
    """A one-chunk text column's 16-byte views (as bytes, zero-copy) and its data buffers:
    through the Arrow C stream interface (:mod:`fasteval.prepare.arrow_c`, no pyarrow
    import), or pyarrow's conversion where polars exports something else."""
    from fasteval.prepare.arrow_c import string_view_batches

    batches = string_view_batches(chunk)
    if batches is not None and len(batches) == 1:
        return batches[0]
    import pyarrow as pa

    arr = chunk.to_arrow(compat_level=pl.CompatLevel.newest())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.string_view():
        arr = arr.cast(pa.string_view())
    bufs = arr.buffers()
    views = np.frombuffer(bufs[1], dtype=np.uint8).reshape(-1, 16)[arr.offset:arr.offset + len(arr)]
    datas = [_NO_BYTES if b is None else np.frombuffer(b, dtype=np.uint8) for b in bufs[2:]]
    return views, datas


_IDENTITY = np.zeros(0, dtype=np.int64)
