"""fasteval.progress: one tqdm-drawn progress for every command, on a terminal and off it."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from fasteval.progress import Progress, is_terminal


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_bar_redraws_in_place_with_rate_eta_and_queries():
    out = _Tty()
    bar = Progress(total=1000, unit="rows", stream=out, delay=0, interval=0)
    bar.start -= 10.0  # the job started 10 s ago
    bar.update(250, queries=5)
    text = out.getvalue()
    assert text.startswith("\r") and "\n" not in text  # drawn in place
    assert " 25%|" in text and "250/1000" in text and "5 queries" in text
    rate = float(text.split(" rows/s")[0].rsplit(" ", 1)[1])  # 250 rows in ~10 s
    assert 24.0 < rate <= 25.0
    assert "[00:10<00:30" in text  # elapsed < remaining: 750 rows left at 25 rows/s
    bar.update(750)
    bar.close()
    text = out.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1
    assert "100%|" in text.rsplit("\r", 1)[1] and "1000/1000" in text


def test_off_a_terminal_plain_lines_at_intervals():
    log = io.StringIO()
    bar = Progress(total=None, desc="eval", unit="rows", stream=log, delay=0, log_interval=60)
    bar.start -= 5.0
    bar.update(200_000, queries=2_000)  # first line at once (delay 0)
    bar.update(200_000)  # within the interval: no line
    bar.update(200_000)
    bar.close()  # the final state
    text = log.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("eval: 200k rows [00:05, ") and lines[0].endswith(" 2000 queries]")
    assert lines[1].startswith("eval: 600k rows [00:05, ")


def test_off_a_terminal_a_line_per_interval():
    log = io.StringIO()
    bar = Progress(total=4, unit="texts", stream=log, delay=0, log_interval=0)
    for _ in range(4):
        bar.update(1)
    bar.close()
    lines = log.getvalue().splitlines()
    assert [line.split("|")[0].strip() for line in lines][:4] == ["25%", "50%", "75%", "100%"]
    assert all("#" in line or "25%" in line for line in lines)  # ASCII bar, no block glyphs
    assert "4/4" in lines[-1]


@pytest.mark.parametrize("stream", [_Tty(), io.StringIO()], ids=["terminal", "log"])
def test_quiet_and_short_jobs_stay_silent(stream):
    with Progress(total=10, stream=stream, delay=0, enabled=False) as bar:  # --quiet
        bar.update(10)
    with Progress(total=10, stream=stream) as bar:  # shorter than the default 2 s delay
        bar.update(10)
    assert stream.getvalue() == "" and bar.n == 10


def test_no_draw_after_close():
    out = _Tty()
    bar = Progress(total=2, stream=out, delay=0, interval=0)
    bar.update(1)
    bar.close()
    drawn = out.getvalue()
    bar.update(1)
    bar.close()
    assert out.getvalue() == drawn


def test_is_terminal_of_odd_streams():
    closed = io.StringIO()
    closed.close()
    assert not is_terminal(closed) and not is_terminal(object()) and is_terminal(_Tty())


def test_tqdm_is_imported_only_to_draw():
    code = (
        "import io, sys\n"
        "from fasteval.progress import Progress\n"
        "with Progress(10, stream=io.StringIO()) as bar:\n"  # a short job
        "    bar.update(10)\n"
        "short = 'tqdm' in sys.modules\n"
        "with Progress(10, stream=io.StringIO(), delay=0) as bar:\n"
        "    bar.update(10)\n"
        "print(short, 'tqdm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_eval_command_progress_goes_to_stderr_only(tmp_path):
    """A long job off a terminal: log lines on stderr; stdout holds the results alone."""
    from tests._data import SHIPPED_TREC

    code = (
        "import sys, fasteval.progress as p\n"
        "p.Progress.__init__.__kwdefaults__.update(delay=0.0, log_interval=0.0)\n"
        "from fasteval.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    args = [str(SHIPPED_TREC / "qrels.test"), str(SHIPPED_TREC / "results.test"), "-m", "map"]
    run = subprocess.run([sys.executable, "-c", code, "eval", *args, "--format", "json"],
                         capture_output=True, text=True, check=True)
    json.loads(run.stdout)  # nothing but the results
    err = run.stderr.splitlines()
    assert err[0].startswith("1.50k rows [") and err[0].endswith(", 3 queries]"), err
    assert len(err) == 2 and err[1].startswith("fasteval: 3 queries scored"), err  # one line: no repeat
    assert "\r" not in run.stderr
    quiet = subprocess.run([sys.executable, "-c", code, "eval", *args, "--quiet"],
                           capture_output=True, text=True, check=True)
    assert quiet.stderr == ""
