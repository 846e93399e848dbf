"""`fasteval trec-eval --compat 9` against pytrec_eval (trec_eval 9.0.8's C code), line by
line: random qrels and runs written as TREC text (scores of one decimal, so many ties;
integer-looking and text doc ids, whose tie order is docno descending byte-wise; unjudged
and negatively judged documents; topics in one file only; rankings longer than -M), under
flag combinations (-q -c -l -M -N -J -n, sets, parameterised measures).

The expected output is rebuilt from pytrec_eval's per-topic values with trec_eval's print
formats (``%-22s\\t%s\\t%6.4f``, counts as integers, ``runid`` from the last run line,
``relstring`` worked here), its output order (pytrec_eval's keys follow trec_eval's measure
table), its summaries (means; sums for the counts; gm_* as exp(mean(log(max(x, 1e-5))));
-c: divided by every qrels topic and num_rel recounted from the qrels) and -M (pytrec_eval
has no -M: the run handed over is cut to trec_eval's first M). Each pytrec_eval measure is
computed by an evaluator of its own: several parameterised ones in one evaluator corrupt
its memory.
"""

from __future__ import annotations

import io
import math
import random
import re
from pathlib import Path

import pytest

from fasteval.cli.trec_eval_cmd import parse_args, run_trec_eval

pytrec_eval = pytest.importorskip("pytrec_eval")

