"""fasteval.fuse: hand-worked values, inputs, ties, ids, missing queries, errors and
properties (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fasteval
from fasteval.errors import InputError, ParameterError
from tests._profile import examples

A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 1.0}}
B = {"q1": {"d3": 0.9, "d4": 0.5}, "q2": {"d4": 2.0, "d5": 1.0}}


def _canon(df: pl.DataFrame) -> pl.DataFrame:
    """The table by query id, then rank (the query order follows the input's)."""
    return df.sort(["query_id", "rank"])


def _scores(df: pl.DataFrame) -> dict[tuple[str, str], float]:
    return {(q, d): s for q, d, s, *_ in df.rows()}


def test_rrf_by_hand() -> None:
    got = _scores(fasteval.fuse([A, B], method="rrf"))
    assert got[("q1", "d1")] == 1 / 61
    assert got[("q1", "d3")] == 1 / 63 + 1 / 61
    assert got[("q1", "d4")] == 1 / 62
    assert got[("q2", "d4")] == 1 / 61 + 1 / 61
    got = _scores(fasteval.fuse([A, B], method="rrf", k=1))
    assert got[("q1", "d2")] == 1 / 3


def test_comb_family_by_hand() -> None:
    # min-max: A q1 -> d1 1, d2 .5, d3 0; B q1 -> d3 1, d4 0; q2: A d4 0 (one doc), B d4 1, d5 0
    s = _scores(fasteval.fuse([A, B], method="sum"))
    assert s == {("q1", "d1"): 1.0, ("q1", "d2"): 0.5, ("q1", "d3"): 1.0, ("q1", "d4"): 0.0,
                 ("q2", "d4"): 1.0, ("q2", "d5"): 0.0}
    m = _scores(fasteval.fuse([A, B], method="mnz"))
    assert m[("q1", "d3")] == 2.0 and m[("q1", "d1")] == 1.0 and m[("q2", "d4")] == 2.0
    a = _scores(fasteval.fuse([A, B], method="anz"))
    assert a[("q1", "d3")] == 0.5 and a[("q2", "d4")] == 0.5
    assert _scores(fasteval.fuse([A, B], method="max"))[("q1", "d3")] == 1.0
    assert _scores(fasteval.fuse([A, B], method="min"))[("q1", "d3")] == 0.0
    assert _scores(fasteval.fuse([A, B], method="med"))[("q1", "d3")] == 0.5
    g = _scores(fasteval.fuse([A, B], method="gmnz", gamma=0.5))
    assert g[("q1", "d3")] == 1.0 * math.sqrt(2)
    w = _scores(fasteval.fuse([A, B], method="wsum", weights=[0.25, 0.75]))
    assert w[("q1", "d3")] == 0.75 and w[("q1", "d1")] == 0.25


def test_rank_family_by_hand() -> None:
    isr = _scores(fasteval.fuse([A, B], method="isr"))
    assert isr[("q1", "d3")] == (1 / 9 + 1) * 2
    log_isr = _scores(fasteval.fuse([A, B], method="log_isr"))
    assert log_isr[("q1", "d1")] == 0.0  # one run: log(1)
    assert log_isr[("q1", "d3")] == (1 / 9 + 1) * math.log(2)
    rbc = _scores(fasteval.fuse([A, B], method="rbc", phi=0.5))
    assert rbc[("q1", "d3")] == 0.5 * 0.25 + 0.5
    borda = _scores(fasteval.fuse([A, B], method="bordafuse"))
    # q1: 4 candidates; A ranks d1 d2 d3 (4, 3, 2), d4 gets (4 - 3 + 1) / 2 = 1;
    # B ranks d3 d4 (4, 3), d1 and d2 get (4 - 2 + 1) / 2 = 1.5
    assert borda[("q1", "d1")] == 5.5 and borda[("q1", "d3")] == 6.0 and borda[("q1", "d4")] == 4.0


def test_condorcet_by_hand() -> None:
    runs = [{"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, {"q": {"b": 3.0, "a": 2.0, "c": 1.0}},
            {"q": {"a": 3.0, "c": 2.0, "b": 1.0}}]
    out = fasteval.fuse(runs, method="condorcet", norm=None)
    assert out.get_column("doc_id").to_list() == ["a", "b", "c"]
    assert out.get_column("score").to_list() == [3.0, 2.0, 1.0]
    # a Condorcet cycle (a > b > c > a): each document sits above one it does not lose to
    cyc = [{"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, {"q": {"b": 3.0, "c": 2.0, "a": 1.0}},
           {"q": {"c": 3.0, "a": 2.0, "b": 1.0}}]
    order = fasteval.fuse(cyc, method="condorcet", norm=None).get_column("doc_id").to_list()
    beats = {("a", "b"), ("b", "c"), ("c", "a")}
    assert all((y, x) not in beats for x, y in zip(order, order[1:], strict=False))
    # two runs that disagree: votes tie, the trec order decides (doc id descending)
    tie = [{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 2.0, "a": 1.0}}]
    assert fasteval.fuse(tie, method="condorcet").get_column("doc_id").to_list() == ["b", "a"]
    # weights break the tie
    w = fasteval.fuse(tie, method="w_condorcet", weights=[0.6, 0.4])
    assert w.get_column("doc_id").to_list() == ["a", "b"]


def test_normalisations_by_hand() -> None:
    run = {"q": {"a": 4.0, "b": 2.0, "c": 0.0}}
    other = {"q": {"z": 1.0}}
    for norm, want in [("max", 0.5), ("sum", 2 / 6), ("rank", 1 - 1 / 3), ("none", 2.0),
                       ("min-max-inverted", 0.5), ("borda", (1 - 1 / 4) + 0.5),
                       ("zmuv", 0.0)]:
        got = _scores(fasteval.fuse([run, other], method="sum", norm=norm))[("q", "b")]
        assert got == pytest.approx(want, abs=1e-15), norm
    # z-score: population standard deviation
    got = _scores(fasteval.fuse([run, other], method="sum", norm="z-score"))[("q", "a")]
    assert got == pytest.approx(2 / math.sqrt(8 / 3))
    # borda: a document the run lacks gets the mean of the points left
    got = _scores(fasteval.fuse([run, other], method="sum", norm="borda"))
    assert got[("q", "z")] == (1 - 0 / 4) + (0.5 - (3 - 1) / (2 * 4))
    # the inverted norm reverses the ranking the rank methods read
    inv = _scores(fasteval.fuse([run, other], method="rrf", norm="min-max-inverted"))
    assert inv[("q", "c")] == 1 / 61 and inv[("q", "a")] == 1 / 63


def test_output_order_and_ties() -> None:
    # d9 and d10 tie: doc id descending byte-wise ("d9" > "d10")
    runs = [{"q": {"d10": 1.0, "d9": 2.0}}, {"q": {"d10": 2.0, "d9": 1.0}}]
    out = fasteval.fuse(runs, method="sum", norm="none")
    assert out.get_column("doc_id").to_list() == ["d9", "d10"]
    assert out.get_column("rank").to_list() == [1, 2]
    # integer ids compare as their decimal text: 9 before 10
    ints = [{1: {10: 1.0, 9: 2.0}}, {1: {10: 2.0, 9: 1.0}}]
    out = fasteval.fuse(ints, method="sum", norm="none")
    assert out.get_column("doc_id").to_list() == [9, 10]
    assert out.schema["doc_id"] == pl.Int64 and out.schema["query_id"] == pl.Int64
    # tied input scores: each run ranks ties by doc id descending too
    tied = [{"q": {"a": 1.0, "b": 1.0, "c": 0.5}}, {"q": {"c": 1.0}}]
    s = _scores(fasteval.fuse(tied, method="rrf"))
    assert s[("q", "b")] == 1 / 61 and s[("q", "a")] == 1 / 62


def test_inputs_all_forms(tmp_path) -> None:
    ref = fasteval.fuse([A, B], method="mnz")
    tables = [fasteval.read_run(A), fasteval.read_run(B)]
    assert fasteval.fuse(tables, method="mnz").equals(ref)
    assert fasteval.fuse({"a": A, "b": B}, method="mnz").equals(ref)
    both = pl.concat([t.with_columns(pl.lit(n).alias("run_id")) for n, t in zip("ab", tables,
                                                                               strict=True)])
    assert fasteval.fuse(both, method="mnz").equals(ref)
    paths = []
    for name, t in zip("ab", tables, strict=True):
        p = tmp_path / f"{name}.parquet"
        t.write_parquet(p)
        paths.append(str(p))
    assert fasteval.fuse(paths, method="mnz").equals(ref)
    ranx = pytest.importorskip("ranx")
    assert fasteval.fuse([ranx.Run(A), ranx.Run(B)], method="mnz").equals(ref)
    # weights by run name
    w = fasteval.fuse({"a": A, "b": B}, method="wsum", weights={"b": 0.75, "a": 0.25})
    assert w.equals(fasteval.fuse([A, B], method="wsum", weights=[0.25, 0.75]))


def test_an_input_holding_several_runs_is_refused(tmp_path, capsys) -> None:
    """A table or parquet file whose run_id names two runs was min-max'd and fused as one
    run (its documents of both runs together); it is refused, naming the runs."""
    from fasteval.cli import main

    two = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["d1", "d2", "d3"],
                        "score": [1.0, 2.0, 3.0], "run_id": ["x", "x", "y"]})
    other = {"q1": {"d1": 3.0, "d4": 1.0}}
    with pytest.raises(InputError, match=r"run1, column 'run_id': holds 2 runs \(run_id 'x', "
                       r"'y'\); each input is one run"):
        fasteval.fuse([two, other], method="sum")
    path = tmp_path / "two.parquet"
    two.write_parquet(path)
    run = tmp_path / "other.run"
    run.write_text("q1 Q0 d1 1 3.0 r\nq1 Q0 d4 2 1.0 r\n")
    assert main(["fuse", "-m", "sum", str(run), str(path)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err == (
        f"fasteval: error: {path}, column 'run_id': holds 2 runs (run_id 'x', 'y'); each input "
        "is one run (split it by run_id: one file or table per run)\n")
    # one run_id value is one run; the table split by run_id fuses x, y and the other run
    assert fasteval.fuse([two.filter(pl.col("run_id") == "x"), other], method="sum").height == 3
    split = fasteval.fuse(pl.concat([two, pl.DataFrame(
        {"query_id": ["q1", "q1"], "doc_id": ["d1", "d4"], "score": [3.0, 1.0],
         "run_id": ["z", "z"]})]), method="sum")
    # min-max per run: x d1 0, d2 1; y d3 0 (one document); z d1 1, d4 0
    assert dict(zip(split["doc_id"], split["score"], strict=True)) == {
        "d1": 1.0, "d2": 1.0, "d3": 0.0, "d4": 0.0}


def test_rank_must_be_a_bool() -> None:
    """rank="no" was read as true (a rank column added)."""
    with pytest.raises(ParameterError, match="rank must be True or False, got 'no'"):
        fasteval.fuse([A, B], rank="no")
    assert fasteval.fuse([A, B], rank=False).columns == ["query_id", "doc_id", "score"]


def test_row_order_and_chunks_do_not_matter() -> None:
    tables = [fasteval.read_run(A), fasteval.read_run(B)]
    ref = fasteval.fuse(tables, method="rbc", phi=0.8)
    shuffled = [t.sample(fraction=1.0, shuffle=True, seed=1) for t in tables]
    chunked = [pl.concat([t.head(1), t.tail(t.height - 1)], rechunk=False) for t in tables]
    assert _canon(fasteval.fuse(shuffled, method="rbc", phi=0.8)).equals(_canon(ref))
    assert fasteval.fuse(chunked, method="rbc", phi=0.8).equals(ref)


def test_query_missing_from_a_run() -> None:
    a = {"q1": {"x": 1.0}, "q2": {"y": 2.0, "z": 1.0}}
    b = {"q1": {"x": 3.0, "w": 1.0}}
    out = fasteval.fuse([a, b], method="bordafuse")
    s = _scores(out)
    # q2: b is an empty ranking: both documents get (2 - 0 + 1) / 2 from it
    assert s[("q2", "y")] == 2 + 1.5 and s[("q2", "z")] == 1 + 1.5
    assert out.get_column("query_id").unique(maintain_order=True).to_list() == ["q1", "q2"]
    # mixed id types: text wins
    out = fasteval.fuse([{1: {"a": 1.0}}, {"1": {"a": 2.0}}], method="sum")
    assert out.rows() == [("1", "a", 0.0, 1)]


def test_input_errors() -> None:
    dup = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match="'a' appears more than once for query 'q'"):
        fasteval.fuse({"good": A, "dup": dup}, method="rrf")
    nan = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [float("nan")]})
    with pytest.raises(InputError, match="score"):
        fasteval.fuse([A, nan], method="rrf")
    inf = pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [float("inf")]})
    with pytest.raises(InputError, match="finite"):
        fasteval.fuse([A, inf], method="rrf")
    with pytest.raises(ParameterError, match="at least two runs"):
        fasteval.fuse([A], method="rrf")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"method": "nope"}, "method must be one of"),
    ({"method": "rrf", "norm": "softmax"}, "norm must be one of"),
    ({"method": "wsum"}, "weights must be given"),
    ({"method": "wsum", "weights": [1.0]}, r"one number per run \(2 runs\)"),
    ({"method": "wsum", "weights": [1.0, -1.0]}, ">= 0"),
    ({"method": "wsum", "weights": [0.0, 0.0]}, "not all zero"),
    ({"method": "wsum", "weights": [1.0, float("nan")]}, "finite"),
    ({"method": "wsum", "weights": {"x": 1.0, "y": 1.0}}, "weights"),
    ({"method": "sum", "weights": [1.0, 1.0]}, "weights must be used only by methods"),
    ({"method": "rrf", "k": 0}, "k must be a number > 0"),
    ({"method": "rrf", "k": True}, "k must be a number > 0"),
    ({"method": "sum", "k": 60}, "k must be used only by method 'rrf'"),
    ({"method": "rbc", "phi": 1.0}, "0 < phi < 1"),
    ({"method": "rbc"}, "phi must be given"),
    ({"method": "gmnz"}, "gamma must be given"),
    ({"method": "gmnz", "gamma": -1}, "gamma must be a number >= 0"),
    ({"method": "logn_isr", "sigma": 2}, "0 <= sigma <= 1"),
    ({"method": "rrf", "norm": "borda"}, "not 'borda'"),
])
def test_parameter_errors(kwargs, match) -> None:
    with pytest.raises(ParameterError, match=match):
        fasteval.fuse([A, B], **kwargs)


