"""Fast reading of whole-number tables (private): pandas' C parser where it reads exactly what :func:`lex` would.

:func:`int_table` accepts only files it can prove it reads the same as the lexer: after the leading blank and
``#`` comment lines, nothing but ASCII digits, spaces, tabs and line ends (``\\n``, ``\\r\\n``); every line the same
number of fields; every value below ``10**18``; and as many digit bytes in the file as the values have digits (so
no field hides a longer token behind leading zeros).  Anything else returns None and the caller lexes the file,
which names the line and the problem.  :class:`TableLines` maps a table row to its line for messages.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

import numpy as np

from distsm.errors import GraphFormatError
from distsm.formats._common import Records, lex

_DIGITS = b"0123456789"
_ALLOWED = _DIGITS + b" \t\r\n"
_LIMIT = 10**18  # the lexer's limit: 18 digits


@dataclass
class TableLines:
    """Where each row of an :func:`int_table` came from: row ``i`` is line ``first + i`` when the table's lines
    are consecutive, else the lexer finds it (only messages need it)."""

    path: str
    data: bytes
    first: int
    consecutive: bool
    _records: Records | None = field(default=None, repr=False)

    def line_of(self, i: int) -> int:
        """1-based line number of row ``i``."""
        if self.consecutive:
            return self.first + i
        if self._records is None:
            self._records = lex(self.data, self.path)
        return self._records.line_of(i)

    def error(self, i: int, problem: str) -> GraphFormatError:
        """A :class:`GraphFormatError` naming the line of row ``i``."""
        return GraphFormatError(self.path, self.line_of(i), problem)


def _body(data: bytes) -> tuple[int, int]:
    """Byte offset and 1-based line number of the first line that is neither blank nor a ``#`` comment."""
    pos, line = 0, 1
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end + 1
        text = data[pos:end].strip()
        if text and not text.startswith(b"#"):
            break
        pos, line = end, line + 1
    return pos, line


def int_table(data: bytes, path: str) -> tuple[list[np.ndarray], TableLines] | None:
    """The columns (``int64``, non-negative) of a file of whole numbers, and where each row came from; None when
    the file holds anything :func:`lex` might read differently (see the module's description)."""
    body, first = _body(data)
    if body == len(data) or data.translate(None, _ALLOWED) != data[:body].translate(None, _ALLOWED):
        return None
    if data.count(b"\r", body) and data.count(b"\r", body) != data.count(b"\r\n", body):
        return None  # a lone CR ends a line for pandas but is a blank for the lexer
    blanks = data.translate(None, _DIGITS)[len(data[:body].translate(None, _DIGITS)):]  # the body's blanks
    spaces, tabs, newlines = blanks.count(b" "), blanks.count(b"\t"), blanks.count(b"\n")
    # One kind of single separator parses faster than runs of blanks; a doubled one fails and falls back.
    sep = "\t" if spaces == 0 else " " if tabs == 0 else r"\s+"
    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(data), sep=sep, header=None, skiprows=first - 1, dtype=np.int64,
                            quoting=csv.QUOTE_NONE, na_filter=False, engine="c", skip_blank_lines=True)
    except (ValueError, OverflowError, pd.errors.EmptyDataError):
        return None
    cols = [np.ascontiguousarray(frame[c].to_numpy(np.int64)) for c in frame.columns]
    del frame
    if not cols or not _digits_match(cols, len(data) - body - len(blanks)):
        return None
    rows = int(cols[0].shape[0])
    lines = newlines + (not data.endswith(b"\n"))
    consecutive = rows == lines
    return cols, TableLines(path, b"" if consecutive else data, first, consecutive)


def _digits_match(cols: list[np.ndarray], digit_bytes: int) -> bool:
    """Whether every value is below ``10**18`` and the values' decimal digits add up to ``digit_bytes``."""
    total = 0
    for c in cols:
        top = int(c.max(initial=0))
        if c.size and int(c.min()) < 0 or top >= _LIMIT:
            return False
        total += c.size
        power = 10
        while power <= top:
            total += int(np.count_nonzero(c >= power))
            power *= 10
    return total == digit_bytes
