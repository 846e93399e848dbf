"""gzip inputs read as a stream: decompressed block by block, checked as the lines come.

A small compressed file can hold a huge one (a 3 MB ``.txt.gz`` of zeros or of one long
line inflates to 4 GiB). Decompressed whole before its first line was looked at, such a
file took gigabytes of memory before any error. Here the data is inflated
:data:`BLOCK` bytes at a time and each block is checked before the next is made:

* the first block as :func:`fasteval.io._common.check_text_encoding` checks a plain file
  (NUL bytes, UTF-16/32 byte order marks, gzip twice, other compressions), and every
  later block for NUL bytes;
* no line may be longer than :data:`MAX_LINE_BYTES` (the line of a run, qrels or results
  file is a few dozen bytes; a JSON document is not cut into lines and has no limit);
* ``head``: a reader's own checks run on the complete lines of the first block, so that a
  bad first line is reported after about :data:`BLOCK` bytes, not after the whole file.

What is inflated stays in memory up to :data:`SPILL_BYTES`; past that it goes to a
temporary file that the readers then read as they read a plain file, so a huge valid
file takes the memory a plain one takes (the table), not its decompressed bytes on top.
"""

from __future__ import annotations

import contextlib
import io
import os
import zlib
from collections.abc import Callable, Iterator
from typing import BinaryIO

from fasteval.errors import InputError

BLOCK = 1 << 20
"""Compressed bytes read, and most decompressed bytes made, at a time."""

MAX_LINE_BYTES = 1 << 24
"""The longest line (16 MiB) a compressed text input may hold: longer, the file is refused
when the line passes the limit (it is no run, qrels or results file, or a bomb)."""

SPILL_BYTES = 1 << 26
"""Decompressed bytes (64 MiB) kept in memory; a larger file is written to a temporary file."""

_STEM = ".fasteval-inflated."
"""Stem of the temporary files (see :func:`fasteval.io.atomic.temp_prefix`)."""

Source = str | bytes | BinaryIO


def blocks(src: Source, source: str, *, lines: bool = True,
           head: Callable[[bytes], None] | None = None) -> Iterator[bytes]:
    """The decompressed content of gzip data, block by block, each checked first.

    Parameters
    ----------
    src : str, bytes or binary file
        A path, the compressed bytes, or an open binary file (read from where it is).
    source : str
        The name errors give (the file as the user named it).
    lines : bool
        Whether the content is text in lines (refused past :data:`MAX_LINE_BYTES` a line);
        False for a JSON document.
    head : callable, optional
        Called with the complete lines of the first :data:`BLOCK` bytes (or the whole
        content, when shorter and without a line break): a reader's checks, raising
        :class:`~fasteval.errors.InputError` for a bad line.

    Yields
    ------
    bytes
        Decompressed blocks of at most :data:`BLOCK` bytes, in order.

    Raises
    ------
    InputError
        Naming ``source`` (and the line): corrupt or truncated gzip data, a NUL byte, a line
        too long, or what ``head`` finds.

    Examples
    --------
    >>> import gzip
    >>> b"".join(blocks(gzip.compress(b"q1 0 d1 1\\n"), "qrels.gz"))
    b'q1 0 d1 1\\n'
    >>> bomb = gzip.compress(b"a" * (MAX_LINE_BYTES + 1))
    >>> b"".join(blocks(bomb, "run.txt.gz"))
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: run.txt.gz, line 1: the line is longer than 16 MiB (decompressed); expected the short lines of a run, qrels or results file (is it one? a small compressed file can inflate to gigabytes)
    """
    checker = _Checker(source, lines, head)
    for block in _inflate(src, source):
        checker.check(block)
        yield block
    checker.finish()


class _Checker:
    """The checks of :func:`blocks`, block after block (a block is shorter than a line may
    be: only the line that runs on across blocks can pass the limit)."""

    def __init__(self, source: str, lines: bool, head: Callable[[bytes], None] | None) -> None:
        self.source, self.lines, self.head = source, lines, head
        self.newlines = 0  # line breaks before the current block
        self.run = 0  # bytes of the current line before the current block
        self.first: bytes | None = b""  # the start, until it holds a line break
        self.started = False

    def check(self, block: bytes) -> None:
        from fasteval.io._common import check_text_encoding

        if not self.started:  # the first block: as a plain file's start
            self.started = True
            check_text_encoding(block, self.source)
        elif block.find(b"\x00") >= 0:
            self._fail("a NUL byte (\\0) in the text: expected UTF-8 (or ASCII) text; NUL bytes "
                       "come from UTF-16 files written without a byte order mark, or from "
                       "binary files", block, block.find(b"\x00"))
        last = block.rfind(b"\n")
        if self.lines:
            upto = block.find(b"\n") if last >= 0 else len(block)
            if self.run + upto > MAX_LINE_BYTES:
                self._too_long(block, upto)
            self.run = len(block) - last - 1 if last >= 0 else self.run + len(block)
        if self.first is not None:
            self.first += block
            cut = self.first.rfind(b"\n")
            if cut >= 0:
                if self.head is not None:
                    self.head(self.first[:cut + 1])
                self.first = None
            elif len(self.first) >= BLOCK:  # no line in the first block: no head to check
                self.first = None
        self.newlines += block.count(b"\n")

    def finish(self) -> None:
        """The end: a start without any line break still gets its ``head`` check."""
        if self.first and self.head is not None:
            self.head(self.first)

    def _too_long(self, block: bytes, at: int) -> None:
        self._fail(f"the line is longer than {MAX_LINE_BYTES >> 20} MiB (decompressed); expected "
                   "the short lines of a run, qrels or results file (is it one? a small "
                   "compressed file can inflate to gigabytes)", block, at)

    def _fail(self, what: str, block: bytes, at: int) -> None:
        line = self.newlines + block.count(b"\n", 0, at) + 1
        raise InputError(what, source=self.source, line=line)