def test_aliases() -> None:
    ref = fasteval.fuse([A, B], method="mnz", norm="zmuv")
    assert fasteval.fuse([A, B], method="CombMNZ", norm="z-score").equals(ref)
    assert fasteval.fuse([A, B], method="comb_mnz", norm="ZMUV").equals(ref)
    assert fasteval.fuse([A, B], method="borda").equals(fasteval.fuse([A, B], method="bordafuse"))


def test_many_queries_on_threads() -> None:
    """Large enough for several parts on threads: equals the same runs fused query by query."""
    rng = np.random.default_rng(0)
    n_q, depth = 3000, 30
    runs = []
    for _ in range(3):
        q = np.repeat(np.arange(n_q), depth)
        d = rng.integers(0, 60, size=n_q * depth)
        t = pl.DataFrame({"query_id": q, "doc_id": d, "score": rng.normal(size=n_q * depth)})
        runs.append(t.unique(["query_id", "doc_id"], keep="first", maintain_order=True))
    whole = fasteval.fuse(runs, method="mnz", norm="zmuv")
    for qid in (0, 1234, n_q - 1):
        alone = fasteval.fuse([t.filter(pl.col("query_id") == qid) for t in runs], method="mnz",
                              norm="zmuv")
        assert whole.filter(pl.col("query_id") == qid).equals(alone)


