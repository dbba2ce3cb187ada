"""Writing graph files (private): binary output gzip-aware by file name, and vectorised integer-to-text rows."""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from typing import IO, cast

import numpy as np

from distsm.formats._common import MAX_DIGITS, PathLike, fspath, is_gzip_name


def open_output(path: PathLike) -> IO[bytes]:
    """Open ``path`` for binary writing, gzip-compressed when the name ends in ``.gz``."""
    p = fspath(path)
    if is_gzip_name(p):
        return cast(IO[bytes], gzip.open(p, "wb", compresslevel=6))
    return open(p, "wb")


_THRESH = 10 ** np.arange(1, MAX_DIGITS + 1, dtype=np.int64)
_ROWS_PER_BLOCK = 1 << 20


def format_rows(prefix: bytes, cols: Sequence[np.ndarray]) -> bytes:
    """Text lines ``prefix + " ".join(str(c[i]) for c in cols) + "\\n"`` for every row ``i``, vectorised.

    All values must be non-negative integers.  ``prefix`` should end with a space when it is not empty.
    """
    arrs = [np.asarray(c, np.int64) for c in cols]
    rows = arrs[0].shape[0] if arrs else 0
    if rows == 0:
        return b""
    nds = [np.searchsorted(_THRESH, c, side="right") + 1 for c in arrs]
    linelen = len(prefix) + sum(nds) + len(arrs)  # separators plus the newline
    ends = np.cumsum(linelen)
    begins = ends - linelen
    out = np.full(int(ends[-1]), 32, np.uint8)
    for j, ch in enumerate(prefix):
        out[begins + j] = ch
    pos = begins + len(prefix)
    for c, nd in zip(arrs, nds):
        last = pos + nd - 1
        v = c.copy()
        for k in range(int(nd.max())):
            live = np.flatnonzero(nd > k)
            out[last[live] - k] = 48 + v[live] % 10
            v //= 10
        pos = pos + nd + 1
    out[ends - 1] = 10
    return out.tobytes()


def write_rows(f: IO[bytes], prefix: bytes, cols: Sequence[np.ndarray]) -> None:
    """:func:`format_rows` in blocks, written to ``f``."""
    rows = len(cols[0]) if cols else 0
    for lo in range(0, rows, _ROWS_PER_BLOCK):
        f.write(format_rows(prefix, [c[lo:lo + _ROWS_PER_BLOCK] for c in cols]))
