"""``fasteval warmup`` compiles (or loads) every variant of the score pass and the preparation kernels, so that the first real job finds them in numba's cache."""

from __future__ import annotations

import numba

from fasteval.cli import main


def test_warmup_loads_every_score_pass_variant(capsys):
    from fasteval.kernels import prepare as K
    from fasteval.kernels import ranking

    assert main(["warmup"]) == 0
    err = capsys.readouterr().err
    assert "TREC text tokenizer" in err and "jobs in" in err
    variants = {(False, False), (True, False), (True, True)}  # profiles, generic, + user models
    assert set(ranking._PASSES) == {(g, m, p) for g, m in variants for p in (False, True)}
    from fasteval.kernels import expected

    assert set(expected._PASSES) == {False, True}  # tie_break="expected", serial and parallel
    assert expected._tie_starts.signatures
    for kernel in (K.rank_and_label, K.index_qrels, K.run_heads, K.id_keys):
        assert isinstance(kernel, numba.core.registry.CPUDispatcher)
        assert kernel.signatures, kernel  # compiled or loaded (one id-column type for both kinds)
