"""The generated parts of the documentation in ``docs/``: the measures table, from the
registry, and the command-line reference, from the commands' argparse parsers.

A generated part sits between two markers in a Markdown file::

    <!-- BEGIN GENERATED: measures -->
    ...
    <!-- END GENERATED: measures -->

``python -m fasteval._docs`` (run in the repository root) rewrites every such part from the
code; ``python -m fasteval._docs --check`` only says which are stale (exit status 1).
``tests/core/test_docs.py`` runs the check.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

_PART = re.compile(r"(<!-- BEGIN GENERATED: ([\w-]+) -->\n)(.*?)(<!-- END GENERATED: \2 -->)",
                   re.S)


def measures_part() -> str:
    """The measures table (:func:`fasteval.measures.registry.measure_table`)."""
    from fasteval.measures.registry import measure_table

    return measure_table()


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, built by its module's ``add_parser`` as ``fasteval``
    builds it (``trec-eval``, which parses trec_eval's own flag grammar, is left out)."""
    from fasteval import cli

    parser = cli._Parser(prog="fasteval")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=cli._Parser)
    for name in cli.SUBCOMMANDS:
        if name != "trec-eval":
            cli._load(name).add_parser(sub)
    return {name: p for name, p in sub.choices.items()}


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        mv = action.metavar
        return " ".join(mv) if isinstance(mv, tuple) else mv
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _args(action: argparse.Action) -> str:
    """The argument an action takes, as in a usage line (``N``, ``[FILE ...]``)."""
    if action.nargs == 0:
        return ""
    mv = _metavar(action)
    if action.nargs is None or action.nargs == 1:
        return mv
    if action.nargs == "?":
        return f"[{mv}]"
    if action.nargs == "*":
        return f"[{mv} ...]"
    if action.nargs == "+":
        return f"{mv} [{mv} ...]" if " " not in mv else f"{mv} ..."
    if isinstance(action.nargs, int):
        return " ".join([mv] * action.nargs)
    return f"{mv} ..."


def _help(action: argparse.Action, prog: str) -> str:
    """An action's help text, ``%(default)s`` and the like filled in, on one line, with
    the characters a Markdown table cell cannot hold escaped."""
    text = action.help or ""
    if "%" in text:
        names = {k: v for k, v in vars(action).items() if v is not argparse.SUPPRESS}
        names["prog"] = prog
        if names.get("choices") is not None:
            names["choices"] = ", ".join(map(str, names["choices"]))
        text = text % names
    return _md(text).replace("|", "\\|")


def _md(text: str) -> str:
    """Plain text as one Markdown line: ``<`` and ``*`` escaped, so that ``run_<i>`` and
    ``runs/*.parquet`` print as written."""
    return " ".join(text.split()).replace("<", "&lt;").replace("*", "\\*")


def _usage(prog: str, parser: argparse.ArgumentParser) -> str:
    """A usage line that does not depend on the terminal's width or Python's version:
    the program, ``[options]``, the required options and the positional arguments."""
    words = [prog]
    optional = [a for a in parser._actions if a.option_strings and a.help != argparse.SUPPRESS
                and not isinstance(a, argparse._HelpAction)]
    if any(not a.required for a in optional):
        words.append("[options]")
    for a in optional:
        if a.required:
            words.append(" ".join(filter(None, [a.option_strings[0], _args(a)])))
    for a in parser._actions:
        if not a.option_strings:
            words.append(_args(a))
    return " ".join(words)


def _command(prog: str, parser: argparse.ArgumentParser, level: int) -> list[str]:
    out = [f"{'#' * level} `{prog}`", ""]
    if parser.description:
        out += [_md(parser.description), ""]
    out += ["```", _usage(prog, parser), "```", ""]
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    rows = []
    for a in parser._actions:
        if (a.help == argparse.SUPPRESS or isinstance(a, (argparse._SubParsersAction,
                                                          argparse._HelpAction))):
            continue
        if a.option_strings:
            name = ", ".join(f"`{s}`" for s in a.option_strings)
            arg = _args(a)
            rows.append(f"| {name} | {f'`{arg}`' if arg else ''} | {_help(a, prog)} |")
        else:
            rows.append(f"| `{_args(a)}` | | {_help(a, prog)} |")
    if rows:
        out += ["| argument | value | description |", "|---|---|---|", *rows, ""]
    for a in subs:
        helps = {c.dest: c.help for c in a._choices_actions}
        for name, p in a.choices.items():
            if p.description is None and helps.get(name):
                p.description = helps[name]
            out += _command(f"{prog} {name}", p, level + 1)
    return out


