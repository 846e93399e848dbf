"""Whitespace tokeniser for TREC text, compiled with numba.

One sequential pass over the raw bytes finds the data lines (skipping blank
lines and comments), splits them on runs of ASCII whitespace (as trec_eval's
``isspace``-based parser does), checks the field count, and measures the
fields we keep; a second pass copies those fields into Arrow-style string
buffers (int64 offsets + bytes), so no Python object is made per line.
"""

from __future__ import annotations

import numpy as np

from fasteval._jit import njit

_WS = np.zeros(256, dtype=np.bool_)
_WS[[32, 9, 13, 11, 12]] = True  # isspace() in the C locale, minus the newline
_TOK = ~_WS
_TOK[10] = False


@njit(cache=True)
def _pass(buf, start, is_run, want, ws, tok, fill, offsets, data, base, line_no):  # pragma: no cover - compiled
    """Scan (``fill`` False: count/measure) or copy (``fill`` True) the wanted fields.

    Returns ``(rows, lens, bad_line, bad_count)``; ``bad_line`` is the 1-based
    number of the first line with a wrong field count (0 if none).
    """
    n = buf.size
    nw = want.size
    lens = np.zeros(nw, np.int64)
    pos = np.zeros(nw, np.int64)
    rows = 0
    line = 0
    i = start
    while i < n:
        line += 1
        ls = i
        while i < n and ws[buf[i]]:
            i += 1
        if i >= n:
            break
        c = buf[i]
        if c == 10:  # blank line
            i += 1
            continue
        if c == 35 and (is_run or i == ls):  # comment
            while i < n and buf[i] != 10:
                i += 1
            i += 1
            continue
        nf = 0
        k = 0
        while True:
            s = i
            while i < n and tok[buf[i]]:
                i += 1
            if k < nw and want[k] == nf:
                length = i - s
                if fill:
                    at = base[k] + pos[k]
                    for j in range(length):
                        data[at + j] = buf[s + j]
                    pos[k] += length
                    offsets[k, rows + 1] = pos[k]
                lens[k] += length
                k += 1
            nf += 1
            while i < n and ws[buf[i]]:
                i += 1
            if i >= n or buf[i] == 10:
                break
        if (is_run and nf < 6) or (not is_run and nf != 4):
            return rows, lens, line, nf
        if fill and line_no.size:
            line_no[rows] = line
        rows += 1
        i += 1
    return rows, lens, 0, 0


def tokenize(buf: np.ndarray, start: int, is_run: bool, want: np.ndarray, lines: bool = False):
    """Tokenise ``buf[start:]``; return ``(columns, line_no, ascii_only)`` or ``(None, bad_line, count)``.

    ``columns[k]`` is ``(offsets, data)`` for field ``want[k]``: offsets (int32, or
    int64 past 2 GiB of text) of length rows + 1, and the uint8 bytes. ``line_no``
    (1-based line of each data row) is filled only when ``lines`` is true.
    """
    dummy2 = np.zeros((0, 0), np.int32)
    dummy1 = np.zeros(0, np.uint8)
    dummyl = np.zeros(0, np.int64)
    rows, lens, bad_line, bad_count = _pass(
        buf, start, is_run, want, _WS, _TOK, False, dummy2, dummy1, dummyl, dummyl
    )
    if bad_line:
        return None, bad_line, bad_count
    base = np.zeros(want.size + 1, np.int64)
    base[1:] = np.cumsum(lens)
    wide = bool(lens.size and lens.max() >= 2**31 - 1)
    offsets = np.zeros((want.size, rows + 1), np.int64 if wide else np.int32)
    data = np.empty(int(base[-1]), np.uint8)
    line_no = np.empty(rows if lines else 0, np.int64)
    _pass(buf, start, is_run, want, _WS, _TOK, True, offsets, data, base, line_no)
    columns = [(offsets[k], data[base[k] : base[k + 1]]) for k in range(want.size)]
    ascii_only = bool(buf.size == 0 or buf.max() < 128)
    return columns, line_no, ascii_only
