"""The synthetic generator refuses, before it allocates anything, specs that would not fit
in memory; an interrupted write leaves the previous dataset whole and no temporary files."""

from __future__ import annotations

import os

import polars as pl
import pytest

import fasteval.datasets.synth as synth
from fasteval.cli import main
from fasteval.datasets import SynthSpec, generate, write_synth
from fasteval.errors import ParameterError


def test_a_block_that_cannot_fit_in_memory_is_refused_up_front(tmp_path):
    # 10 queries x 1.5e12 candidates: terabytes in one block, on any machine
    spec = SynthSpec(queries=10, depth=10**12, runs=1)
    with pytest.raises(ParameterError, match=r"^depth must be small enough for one block of 10 "
                       r"queries to fit in memory \(about \d+\.\d GiB needed"):
        write_synth(spec, tmp_path / "d")
    assert not (tmp_path / "d").exists()
    with pytest.raises(ParameterError, match=r"^depth must be small enough"):
        next(synth.iter_blocks(spec))
    with pytest.raises(ParameterError, match=r"^judged must be small enough"):
        generate(SynthSpec(queries=10, depth=5, judged=10**12))


def test_the_estimate_is_checked_against_the_memory_available(monkeypatch, tmp_path):
    spec = SynthSpec(queries=1000, depth=100, runs=3)
    # a block: 1000 queries x 150 candidates x 160 B + 1000 x (300 + 21) rows x 64 B
    block = 1000 * 150 * 160 + 1000 * 321 * 64
    monkeypatch.setattr(synth, "available_memory", lambda: block - 1)
    with pytest.raises(ParameterError, match=r"^depth must be small enough .* 0\.0 GiB available"):
        synth.check_memory(spec)
    monkeypatch.setattr(synth, "available_memory", lambda: block)
    synth.check_memory(spec)
    # the whole dataset (generate) holds queries x (depth x runs + judged + 1) rows more
    with pytest.raises(ParameterError, match=r"^queries must be small enough for the whole dataset"):
        generate(spec)
    monkeypatch.setattr(synth, "available_memory", lambda: block + 4 * 1000 * 100 * 64 * 2 - 1)
    with pytest.raises(ParameterError, match=r"^rows_per_group must be small enough for 4 row groups"):
        write_synth(spec, tmp_path / "d", rows_per_group=10**9)
    assert not (tmp_path / "d").exists()
    monkeypatch.setattr(synth, "available_memory", lambda: None)  # unknown: not checked
    synth.check_memory(spec, in_memory=True, rows_per_group=10**9)


def test_cli_names_the_option_of_a_spec_too_large_for_memory(tmp_path, capsys):
    assert main(["datasets", "synth", "--queries", "10", "--depth", str(10**12), "--quiet",
                 "--out", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fasteval: error: --depth must be small enough for one block")
    assert err.count("\n") == 1 and not (tmp_path / "d").exists()


@pytest.mark.parametrize("value", [0, -5, 2.5, True])
def test_rows_per_group_is_checked_by_the_api_and_named_by_the_cli(tmp_path, capsys, value):
    with pytest.raises(ParameterError, match=rf"^rows_per_group must be a positive integer, got {value}"):
        write_synth(SynthSpec(queries=3, depth=2, runs=1), tmp_path / "d", rows_per_group=value)
    assert not (tmp_path / "d").exists()
    if isinstance(value, int) and not isinstance(value, bool):
        assert main(["datasets", "synth", "--queries", "3", "--quiet", "--rows-per-group",
                     str(value), "--out", str(tmp_path / "d")]) == 2
        assert capsys.readouterr().err == (
            f"fasteval: error: --rows-per-group must be a positive integer, got {value}\n")


def test_an_interrupted_write_leaves_the_previous_dataset_and_no_temporary_file(tmp_path):
    old = SynthSpec(queries=synth.BLOCK_QUERIES + 5, depth=3, runs=2, seed=1)
    write_synth(old, tmp_path)
    before = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    def interrupt(done: int) -> None:
        if done >= synth.BLOCK_QUERIES:  # after the first block, mid-write
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_synth(SynthSpec(queries=synth.BLOCK_QUERIES + 5, depth=3, runs=2, seed=2), tmp_path,
                    rows_per_group=100, progress=interrupt)
    after = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before
    assert pl.read_parquet(tmp_path / "qrels.parquet").equals(generate(old)[0])


def test_files_get_the_mode_a_plain_open_gives(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    paths = write_synth(SynthSpec(queries=3, depth=2, runs=1), tmp_path / "new")
    for path in paths.values():
        assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask
    os.chmod(paths["qrels"], 0o600)  # an existing private file stays private
    write_synth(SynthSpec(queries=3, depth=2, runs=1, seed=3), tmp_path / "new")
    assert os.stat(paths["qrels"]).st_mode & 0o777 == 0o600


def test_a_seed_past_64_bits_is_reproducible():
    a = generate(SynthSpec(queries=20, depth=4, runs=1, seed=2**200 + 1))
    b = generate(SynthSpec(queries=20, depth=4, runs=1, seed=2**200 + 1))
    c = generate(SynthSpec(queries=20, depth=4, runs=1, seed=1))
    assert a[0].equals(b[0]) and a[1]["run_0"].equals(b[1]["run_0"])
    assert not a[1]["run_0"].equals(c[1]["run_0"])


@pytest.mark.parametrize("value", ["no", 1, None])
def test_int_ids_must_be_a_bool(value):
    with pytest.raises(ParameterError, match=rf"^int_ids must be True or False, got {value!r}"):
        SynthSpec(queries=3, int_ids=value)


def test_out_as_a_dangling_symbolic_link_is_named(tmp_path, capsys):
    link = tmp_path / "ds"
    link.symlink_to(tmp_path / "missing")
    assert main(["datasets", "synth", "--queries", "3", "--quiet", "--out", str(link)]) == 2
    assert capsys.readouterr().err == (
        f"fasteval: error: --out must be a directory (created when missing), not a symbolic "
        f"link to the missing {str(tmp_path / 'missing')!r}, got {str(link)!r}\n")
    assert sorted(os.listdir(tmp_path)) == ["ds"]
    (tmp_path / "missing").mkdir()  # a link to a directory is written through
    paths = write_synth(SynthSpec(queries=3, depth=2, runs=1), link)
    assert (tmp_path / "missing" / "qrels.parquet").is_file() and paths["qrels"].is_file()


def test_queries_past_int64_ids_are_refused():
    with pytest.raises(ParameterError, match=rf"^queries must be at most {2**63} \(query ids are "
                       rf"64-bit integers\), got {2**63 + 1}"):
        SynthSpec(queries=2**63 + 1)
    assert SynthSpec(queries=2**63).queries == 2**63
