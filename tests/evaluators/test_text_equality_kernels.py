"""The byte-wise text comparisons of kernels/documents.py equal Python's string equality.

Every key match of the evaluators is confirmed by one of these kernels (packed texts, Arrow
large strings, Arrow string views), so each must compare texts of any length exactly: whole
8-byte words, a masked tail, texts that end at the very end of an unpadded buffer.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from fasteval.kernels import documents as D
from tests._profile import examples

# few letters, so that equal texts, shared prefixes and equal lengths are frequent
TEXTS = st.lists(st.text(alphabet="ab\u00e9", max_size=30), min_size=1, max_size=12)


def _packed(texts: list[str]):
    raw = b"".join(t.encode() + b"\0" for t in texts)
    buf = np.zeros((len(raw) + 16) // 8 * 8 + 8, dtype=np.uint8)
    buf[: len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    lens = np.array([len(t.encode()) for t in texts], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens + 1)[:-1]]).astype(np.int64)
    return buf.view(np.uint64), starts, lens


def _large(texts: list[str]):
    arr = pa.array(texts, pa.large_string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=len(texts) + 1)
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] else np.zeros(0, np.uint8)
    data = data[: offsets[-1]]  # no bytes past the last text: the tail is read bytewise
    return offsets, data[: data.shape[0] // 8 * 8].view(np.uint64), data


def _views(texts: list[str]):
    arr = pl.Series(texts, dtype=pl.Utf8).to_arrow(compat_level=pl.CompatLevel.newest())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    bufs = arr.buffers()
    views = np.frombuffer(bufs[1], dtype=np.uint64)[: 2 * len(texts)].reshape(len(texts), 2)
    datas = [np.frombuffer(b, dtype=np.uint8) for b in bufs[2:] if b is not None]
    base = np.zeros(max(len(datas), 1), dtype=np.int64)
    if len(datas) > 1:
        base[1:] = np.cumsum([len(d) for d in datas])[:-1]
    data = np.concatenate(datas) if datas else np.zeros(0, np.uint8)
    return views, base, data[: data.shape[0] // 8 * 8].view(np.uint64), data


@settings(max_examples=examples(60), deadline=None)
@given(a=TEXTS, b=TEXTS)
def test_each_kernel_is_string_equality(a, b):
    pa_, pb_ = _packed(a), _packed(b)
    la, lb = _large(a), _large(b)
    va, vb = _views(a), _views(b)
    for i in range(len(a)):
        for j in range(len(b)):
            ia = np.array([i], dtype=np.int64)
            ib = np.array([j], dtype=np.int64)
            want = a[i] == b[j]
            assert D.texts_equal(pa_[0], pa_[1], pa_[2], ia, pb_[0], pb_[1], pb_[2], ib) == want
            assert D.arrow_texts_equal(la[0], la[1], la[2], ia, lb[0], lb[1], lb[2], ib) == want
            assert D.view_texts_equal(va[0], va[1], va[2], va[3], ia, vb[0], vb[1], vb[2], vb[3],
                                      ib) == want
    # all pairs at once: equal only when every pair is
    ia = np.arange(len(a), dtype=np.int64)
    assert D.arrow_texts_equal(la[0], la[1], la[2], ia, la[0], la[1], la[2], ia)
    assert D.view_texts_equal(va[0], va[1], va[2], va[3], ia, va[0], va[1], va[2], va[3], ia)
    assert D.texts_equal(pa_[0], pa_[1], pa_[2], ia, pa_[0], pa_[1], pa_[2], ia)
