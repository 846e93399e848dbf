"""CPU benchmark: fasteval.sas against haystack-ai's SASEvaluator, same model, same pairs, one run.

Pairs are synthetic English-like sentences (4-30 words); ``repeat`` of all texts (predictions
and golds together) are repeats of another text, as when golds or stock answers recur.

Run::

    python benches/bench_sas.py --pairs 5000              # real default model (all-MiniLM-L6-v2)
    python benches/bench_sas.py --pairs 100000 --skip-haystack

It prints one JSON object: pairs/s for each engine, the ratio, and the largest difference
between the two engines' scores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

WORDS = (
    "the a of and to in is was for on that with as by at from it be are this an or which has have "
    "not his her their one two three first new city capital river country people year time world "
    "war state government company music film team game water light energy system school university "
    "church king queen president party army species island mountain language book song album series "
    "season player club league station road bridge tower museum market price bank money law court "
    "police hospital doctor disease cell gene protein planet star moon sun earth ocean forest animal "
    "bird fish tree flower food wine coffee bread car train plane ship engine computer software data "
    "network internet phone radio television newspaper author painter poet scientist engineer "
    "built founded born died won lost wrote played sang discovered invented named called located "
    "known used made became began ended opened closed north south east west large small old young "
    "long short high low early late famous popular major minor modern ancient national local public "
    "private paris london rome berlin tokyo france england italy germany japan china india brazil "
    "about after before during between under over into through against without within around"
).split()


def make_texts(n: int, seed: int) -> list[str]:
    """``n`` distinct-ish sentences of 4-30 words (length skewed short, like answers)."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.lognormal(2.2, 0.55, n).astype(int), 4, 30)
    words = np.array(WORDS)
    flat = words[rng.integers(0, len(words), int(lengths.sum()))]
    out = []
    pos = 0
    for i, k in enumerate(lengths.tolist()):
        out.append(" ".join(flat[pos:pos + k].tolist()) + f" {i}")  # the number keeps texts distinct
        pos += k
    return out


def make_pairs(n_pairs: int, repeat: float = 0.3, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n_pairs`` (prediction, gold) pairs where a share ``repeat`` of the 2n texts are repeats.

    Examples
    --------
    >>> p, g = make_pairs(1000, 0.3)
    >>> round(1 - len(set(p) | set(g)) / 2000, 2)
    0.3
    """
    rng = np.random.default_rng(seed + 1)
    n_texts = 2 * n_pairs
    n_unique = int(round(n_texts * (1 - repeat)))
    pool = make_texts(n_unique, seed)
    slots = np.concatenate([np.arange(n_unique), rng.integers(0, n_unique, n_texts - n_unique)])
    rng.shuffle(slots)
    texts = [pool[i] for i in slots.tolist()]
    return texts[:n_pairs], texts[n_pairs:]


def run_fasteval(preds, golds, model, device, batch_size):
    from fasteval.sas import sas

    t0 = time.perf_counter()
    out, stats = sas(preds, golds, model=model, device=device, batch_size=batch_size,
                     output="arrow", return_stats=True)
    wall = time.perf_counter() - t0
    return np.asarray(out.column("sas").to_numpy(), dtype=np.float64), wall, stats


def run_haystack(preds, golds, model, device, batch_size):
    from haystack.components.evaluators import SASEvaluator
    from haystack.utils import ComponentDevice

    ev = SASEvaluator(model=model, batch_size=batch_size, device=ComponentDevice.from_str(device))
    ev.warm_up()
    t0 = time.perf_counter()
    res = ev.run(ground_truth_answers=golds, predicted_answers=preds)
    wall = time.perf_counter() - t0
    return np.asarray(res["individual_scores"], dtype=np.float64), wall


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=100_000)
    ap.add_argument("--repeat", type=float, default=0.3)
    ap.add_argument("--model", default=None, help="model folder (default: all-MiniLM-L6-v2)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--haystack-batch-size", type=int, default=32, help="haystack's default is 32")
    ap.add_argument("--skip-haystack", action="store_true")
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    args = ap.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    from fasteval.sas.model import default_model_path, load_model

    model = args.model or default_model_path()
    preds, golds = make_pairs(args.pairs, args.repeat)
    load_model(model, device=args.device)  # load outside the timed part, as haystack's warm_up
    fe_scores, fe_wall, stats = run_fasteval(preds, golds, model, args.device, args.batch_size)
    report = {
        "pairs": args.pairs,
        "repeat": args.repeat,
        "unique_texts": stats.n_unique_texts,
        "torch_threads": torch.get_num_threads(),
        "fasteval_s": round(fe_wall, 3),
        "fasteval_pairs_per_s": round(args.pairs / fe_wall, 1),
        "fasteval_forward_s": round(stats.forward_s, 3),
        "fasteval_batch_size": args.batch_size,
    }
    if not args.skip_haystack:
        hs_scores, hs_wall = run_haystack(preds, golds, model, args.device, args.haystack_batch_size)
        report.update({
            "haystack_s": round(hs_wall, 3),
            "haystack_pairs_per_s": round(args.pairs / hs_wall, 1),
            "haystack_batch_size": args.haystack_batch_size,
            "speedup": round(hs_wall / fe_wall, 2),
            "max_abs_diff": float(np.max(np.abs(hs_scores - fe_scores))),
        })
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
