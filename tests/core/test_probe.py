"""The open-addressing probe of kernels/ids.py, with keys that collide on purpose.

Real 64-bit key collisions cannot be produced on demand, so these tests hand the kernels
tables whose keys are equal for different ids: every match must still be confirmed on the
ids themselves, and a probe must walk past entries whose key matches but whose id does not.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fasteval.kernels import ids as K
from fasteval.prepare.views import id_column

SHIFT = 61  # a table of 2**(64 - 61) = 8 slots


def _key_at(slot: int) -> int:
    """A key whose home slot is ``slot`` in the 8-slot table."""
    return next(h for h in range(1, 10_000) if K.hash_slot(h, SHIFT) == slot)


def test_probe_walks_the_path_and_wraps_around():
    h = _key_at(7)  # home is the last slot: the path wraps to slot 0
    other = _key_at(3)
    keys = np.array([other, h, h], dtype=np.int64)
    table = np.zeros(8, dtype=np.int64)
    table[7], table[0], table[1] = 1, 2, 3  # entry 0 (another key), then two entries with key h
    # (slot, what it holds): entry + 1, or 0 for the empty slot that ends the path
    assert K.probe(table, keys, h, SHIFT, -1) == (0, 2)  # skips the other key at home
    assert K.probe(table, keys, h, SHIFT, 0) == (1, 3)  # on past an entry the caller rejected
    assert K.probe(table, keys, h, SHIFT, 1) == (2, 0)  # the empty slot ending the path
    assert K.probe(table, keys, other, SHIFT, -1) == (3, 0)  # its home is empty: absent
    # a table longer than its 8 slots in use (rank_and_label reuses one): the path stays inside
    long = np.concatenate([table, np.full(8, 3, dtype=np.int64)])
    assert K.probe(long, keys, h, SHIFT, 1) == (2, 0)


def test_code_table_reports_a_clash_and_keeps_every_code():
    slots, shift, clash = K.code_table(np.array([5, 9, 5], dtype=np.int64))
    assert clash
    assert sorted(slots[slots > 0].tolist()) == [1, 2, 3]
    slots, shift, clash = K.code_table(np.array([5, 9, 11], dtype=np.int64))
    assert not clash and len(slots) == 8 and shift == SHIFT


@pytest.mark.parametrize("ids, probes", [
    (["alpha", "b", "a-much-longer-id-than-twelve-bytes", "c"],
     ["b", "a-much-longer-id-than-twelve-bytes", "c", "alpha", "zz", "a-much-longer-id-than-twelve-bytez"]),
    ([10, 20, 30, 40], [20, 30, 40, 10, 50]),
], ids=["text", "int"])
def test_lookup_confirms_every_key_match_on_the_ids(ids, probes):
    table_col = id_column(pl.Series(ids))
    col = id_column(pl.Series(probes))
    rows = np.arange(len(probes), dtype=np.int64)
    keys = np.empty(len(probes), dtype=np.int64)
    K.id_keys(col, rows, 0, keys)
    # every table id carries the key of the first probe: all collide with it
    table_key = np.full(len(ids), keys[0], dtype=np.int64)
    slots, shift, clash = K.code_table(table_key)
    assert clash
    out = np.empty(len(probes), dtype=np.int64)
    K.lookup_ids(col, rows, slots, shift, table_key, table_col, out)
    # the first probe is found among its colliding entries; the others carry keys that no
    # table entry holds now, so they are absent even when the id is in the table
    assert out.tolist() == [ids.index(probes[0])] + [-1] * (len(probes) - 1)
    # with the true keys every id is found, and unknown ids are not
    true_key = np.empty(len(ids), dtype=np.int64)
    K.id_keys(table_col, np.arange(len(ids), dtype=np.int64), 0, true_key)
    slots, shift, clash = K.code_table(true_key)
    K.lookup_ids(col, rows, slots, shift, true_key, table_col, out)
    assert out.tolist() == [ids.index(p) if p in ids else -1 for p in probes]