def cli_part() -> str:
    """The command-line reference: one section per ``fasteval`` subcommand, from its
    argparse parser (for ``trec-eval``, from its usage text)."""
    from fasteval import cli
    from fasteval.cli import trec_eval_cmd

    out = ["| command | what it does |", "|---|---|"]
    for name, (_, help_text) in cli.SUBCOMMANDS.items():
        anchor = f"fasteval-{name}"
        out.append(f"| [`fasteval {name}`](#{anchor}) | {_md(help_text).replace('|', chr(92) + '|')} |")
    out.append("")
    parsers = _parsers()
    for name in cli.SUBCOMMANDS:
        if name == "trec-eval":
            head = (trec_eval_cmd.__doc__ or "").partition("Usage::")[0]
            out += [f"## `fasteval {name}`", ""]
            for p in head.split("\n\n")[1:]:
                if p.strip():
                    out += [" ".join(p.split()).replace("``", "`"), ""]
            out += ["`fasteval trec-eval -h` prints:", "",
                    "```", trec_eval_cmd.USAGE.rstrip("\n"), "```", ""]
        else:
            out += _command(f"fasteval {name}", parsers[name], 2)
    return "\n".join(out).rstrip("\n")


PARTS: dict[str, Callable[[], str]] = {"measures": measures_part, "cli": cli_part}
"""Name in the markers -> the function that renders that part."""

FILES = ("README.md", "DEVELOPING.md", "docs")
"""Where generated parts are looked for (relative to the repository root)."""


def _files(root: Path) -> list[Path]:
    paths = []
    for name in FILES:
        p = root / name
        paths += sorted(p.glob("*.md")) if p.is_dir() else [p] if p.exists() else []
    return paths


def regenerate(root: str | Path = ".", *, check: bool = False) -> list[str]:
    """Rewrite the generated parts of the Markdown files under ``root`` (or, with
    ``check=True``, leave them); return the stale parts as ``"file: name"``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     page = Path(d, "docs"); page.mkdir()
    ...     _ = (page / "m.md").write_text("<!-- BEGIN GENERATED: measures -->\\nold\\n"
    ...                                    "<!-- END GENERATED: measures -->\\n")
    ...     print(regenerate(d, check=True), regenerate(d), regenerate(d, check=True))
    ['docs/m.md: measures'] ['docs/m.md: measures'] []
    """
    root = Path(root)
    rendered: dict[str, str] = {}
    stale = []
    for path in _files(root):
        text = path.read_text(encoding="utf-8")

        def fill(m: re.Match, path=path) -> str:
            name = m.group(2)
            if name not in PARTS:
                raise ValueError(f"{path}: unknown generated part {name!r} (known: {list(PARTS)})")
            if name not in rendered:
                rendered[name] = PARTS[name]()
            body = rendered[name] + "\n"
            if body != m.group(3):
                stale.append(f"{path.relative_to(root).as_posix()}: {name}")
            return m.group(1) + body + m.group(4)

        new = _PART.sub(fill, text)
        if not check and new != text:
            path.write_text(new, encoding="utf-8")
    return stale


def main(argv: list[str] | None = None) -> int:
    """``python -m fasteval._docs [--check] [ROOT]``."""
    p = argparse.ArgumentParser(prog="python -m fasteval._docs",
                                description="Regenerate the generated parts of docs/.")
    p.add_argument("--check", action="store_true", help="only report stale parts (status 1)")
    p.add_argument("root", nargs="?", default=".", help="repository root (default: .)")
    args = p.parse_args(argv)
    stale = regenerate(args.root, check=args.check)
    for s in stale:
        print(("stale: " if args.check else "regenerated: ") + s)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