INT = {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
SUM = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
SUMMARY_ONLY = {"runid", "num_q", "gm_map", "gm_bpref"}

FLAGSETS = [
    [], ["-q"], ["-q", "-c"], ["-l", "2", "-q"], ["-M", "5", "-q"], ["-N", "1000", "-q"],
    ["-J", "-q"], ["-n", "-q"], ["-m", "all_trec", "-q"], ["-m", "official", "-q"],
    ["-m", "all_trec", "-q", "-c", "-M5", "-l2"], ["-m", "all_trec", "-J", "-c", "-q"],
    ["-mP.5,10", "-mndcg_cut.3", "-mset_F.0.5", "-msuccess.1,5", "-miprec_at_recall", "-q"],
    ["-mP.5,10", "-mndcg_cut.3", "-mset_F.0.5", "-msuccess.1,5", "-q", "-c", "-M5", "-J"],
    ["-mmap", "-mrelstring", "-q", "-mgm_map", "-mgm_bpref", "-mnum_q"],
    ["-mall_trec", "-n", "-q", "-l2", "-J"],
    ["-mutility", "-m11pt_avg", "-mndcg", "-mRprec_mult.0.5,2", "-q"],
    ["-mrecall.3", "-mmap_cut.2,7", "-mrelative_P.4", "-mset_P", "-mset_recall", "-mset_map",
     "-mset_relative_P", "-q", "-c"],
    ["-m", "set", "-q"], ["-m", "set", "-c", "-q", "-M3"],
    ["-m", "official", "-m", "set", "-q", "-J"],
    ["-mbinG", "-mG", "-mndcg_rel", "-mRndcg", "-minfAP", "-mbpref", "-q", "-l3"],
]


def _order(docs: dict[str, float]) -> list[str]:
    return sorted(docs, key=lambda d: (docs[d], d.encode()), reverse=True)


def _case(rng: random.Random):
    qpool = ["1", "10", "2", "9", "003", "q1", "Qb", "a.b"]
    dpool = ["9", "10", "100", "1", "0", "d1", "D2", "d10", "a#b", "z", "é", "x-1"] + [
        f"doc{i}" for i in range(20)]
    qs = rng.sample(qpool, rng.randint(1, 6))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in qs:
        kind = rng.random()
        if kind > 0.12:
            docs = rng.sample(dpool, rng.randint(1, 15))
            qrels[q] = {d: rng.choice([-1, -2, 0, 0, 1, 1, 2, 3]) for d in docs}
            if max(qrels[q].values()) < 0:  # trec_eval's undefined behaviour (pytrec_eval hangs)
                qrels[q][docs[0]] = 0
        if kind < 0.9 or q not in qrels:
            docs = rng.sample(dpool, rng.randint(1, 25))
            run[q] = {d: round(rng.random() * rng.choice([1, 2, 0.3]), 1) for d in docs}
    both = [q for q in run if q in qrels]
    if not both:  # 9.0.8 stops on it (tests/core/test_trec_eval_cli.py)
        qrels[next(iter(run))] = {"d1": 1}
    return qrels, run


def _write(qrels, run, tmp: Path) -> tuple[str, str]:
    q, r = tmp / "qrels", tmp / "run"
    q.write_text("".join(f"{a} 0 {d} {g}\n" for a, ds in qrels.items() for d, g in ds.items()),
                 encoding="utf-8")
    lines = [f"{a} Q0 {d} {i} {s} runA\n" for a, ds in run.items()
             for i, (d, s) in enumerate(ds.items())]
    lines[-1] = lines[-1].replace("runA", "lastTag")
    r.write_text("".join(lines), encoding="utf-8")
    return str(q), str(r)


def _fmt(name: str, qid: str, v: float, integer: bool) -> str:
    if integer:
        return f"{name:<22}\t{qid}\t{int(v)}"
    if math.isnan(v):
        return f"{name:<22}\t{qid}\t{'-nan' if math.copysign(1, v) < 0 else 'nan':>6}"
    return f"{name:<22}\t{qid}\t{v:6.4f}"


def _relstring(judged: dict[str, int], docs: list[str], n: int = 10) -> str:
    out = []
    for d in docs[:n]:
        g = judged.get(d)
        out.append("-" if g is None else "." if g < 0 else ">" if g > 9 else str(g))
    return "".join(out)


def _pykey(name: str) -> str:
    """pytrec_eval's key of a printed name (it keys set_F.0.5 as set_F)."""
    for fam in ("set_F", "utility", "11pt_avg"):
        if name.startswith(fam + "_"):
            return fam
    return name


def _family(key: str) -> tuple[str, float]:
    m = re.match(r"^(.*?)_([0-9.]+)$", key)
    return (m.group(1), float(m.group(2))) if m else (key, 0.0)


def _expected(qrels, run, flags: list[str], printed_names: set[str]) -> list[str]:
    o = parse_args([*flags, "q", "r"])
    measures = set(o.measures or ["official"]) | {"map", "bpref"}
    if o.max_docs:
        run = {q: {d: ds[d] for d in _order(ds)[: o.max_docs]} for q, ds in run.items()}
    res: dict[str, dict[str, float]] = {}
    for m in measures:
        ev = pytrec_eval.RelevanceEvaluator(qrels, {m}, relevance_level=o.level,
                                            judged_docs_only_flag=o.judged_only)
        for q, vals in ev.evaluate({q: ds for q, ds in run.items() if q in qrels}).items():
            res.setdefault(q, {}).update(vals)
    any_q = next(iter(qrels))
    table = [_family(k)[0] for k in pytrec_eval.RelevanceEvaluator(
        qrels, {"all_trec"}).evaluate({any_q: {"x": 1.0}})[any_q]]

    def rank(name: str) -> tuple[int, float]:
        fam, p = _family("relstring" if name.startswith("relstring") else _pykey(name))
        return (table.index(fam), p)

    # which members a -m list names is the parser's business (tests/core/test_parser.py);
    # every name printed must be one pytrec_eval computes, in trec_eval's order
    names = sorted(printed_names, key=rank)
    qids = sorted(res, key=lambda s: s.encode())
    lines = []
    if o.per_query:
        for q in qids:
            for n in names:
                if n in SUMMARY_ONLY:
                    continue
                if n.startswith("relstring"):
                    docs = _order(run[q])
                    if o.judged_only:
                        docs = [d for d in docs if qrels[q].get(d, -1) >= 0]
                    lines.append(f"{n:<22}\t{q}\t'{_relstring(qrels[q], docs)}'")
                else:
                    lines.append(_fmt(n, q, res[q][_pykey(n)], n in INT))
    if o.summary:
        nq = len(qrels) if o.complete else len(qids)
        for n in names:
            if n.startswith("relstring"):
                continue
            if n == "runid":
                lines.append(f"{'runid':<22}\tall\tlastTag")
                continue
            if n == "num_q":
                lines.append(_fmt(n, "all", nq, True))
                continue
            base = {"gm_map": "map", "gm_bpref": "bpref"}.get(n, _pykey(n))
            col = [res[q][base] for q in qids] + [0.0] * (nq - len(qids))
            if n in ("gm_map", "gm_bpref"):
                v = math.exp(sum(math.log(max(x, 1e-5)) for x in col) / nq)
            elif n == "num_rel" and o.complete:
                v = sum(1 for ds in qrels.values() for g in ds.values() if g > 0)
            elif n in SUM:
                v = sum(col)
            else:
                v = sum(col) / nq
            lines.append(_fmt(n, "all", v, n in INT))
    return lines


@pytest.mark.parametrize("seed", range(8))
def test_trec_eval_command_against_pytrec_eval(seed: int, tmp_path: Path) -> None:
    qrels, run = _case(random.Random(seed))
    qp, rp = _write(qrels, run, tmp_path)
    for flags in FLAGSETS:
        buf = io.StringIO()
        assert run_trec_eval(parse_args(["--compat", "9", *flags, qp, rp]), out=buf) == 0
        got = buf.getvalue().splitlines()
        printed = {line.split("\t")[0].rstrip() for line in got}
        want = _expected(qrels, run, flags, printed)
        diff = [(g, w) for g, w in zip(got, want, strict=False) if g != w][:5]
        assert got == want, (flags, len(got), len(want), diff)


def test_printed_names_follow_the_sets() -> None:
    # the names the differential takes from the output: the sets' members, no more, no less
    qrels, run = {"1": {"a": 1, "b": 0}}, {"1": {"a": 0.5, "b": 0.5}}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run)["1"]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        qp, rp = _write(qrels, run, Path(tmp))
        for nick in ("all_trec", "official", "set"):
            buf = io.StringIO()
            run_trec_eval(parse_args(["--compat", "9", "-q", "-m", nick, qp, rp]), out=buf)
            printed = {line.split("\t")[0].rstrip() for line in buf.getvalue().splitlines()}
            want = set(pytrec_eval.RelevanceEvaluator(qrels, {nick}).evaluate(run)["1"])
            assert printed == want, (nick, printed ^ want)
    assert len(ev) == 94 + 1  # 9.0.8's all_trec summary lines, plus relstring