_run_st = st.dictionaries(
    st.sampled_from(["q1", "q2", "q3"]),
    st.dictionaries(st.sampled_from([f"d{i}" for i in range(8)]),
                    st.integers(-5, 5).map(float), min_size=1, max_size=8),
    min_size=1, max_size=3)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=st.lists(_run_st, min_size=2, max_size=4),
       method=st.sampled_from(["sum", "mnz", "rrf", "isr", "bordafuse", "condorcet", "med"]),
       norm=st.sampled_from(["none", "min-max", "zmuv", "rank"]))
def test_properties(runs, method, norm) -> None:
    """Tied integer scores included: every document of any run is fused once; each query is
    ranked by score, ties by doc id descending; fusing is invariant to the row order of
    each run; a symmetric method is invariant to the order of the runs."""
    out = fasteval.fuse(runs, method=method, norm=norm)
    docs = {(q, d) for r in runs for q, dd in r.items() for d in dd}
    assert set(zip(out["query_id"], out["doc_id"], strict=True)) == docs
    assert out.height == len(docs)
    for _, group in out.group_by("query_id", maintain_order=True):
        rows = list(zip(group["score"], group["doc_id"], group["rank"], strict=True))
        assert [r[2] for r in rows] == list(range(1, len(rows) + 1))
        for (s1, d1, _), (s2, d2, _) in zip(rows, rows[1:], strict=False):
            assert s1 > s2 or (s1 == s2 and d1 > d2)
    reversed_rows = [fasteval.read_run(r).reverse() for r in runs]
    assert _canon(fasteval.fuse(reversed_rows, method=method, norm=norm)).equals(_canon(out))
    again = fasteval.fuse(list(reversed(runs)), method=method, norm=norm)
    mine = _scores(out)
    for key, value in _scores(again).items():
        assert value == pytest.approx(mine[key], rel=1e-12, abs=1e-12)


