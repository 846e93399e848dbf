"""atomic_open writes text as UTF-8 under any locale (the readers read UTF-8)."""

from __future__ import annotations

import os
import subprocess
import sys


def test_text_is_utf8_under_an_ascii_locale(tmp_path):
    out = tmp_path / "ids.txt"
    code = ("import locale, sys\n"
            "from fasteval.io.atomic import atomic_open\n"
            "assert locale.getpreferredencoding().lower() not in ('utf-8', 'utf8'), locale.getpreferredencoding()\n"
            "with atomic_open(sys.argv[1]) as fh:\n"
            "    fh.write('q\\u00fc Q0 d\\u00ef\\u20ac 1 0.5 r\\n')\n")
    env = {**os.environ, "PYTHONUTF8": "0", "LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0"}
    subprocess.run([sys.executable, "-c", code, str(out)], check=True, env=env)
    assert out.read_bytes() == "qü Q0 dï€ 1 0.5 r\n".encode()
    assert os.listdir(tmp_path) == ["ids.txt"]


def test_an_explicit_encoding_is_kept(tmp_path):
    from fasteval.io.atomic import atomic_open

    with atomic_open(tmp_path / "l1.txt", encoding="latin-1") as fh:
        fh.write("ü\n")
    assert (tmp_path / "l1.txt").read_bytes() == b"\xfc\n"
