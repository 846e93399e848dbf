"""fasteval.sas(engine="ray") against the single-machine path with the same tiny model: a CPU
tokenizer stage and an actor pool on a local Ray (2 CPUs), the embedding cache honoured.

Vectors equal to float32 rounding (``TOL``), not bit for bit: Ray cuts the batches elsewhere
(another padded width) and its actors run their own thread counts, so the sums inside the
matrix products come in another order.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

pytest.importorskip("sentence_transformers")
ray = pytest.importorskip("ray")

from fasteval.cli import main  # noqa: E402
from fasteval.errors import ParameterError  # noqa: E402
from fasteval.sas import sas  # noqa: E402
from tests.sas._texts import GOLDS, PREDS  # noqa: E402

TOL = 1e-5
"""Unit vectors and cosines: float32 has 24 bits (6e-8 relative); a 16-wide model sums a few
dozen products per component, so reordered sums differ by a few 1e-7 at most."""


@pytest.fixture(scope="module")
def ray_local():
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    yield
    ray.shutdown()


def _pairs(out):
    vec = lambda c: np.asarray(out.get_column(c).to_list(), dtype=np.float32)  # noqa: E731
    return out.get_column("score").to_numpy(), vec("pred_embedding"), vec("gold_embedding")


@pytest.mark.slow
def test_ray_equals_local_and_honours_cache(ray_local, tiny_bi, tmp_path):
    golds = [[g, "the capital is " + g] for g in GOLDS]
    local, lstats = sas(PREDS, golds, model=tiny_bi, device="cpu", per="pair", embeddings=True,
                        batch_size=3, return_stats=True)
    cache = tmp_path / "cache"
    sas(PREDS[:2], GOLDS[:2], model=tiny_bi, device="cpu", cache_dir=cache)  # 4 texts cached
    got, stats = sas(PREDS, golds, model=tiny_bi, device="cpu", per="pair", embeddings=True,
                     batch_size=3, cache_dir=cache, return_stats=True, engine="ray")
    assert stats.device == "ray:cpu"
    assert stats.extra["ray_tokenize_stage"]  # tokenized in a CPU stage before the actors
    assert stats.cache_hits == 4
    assert stats.n_encoded == stats.cache_misses == lstats.n_unique_texts - 4  # only misses sent
    assert got.select(["row", "prediction", "gold"]).equals(local.select(["row", "prediction", "gold"]))
    for a, b in zip(_pairs(got), _pairs(local), strict=True):
        np.testing.assert_allclose(a, b, atol=TOL, rtol=0)
    assert np.abs(_pairs(local)[0]).max() > 0.1  # real scores, not all zero
    # a second Ray job finds every text in the cache: nothing goes to Ray
    again, st2 = sas(PREDS, golds, model=tiny_bi, device="cpu", cache_dir=cache, return_stats=True,
                     engine="ray", per="pair")
    assert st2.cache_misses == 0 and st2.n_encoded == 0
    np.testing.assert_allclose(again.get_column("score").to_numpy(), _pairs(got)[0], atol=TOL, rtol=0)


@pytest.mark.slow
def test_cli_engine_ray(ray_local, tiny_bi, tmp_path):
    src = tmp_path / "answers.parquet"
    pl.DataFrame({"prediction": PREDS, "gold": GOLDS}).write_parquet(src)
    outs = {}
    for engine in ("local", "ray"):
        outs[engine] = tmp_path / f"{engine}.parquet"
        assert main(["sas", str(src), "--model", tiny_bi, "--device", "cpu", "--quiet",
                     "-o", str(outs[engine]), "--engine", engine]) == 0
    a, b = pl.read_parquet(outs["ray"]), pl.read_parquet(outs["local"])
    assert a.select(["prediction", "gold", "n_golds"]).equals(b.select(["prediction", "gold", "n_golds"]))
    np.testing.assert_allclose(a.get_column("sas").to_numpy(), b.get_column("sas").to_numpy(), atol=TOL, rtol=0)


@pytest.mark.slow
def test_refusals(ray_local, tiny_cross, tiny_bi):
    with pytest.raises(ParameterError, match="cross-encoder"):
        sas(PREDS, GOLDS, model=tiny_cross, engine="ray")
    with pytest.raises(ParameterError, match="one device kind"):
        sas(PREDS, GOLDS, model=tiny_bi, device=["cpu", "cpu"], engine="ray")
    with pytest.raises(ParameterError, match="no GPU"):
        sas(PREDS, GOLDS, model=tiny_bi, device="cuda", engine="ray")


def test_cli_a_ray_that_cannot_be_reached_is_one_line(tmp_path, capsys, monkeypatch):
    """`fasteval sas --engine ray --ray-address ADDR` that Ray cannot connect to is one line
    naming the option and the address (password masked), exit status 2, not Ray's
    traceback."""
    src = tmp_path / "answers.parquet"
    pl.DataFrame({"prediction": PREDS, "gold": GOLDS}).write_parquet(src)

    def init(address=None, **options):  # as Ray says it without the ray[client] package
        raise ValueError(f"Ray Client at {address} requires pip package `ray[client]`\nmore")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    assert main(["sas", str(src), "--model", str(tmp_path / "no-model"), "--quiet", "--engine", "ray",
                 "--ray-address", "ray://al:s3cr3t@10.0.0.1:10001"]) == 2
    assert capsys.readouterr().err == (
        "fasteval: error: could not connect to the Ray cluster at 'ray://***@10.0.0.1:10001' "
        "(--ray-address): Ray Client at ray://***@10.0.0.1:10001 requires pip package `ray[client]`\n")
    assert not (tmp_path / "answers.sas.parquet").exists()