def _inflate(src: Source, source: str) -> Iterator[bytes]:
    """gzip data (every member of it, as ``gzip`` reads a concatenation) decompressed in
    blocks of at most :data:`BLOCK` bytes; corrupt or truncated data is an error."""
    with _opened(src, source) as fh:
        d = zlib.decompressobj(wbits=31)
        pending = b""
        try:
            while True:
                if not pending:
                    pending = fh.read(BLOCK)
                    if not pending:
                        break
                if d.eof:  # another member follows (or NUL padding, which gzip allows)
                    if not pending.strip(b"\x00"):
                        pending = b""
                        continue
                    d = zlib.decompressobj(wbits=31)
                out = d.decompress(pending, BLOCK)
                pending = d.unused_data if d.eof else d.unconsumed_tail
                if out:
                    yield out
            rest = d.flush()  # (output zlib holds back once the input has run out)
        except zlib.error as exc:
            raise InputError(f"corrupt gzip file ({exc})", source=source) from None
        if rest:
            yield rest
        if not d.eof:
            raise InputError("corrupt gzip file (Compressed file ended before the end-of-stream "
                             "marker was reached)", source=source)


@contextlib.contextmanager
def _opened(src: Source, source: str) -> Iterator[BinaryIO]:
    if isinstance(src, bytes):
        yield io.BytesIO(src)
    elif isinstance(src, str):
        try:
            with open(src, "rb") as fh:
                yield fh
        except IsADirectoryError:
            raise InputError("is a directory, expected a file", source=source) from None
        except OSError as exc:
            if exc.filename is None:
                raise
            raise InputError(f"cannot open ({exc.strerror})", source=source) from None
    else:
        yield src


def inflate_bytes(src: Source, source: str, *, lines: bool = True,
                  head: Callable[[bytes], None] | None = None) -> bytes:
    """The whole decompressed content of gzip data in memory, checked as it is inflated
    (see :func:`blocks`): for readers that hold a plain file whole too.

    Examples
    --------
    >>> import gzip
    >>> inflate_bytes(gzip.compress(b"a\\n") + gzip.compress(b"b\\n"), "x.gz")  # two members
    b'a\\nb\\n'
    >>> inflate_bytes(gzip.compress(b"a\\n")[:-4], "x.gz")
    Traceback (most recent call last):
    ...
    fasteval.errors.InputError: x.gz: corrupt gzip file (Compressed file ended before the end-of-stream marker was reached)
    """
    return b"".join(blocks(src, source, lines=lines, head=head))


@contextlib.contextmanager
def inflated(src: Source, source: str, *, lines: bool = True,
             head: Callable[[bytes], None] | None = None) -> Iterator[bytes | str]:
    """The decompressed content of gzip data as a reader takes it: the bytes when they
    come to at most :data:`SPILL_BYTES`, else the path of a temporary file holding them
    (removed when the block ends), so that a huge file is read as a plain one.

    Examples
    --------
    >>> import gzip
    >>> with inflated(gzip.compress(b"q1 0 d1 1\\n"), "qrels.gz") as data:
    ...     data
    b'q1 0 d1 1\\n'
    """
    import tempfile

    from fasteval.io.atomic import remove_stale, temp_prefix

    kept: list[bytes] = []
    size = 0
    it = blocks(src, source, lines=lines, head=head)
    for block in it:
        kept.append(block)
        size += len(block)
        if size > SPILL_BYTES:
            break
    else:
        yield b"".join(kept)
        return
    directory = tempfile.gettempdir()
    remove_stale(directory, _STEM, ".tmp")  # those of a job killed before it removed them
    fd, path = tempfile.mkstemp(prefix=temp_prefix(_STEM), suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out:
            for block in kept:
                out.write(block)
            kept.clear()
            for block in it:
                out.write(block)
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
