"""The string views read through the Arrow C stream interface (fasteval.prepare.arrow_c) are
pyarrow's, byte for byte, and stay valid after polars' series is gone."""

from __future__ import annotations

import gc

import numpy as np
import polars as pl
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.prepare.arrow_c import string_view_batches
from fasteval.prepare.views import id_column
from tests._profile import examples


def _pyarrow_views(chunk: pl.Series) -> tuple[np.ndarray, list[np.ndarray]]:
    arr = chunk.to_arrow(compat_level=pl.CompatLevel.newest())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    bufs = arr.buffers()
    views = np.frombuffer(bufs[1], dtype=np.uint8).reshape(-1, 16)[arr.offset:arr.offset + len(arr)]
    return views, [np.frombuffer(b, dtype=np.uint8) for b in bufs[2:] if b is not None]


@settings(max_examples=examples(200), deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.text(max_size=40)), max_size=60),
       cut=st.tuples(st.integers(0, 60), st.integers(0, 60)), split=st.integers(0, 60))
def test_views_are_pyarrows(values, cut, split):
    s = pl.Series(values, dtype=pl.Utf8)
    s = s.slice(min(cut[0], len(s)), cut[1])
    if 0 < split < len(s):  # two chunks
        s = pl.concat([s.slice(0, split), s.slice(split)], rechunk=False)
    for chunk in s.get_chunks():
        [(views, datas)] = string_view_batches(chunk)
        want_views, want_datas = _pyarrow_views(chunk)
        assert views.shape == (len(chunk), 16)
        assert np.array_equal(views, want_views)
        assert [bytes(d) for d in datas if len(d)] == [bytes(d) for d in want_datas if len(d)]
        assert not views.flags.writeable


def test_buffers_outlive_the_series():
    s = pl.Series(["a value longer than twelve bytes " + str(i) for i in range(1000)])
    [(views, datas)] = string_view_batches(s)
    want = bytes(datas[0][:40])
    del s
    gc.collect()
    junk = [pl.Series(["x" * 50] * 1000) for _ in range(20)]  # reuse of freed memory would show
    assert bytes(datas[0][:40]) == want and views.shape == (1000, 16)
    del junk


def test_not_a_string_view_export():
    assert string_view_batches(pl.Series([1, 2, 3])) is None


def test_id_column_of_several_chunks_matches_one_chunk():
    a = pl.Series(["short", "a value longer than twelve bytes", "b"])
    b = pl.Series(["another value past twelve bytes", "c"])
    many = pl.concat([a, b], rechunk=False)
    one = many.rechunk()
    got, want = id_column(many), id_column(one)
    texts = []
    for col in (got, want):
        _, _, v8, v32, data, base = col
        out = []
        for i in range(v8.shape[0]):
            n = int(v32[i, 0])
            if n <= 12:
                out.append(bytes(v8[i, 4:4 + n]))
            else:
                buf, off = int(v32[i, 2]), int(v32[i, 3])
                start = int(base[buf]) + off
                out.append(bytes(data[start:start + n]))
        texts.append(out)
    assert texts[0] == texts[1] == [t.encode() for t in many.to_list()]
