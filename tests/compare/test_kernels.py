"""Resampling kernels against independent numpy oracles; determinism across BLAS threads."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fasteval.compare import compare
from fasteval.compare.kernels import (
    bootstrap_totals,
    sign_words,
    signflip_null,
    signflip_observed,
    signflip_sums,
)


def _signs_from_words(words: np.ndarray, n: int) -> np.ndarray:
    """(m, n) +-1 matrix: bit ``q % 64`` of ``words[q // 64, r]`` set -> +1 for query q."""
    q = np.arange(n)
    bits = (words[q // 64, :] >> (q % 64).astype(np.uint64)[:, None]) & np.uint64(1)
    return np.where(bits.T == 1, 1.0, -1.0)


@pytest.mark.parametrize(("n_series", "n"), [(1, 9), (3, 1003), (13, 777), (30, 2050)])
def test_signflip_sums_equal_dense_sign_matrix_product(n_series, n):
    rng = np.random.default_rng(n)
    y = rng.normal(size=(n_series, n))
    m = 37
    keys = rng.integers(0, 2**63, size=m, dtype=np.int64).astype(np.uint64)
    words = np.empty(((n + 63) // 64, m), dtype=np.uint64)
    sign_words(keys, words)
    pad = -(-n_series // 16) * 16 if n_series > 8 else n_series
    yp = np.concatenate([y, np.zeros((pad - n_series, n))])
    out = np.empty((m, pad))
    signflip_sums(yp, words, out)
    ref = _signs_from_words(words, n) @ y.T
    np.testing.assert_allclose(out[:, :n_series], ref, rtol=0, atol=1e-11 * np.abs(y).sum())
    assert np.all(out[:, n_series:] == 0.0)


def test_all_plus_and_all_minus_signs_give_observed_exactly():
    rng = np.random.default_rng(3)
    n = 5003
    y = rng.uniform(-1, 1, size=(18, n)) / 3  # not dyadic: sums round
    y = np.concatenate([y, np.zeros((14, n))])  # 32 series (whole SIMD blocks)
    words = np.zeros(((n + 63) // 64, 2), dtype=np.uint64)
    words[:, 0] = np.uint64(2**64 - 1)
    out = np.empty((2, y.shape[0]))
    signflip_sums(y, words, out)
    obs = np.empty(y.shape[0])
    signflip_observed(y, obs)
    assert out[0].tolist() == obs.tolist()  # bit for bit: same summation order
    assert out[1].tolist() == (-obs).tolist()
    np.testing.assert_allclose(obs, y.sum(axis=1), rtol=1e-12, atol=1e-12)


def test_signflip_null_counts_match_oracle_on_same_signs():
    rng = np.random.default_rng(8)
    n, R = 300, 500
    y = np.round(rng.normal(0.02, 0.2, size=(10, n)) * 8) / 8  # dyadic: exact sums and ties
    obs, ext, total = signflip_null(y, R, np.random.default_rng(4), exact=False)
    keys = np.random.default_rng(4).bit_generator.random_raw(R).astype(np.uint64)
    words = np.empty(((n + 63) // 64, R), dtype=np.uint64)
    sign_words(keys, words)
    T = _signs_from_words(words, n) @ y.T
    assert total == R
    assert ext.tolist() == (np.abs(T) >= np.abs(y.sum(axis=1))).sum(axis=0).tolist()


def test_bootstrap_totals_same_with_one_and_two_blas_threads():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(5)
    y = rng.uniform(size=(7, 20_000))
    outs = []
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(limits=threads, user_api="blas"):
            outs.append(bootstrap_totals(y, 700, np.random.default_rng(11))[1])
    assert np.array_equal(outs[0], outs[1])
    # and equal to the counts drawn independently of BLAS, times the series in float64
    from fasteval.compare.kernels import bootstrap_counts

    keys = np.random.default_rng(11).bit_generator.random_raw(700).astype(np.uint64)
    counts = np.empty((700, 20_000), dtype=np.float32)
    bootstrap_counts(keys, counts)
    np.testing.assert_allclose(outs[0], counts.astype(np.float64) @ y.T, rtol=1e-6)


def test_compare_same_result_with_one_and_two_blas_threads():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(12)
    n = 4000
    base = rng.uniform(size=n)
    frame = pl.concat(
        [
            pl.DataFrame(
                {
                    "run_id": name,
                    "query_id": np.arange(n),
                    "measure": "map",
                    "value": np.clip(base + rng.normal(shift, 0.1, n), 0, 1),
                }
            )
            for name, shift in (("a", 0.0), ("b", 0.01), ("c", -0.005), ("d", 0.02))
        ]
    )
    out = []
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(limits=threads, user_api="blas"):
            c = compare(frame, tests=["randomization", "bootstrap"], n_resamples=2000, seed=3)
        out.append(c.to_frame())
    assert out[0].equals(out[1])


def test_sampled_tests_hold_no_array_per_resample():
    # the randomization test and the randomised Tukey HSD draw their keys chunk by chunk:
    # memory stays flat in n_resamples (all keys at once would hold 8 bytes per resample, the HSD
    # 16: 8 GB and 16 GB at the 10**9 resamples compare() accepts), and the p-values are
    # those of the whole stream drawn at once
    import tracemalloc

    from fasteval.compare.anova import permuted_ranges, randomized_tukey
    from fasteval.compare.randomization import signflip_test

    R = 1_000_000
    y = np.array([[0.3, -0.1, 0.2, 0.25, -0.05]])
    x = np.array([[0.5, 0.2, 0.9, 0.4], [0.3, 0.2, 0.6, 0.1], [0.4, 0.1, 0.5, 0.3]])
    pi, pj = np.array([0, 0, 1]), np.array([1, 2, 2])
    signflip_test(y, 10, np.random.default_rng(0), exact=False)  # compiled outside the trace
    randomized_tukey(x, pi, pj, 10, np.random.default_rng(0))
    tracemalloc.start()
    try:
        _, p_flip, _ = signflip_test(y, R, np.random.default_rng(1), exact=False)
        _, p_hsd = randomized_tukey(x, pi, pj, R, np.random.default_rng(2))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20  # one array of R keys alone is 7.6 MiB

    keys = np.random.default_rng(1).bit_generator.random_raw(R).astype(np.uint64)
    words = np.empty((1, R), dtype=np.uint64)
    sign_words(keys, words)
    sums = _signs_from_words(words, y.shape[1]) @ y[0]
    extreme = np.sum(np.abs(sums) >= abs(y.sum()) - 1e-12)
    assert p_flip[0] == (extreme + 1) / (R + 1)

    keys = np.random.default_rng(2).bit_generator.random_raw(R).astype(np.uint64)
    ranges = np.empty(R)
    permuted_ranges(x, keys, ranges)
    gaps = np.abs(x.sum(axis=1)[pi] - x.sum(axis=1)[pj])
    extreme = (ranges[:, None] >= gaps[None, :] - 1e-11 * x.max(axis=0).sum()).sum(axis=0)
    assert p_hsd.tolist() == ((extreme + 1) / (R + 1)).tolist()