def test_empty_runs() -> None:
    empty = pl.DataFrame({"query_id": pl.Series([], dtype=pl.Utf8),
                          "doc_id": pl.Series([], dtype=pl.Utf8),
                          "score": pl.Series([], dtype=pl.Float64)})
    out = fasteval.fuse([empty, empty], method="rrf")
    assert out.height == 0 and out.columns == ["query_id", "doc_id", "score", "rank"]
    # an empty run gives Borda's mean points: (1 - 0 + 1) / 2 = 1, plus 1 from the other
    assert fasteval.fuse([empty, {"q": {"a": 1.0}}], method="bordafuse").rows() == [
        ("q", "a", 2.0, 1)]


def test_errors_in_dict_runs_name_the_run() -> None:
    """read_run names a dict only by its type ('run (builtins.dict)'): among several dicts
    the error now says which run it is, by position or by its key."""
    nan = {"q1": {"d1": float("nan")}}
    with pytest.raises(InputError, match=r"^run2, row 0, column 'score': score is NaN"):
        fasteval.fuse([A, nan, B], method="rrf")
    with pytest.raises(InputError, match=r"^dense: the run dict is empty"):
        fasteval.fuse({"bm25": A, "dense": {}}, method="rrf")


def test_weights_mapping_with_the_runs_keys() -> None:
    """Runs keyed by non-text keys are named str(key); weights keyed like the runs match
    them (they were refused: 'one weight for each run name ['1', '2'], got {1: 0.3, ...}')."""
    a = {"q1": {"d1": 1.0, "d2": 0.5}}
    b = {"q1": {"d2": 0.5, "d3": 0.2}}
    out = fasteval.fuse({1: a, 2: b}, method="wsum", weights={1: 0.3, 2: 0.7})
    assert out.rows() == [("q1", "d2", 0.7, 1), ("q1", "d1", 0.3, 2), ("q1", "d3", 0.0, 3)]
    with pytest.raises(ParameterError, match="one weight for each run name"):  # 1 and '1'
        fasteval.fuse({1: a, 2: b}, method="wsum", weights={1: 0.3, "1": 0.3, 2: 0.7})


def test_weights_of_a_table_follow_its_run_ids_first_appearance() -> None:
    """A sequence of weights for one table with a run_id column goes to the run ids in the
    order they first appear; a mapping by run id does not depend on the row order."""
    t = pl.DataFrame({"run_id": ["x", "x", "y"], "query_id": ["q"] * 3,
                      "doc_id": ["d1", "d2", "d3"], "score": [1.0, 2.0, 5.0]})
    # x min-max: d1 0, d2 1; y (one document): d3 0
    assert _scores(fasteval.fuse(t, method="wsum", weights=[1.0, 0.0])) == {
        ("q", "d2"): 1.0, ("q", "d1"): 0.0, ("q", "d3"): 0.0}
    flipped = t.reverse()  # y first: the same list now weights y
    assert _scores(fasteval.fuse(flipped, method="wsum", weights=[0.0, 1.0])) == {
        ("q", "d2"): 1.0, ("q", "d1"): 0.0, ("q", "d3"): 0.0}
    for table in (t, flipped):
        assert _scores(fasteval.fuse(table, method="wsum", weights={"x": 1.0, "y": 0.0})) == {
            ("q", "d2"): 1.0, ("q", "d1"): 0.0, ("q", "d3"): 0.0}
