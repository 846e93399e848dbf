"""Every subcommand registers itself with the one-line help of fasteval.cli.SUBCOMMANDS."""

from __future__ import annotations

import argparse
import importlib

import pytest

from fasteval.cli import SUBCOMMANDS, main


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_loaded_command_shows_the_listed_help(name):
    module, help_text = SUBCOMMANDS[name]
    sub = argparse.ArgumentParser(prog="fasteval").add_subparsers(dest="command")
    importlib.import_module(f"fasteval.cli.{module}").add_parser(sub)
    listed = {action.dest: action.help for action in sub._choices_actions}
    assert listed == {name: help_text}


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for name, (_, help_text) in SUBCOMMANDS.items():
        assert f"{name} {help_text}" in out


@pytest.mark.parametrize(("argv", "start"), [
    (["eval", "q", "r", "-l", "1.5"], "fasteval eval: error: argument -l/--relevance-level: invalid int"),
    (["datasets", "synth"], "fasteval datasets synth: error: the following arguments are required"),
    (["nosuch"], "fasteval: error: argument COMMAND: invalid choice: 'nosuch'"),
    (["judge", "faithfulness"], "fasteval judge faithfulness: error: the following arguments"),
])
def test_usage_errors_are_one_line(argv, start, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(start) and err.rstrip().endswith("--help)")


@pytest.mark.parametrize("argv, advice", [
    (["eval", "q", "r"], " (try --memory-limit or --max-rows-per-chunk)"),
    (["fuse", "a", "b"], ""),  # no such options: none named
])
def test_out_of_memory_is_one_line_with_the_command_s_own_advice(argv, advice, monkeypatch, capsys):
    def oom(args):
        raise MemoryError

    monkeypatch.setattr(importlib.import_module(f"fasteval.cli.{argv[0]}_cmd"), "run", oom)
    assert main(argv) == 2
    assert capsys.readouterr().err == f"fasteval: error: out of memory{advice}\n"
