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
