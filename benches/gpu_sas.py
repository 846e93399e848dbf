"""GPU benchmark: fasteval.sas on 1,000,000 (prediction, gold) pairs with the default model.

Reports pairs/s, GPU utilization (sampled with NVML in a thread while scoring), peak GPU memory
(``torch.cuda.max_memory_allocated``) and the share of wall time inside the model's forward
passes (GPU time from CUDA events around each forward, over the wall time of the whole
``sas()`` call: input conversion, dedup, tokenization, transfers, scoring included).

Run::

    python benches/gpu_sas.py --model PATH --out results/   # PATH: all-MiniLM-L6-v2 folder

The device machine has no polars; the script asks ``sas()`` for an Arrow table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class UtilSampler(threading.Thread):
    """Sample GPU utilization (percent) every ``interval`` seconds via NVML (or nvidia-smi)."""

    def __init__(self, index: int = 0, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.index = index
        self.interval = interval
        self.samples: list[tuple[float, int]] = []
        self._halt = threading.Event()
        self.source = "none"

    def run(self) -> None:
        try:
            import pynvml

            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(self.index)
            self.source = "nvml"

            def read() -> int:
                return int(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        except Exception:  # noqa: BLE001 - fall back to nvidia-smi
            import subprocess

            self.source = "nvidia-smi"

            def read() -> int:
                out = subprocess.run(
                    ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                     f"--id={self.index}"], capture_output=True, text=True, timeout=5,
                )
                return int(out.stdout.strip().splitlines()[0])
        while not self._halt.is_set():
            try:
                self.samples.append((time.perf_counter(), read()))
            except Exception:  # noqa: BLE001
                pass
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)

    def summary(self, t0: float, t1: float) -> dict:
        vals = np.array([u for t, u in self.samples if t0 <= t <= t1], dtype=float)
        if not vals.size:
            return {"util_source": self.source, "util_samples": 0}
        return {
            "util_source": self.source,
            "util_samples": int(vals.size),
            "util_mean_pct": round(float(vals.mean()), 1),
            "util_median_pct": round(float(np.median(vals)), 1),
            "util_share_samples_ge_90pct": round(float((vals >= 90).mean()), 3),
        }


def one_run(preds, golds, model, batch_size, workers, label, device="cuda", engine="local"):
    import torch

    cuda = device.startswith("cuda")

    from fasteval.sas import core as sas_core
    from fasteval.sas import encode as sas_encode

    # pass the tokenizer-thread count through (the public API picks a default)
    orig = sas_encode.encode_texts

    def patched(*a, **k):
        k.setdefault("workers", workers)
        return orig(*a, **k)

    sas_core.encode_texts = patched
    try:
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        sampler = UtilSampler()
        sampler.start()
        time.sleep(0.2)
        t0 = time.perf_counter()
        out, stats = sas_core.sas(preds, golds, model=model, device=device, batch_size=batch_size,
                                  output="arrow", return_stats=True, engine=engine)
        if cuda:
            torch.cuda.synchronize()
        t1 = time.perf_counter()
        time.sleep(0.1)
        sampler.stop()
    finally:
        sas_core.encode_texts = orig
    wall = t1 - t0
    scores = out.column("sas").to_numpy()
    rep = {
        "label": label,
        "engine": engine,
        "pairs": len(preds),
        "batch_size": batch_size,
        "tokenizer_threads": workers,
        "wall_s": round(wall, 3),
        "pairs_per_s": round(len(preds) / wall, 1),
        "unique_texts": stats.n_unique_texts,
        "unique_texts_per_s": round(stats.n_unique_texts / wall, 1),
        "forward_gpu_s": round(stats.forward_s, 3),
        "forward_share_of_wall": round(stats.forward_s / wall, 3),
        "encode_loop_s": round(stats.encode_wall_s, 3),
        "outside_encode_loop_s": round(wall - stats.encode_wall_s, 3),
        "tokenize_thread_s": round(stats.tokenize_s, 3),
        "batches": stats.n_batches,
        "peak_gpu_mem_gib": round(torch.cuda.max_memory_allocated() / 2**30, 3) if cuda else None,
        "precision": stats.precision,
        "score_mean": round(float(np.nanmean(scores)), 5),
    }
    rep.update(stats.extra)
    rep.update(sampler.summary(t0, t1))
    return rep


def st_baseline(preds, golds, model_path, batch_size):
    """Plain sentence-transformers encode of all texts (no dedup, same fp16 model), for reference."""
    import torch

    from fasteval.sas.model import load_model

    lm = load_model(model_path, device="cuda")
    texts = preds + golds
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    emb = lm.model.encode(texts, batch_size=batch_size, convert_to_tensor=True, normalize_embeddings=True)
    n = len(preds)
    s = (emb[:n].float() * emb[n:].float()).sum(1).cpu().numpy()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    return {"label": "sentence-transformers encode, no dedup", "pairs": n, "batch_size": batch_size,
            "wall_s": round(wall, 3), "pairs_per_s": round(n / wall, 1), "score_mean": round(float(s.mean()), 5)}


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=float, default=0.3)
    ap.add_argument("--model", default=None)
    ap.add_argument("--batch-sizes", default="2048,4096")
    ap.add_argument("--workers", default="1")
    ap.add_argument("--plans", default=None,
                    help="comma list of BATCH:THREADS:RUST_PARALLELISM, e.g. 2048:3:true,2048:8:false")
    ap.add_argument("--budget-s", type=float, default=330.0, help="skip extra runs past this")
    ap.add_argument("--baseline", action="store_true", help="also time plain sentence-transformers")
    ap.add_argument("--device", default="cuda", help="cpu for a dry run of the script")
    ap.add_argument("--baseline-pairs", type=int, default=100_000)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--ray", action="store_true",
                    help="also run sas(engine='ray') on a local Ray (CPU tokenizer tasks, one GPU actor)")
    args = ap.parse_args(argv)
    t_begin = time.perf_counter()

    import torch
    from bench_sas import make_pairs

    from fasteval.sas.model import default_model_path, load_model

    model = args.model or default_model_path()
    cuda = args.device.startswith("cuda")
    report = {"device": torch.cuda.get_device_name(0) if cuda else args.device, "torch": torch.__version__, "runs": []}
    try:
        import sentence_transformers
        import transformers

        report["sentence_transformers"] = sentence_transformers.__version__
        report["transformers"] = transformers.__version__
    except ImportError:
        pass
    t = time.perf_counter()
    preds, golds = make_pairs(args.pairs, args.repeat)
    report["make_pairs_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    lm = load_model(model, device=args.device)
    report["load_s"] = round(time.perf_counter() - t, 2)
    # warm-up: CUDA context, cuBLAS handles, kernels for a few shapes (not timed)
    from fasteval.sas import sas

    wp, wg = make_pairs(20_000, args.repeat, seed=7)
    sas(wp[: 20_000 if cuda else 200], wg[: 20_000 if cuda else 200], model=lm, device=args.device,
        output="arrow")
    out_path = os.path.join(args.out, "gpu_sas.json")

    def save() -> None:
        report["script_s"] = round(time.perf_counter() - t_begin, 1)
        with open(out_path, "w") as fh:
            json.dump(report, fh, indent=1)
        print(json.dumps(report["runs"][-1] if report["runs"] else report), flush=True)

    sizes = [int(b) for b in args.batch_sizes.split(",")]
    workers = [int(w) for w in args.workers.split(",")]
    plan = [(b, workers[0], None) for b in sizes] + [(sizes[0], w, None) for w in workers[1:]]
    if args.plans:
        plan = []
        for item in args.plans.split(","):
            b, w, par = item.split(":")
            plan.append((int(b), int(w), par))
    for i, (b, w, par) in enumerate(plan):
        if i and time.perf_counter() - t_begin > args.budget_s:
            report.setdefault("skipped", []).append({"batch_size": b, "workers": w, "par": par})
            continue
        if par is not None:
            # read by the Rust tokenizer at each batch call
            os.environ["TOKENIZERS_PARALLELISM"] = par
        label = f"fasteval bs={b} tok_threads={w} rust_parallelism={par or 'default'}"
        try:
            report["runs"].append(one_run(preds, golds, lm, b, w, label, args.device))
        except Exception as exc:  # noqa: BLE001 - keep the other runs' numbers
            report["runs"].append({"batch_size": b, "workers": w, "error": repr(exc)[:500]})
        save()
    if args.ray and time.perf_counter() - t_begin < args.budget_s:
        try:
            import ray

            ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
            b = sizes[0]
            report["runs"].append(one_run(preds, golds, model, b, 0, f"fasteval engine=ray bs={b}",
                                          args.device, engine="ray"))
            ray.shutdown()
        except Exception as exc:  # noqa: BLE001 - keep the other runs' numbers
            report["runs"].append({"engine": "ray", "error": repr(exc)[:500]})
        save()
    if args.baseline and cuda and time.perf_counter() - t_begin < args.budget_s:
        n = min(args.baseline_pairs, len(preds))
        report["runs"].append(st_baseline(preds[:n], golds[:n], model, sizes[0]))
        save()
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
