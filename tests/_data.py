"""Where the tests' vendored data lives (``tests/data/``, see its README.md).

Every lookup fails loudly: a missing file raises ``FileNotFoundError`` instead of skipping,
so a checkout without the data cannot pass by running nothing.
"""

from __future__ import annotations

import gzip
import os
import threading
from pathlib import Path

TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
CONFORMANCE = DATA / "conformance"
TREC_EVAL = CONFORMANCE / "trec_eval"
RANX = CONFORMANCE / "ranx"
IR_MEASURES = CONFORMANCE / "ir_measures"
REALRUNS = DATA / "realruns"
# trec_eval's qrels.test, qrels.rel_level and results.test ship once, as the package's sample
SHIPPED_TREC = TESTS.parent / "datasets" / "trec"


def _first(name: str, candidates: list[Path]) -> Path:
    for path in candidates:
        if path.is_file():
            return path
    tried = ", ".join(str(p) for p in candidates)
    raise FileNotFoundError(f"test data {name!r} is missing (looked for {tried})")


def trec_eval_file(name: str) -> Path:
    """Path of a file of trec_eval's test directory (``name`` as in cases.json).

    Looks in ``tests/data/conformance/trec_eval`` (plain, then ``.gz``), then in
    ``datasets/trec`` (the files shipped with the package are not stored twice).
    """
    return _first(name, [TREC_EVAL / name, TREC_EVAL / f"{name}.gz", SHIPPED_TREC / name])


def data_file(base: Path, name: str) -> Path:
    """``base / name`` or its gzip copy ``base / (name + '.gz')``."""
    return _first(name, [base / name, base / f"{name}.gz"])


def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when it is a ``.gz`` file."""
    raw = Path(path).read_bytes()
    return gzip.decompress(raw) if str(path).endswith(".gz") else raw


def read_text(path: Path) -> str:
    return read_bytes(path).decode("utf-8")


def fifo_feeding(path: Path | str, data: bytes) -> tuple[str, threading.Thread]:
    """A FIFO made at ``path`` and a started daemon thread writing ``data`` into it (the
    writer blocks until a reader opens it); returns the path as text and the thread."""
    os.mkfifo(path)

    def feed() -> None:
        with open(path, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return str(path), thread
