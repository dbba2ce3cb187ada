"""Fast reading of whole-number tables (private): pyarrow's multi-threaded CSV reader (pandas' C parser without
pyarrow, or for runs of blanks) where it reads exactly what :func:`lex` would.

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
    """The columns (non-negative; ``int32`` when pyarrow read them and every value fits, else ``int64``) of a
    file of whole numbers, and where each row came from; None when the file holds anything :func:`lex` might
    read differently (see the module's description)."""
    body, first = _body(data)
    counts = _blank_counts(data, body) if body < len(data) else None
    if counts is None:
        return None
    spaces, tabs, newlines, crs = counts
    if crs and crs != data.count(b"\r\n", body):
        return None  # a lone CR ends a line for the CSV readers but is a blank for the lexer
    cols = _parsed(data, body, first, " " if tabs == 0 else "\t" if spaces == 0 else None)
    if not cols or not _digits_match(cols, len(data) - body - spaces - tabs - newlines - crs):
        return None
    rows = int(cols[0].shape[0])
    lines = newlines + (not data.endswith(b"\n"))
    consecutive = rows == lines
    return cols, TableLines(path, b"" if consecutive else data, first, consecutive)


def _blank_counts(data: bytes, body: int) -> tuple[int, ...] | None:
    """How many spaces, tabs, LFs and CRs ``data[body:]`` holds; None when it holds a byte that is neither one
    of those nor a digit.

    NumPy compares blocks that stay in cache, several times faster than ``bytes.count``; a find (``memchr``)
    first skips the blanks a file does not use.  Every blank is counted: the non-digits must be exactly those."""
    blanks = b" \t\n\r"
    counted = [j for j in range(4) if data.find(blanks[j:j + 1], body) >= 0]
    view = np.frombuffer(data, np.uint8, offset=body)
    counts, others = [0, 0, 0, 0], 0
    for lo in range(0, view.size, 1 << 20):
        block = view[lo:lo + (1 << 20)]
        others += int(np.count_nonzero(block - np.uint8(48) > 9))  # not a digit (uint8 wraps below "0")
        for j in counted:
            counts[j] += int(np.count_nonzero(block == blanks[j]))
    return tuple(counts) if others == sum(counts) else None


def _parsed(data: bytes, body: int, first: int, sep: str | None) -> list[np.ndarray] | None:
    """The integer columns of ``data[body:]`` (line ``first`` on) split at ``sep`` (None: runs of blanks), or
    None when a field is not a number or the rows' field counts differ.  pyarrow parses on every core; pandas
    serves runs of blanks (pyarrow splits at one character) and installs without pyarrow."""
    if sep is not None:
        try:
            return _arrow_columns(data, body, sep)
        except ImportError:
            pass
    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(data), sep=r"\s+" if sep is None else sep, header=None,
                            skiprows=first - 1, dtype=np.int64, quoting=csv.QUOTE_NONE, na_filter=False, engine="c",
                            skip_blank_lines=True)
    except (ValueError, OverflowError, pd.errors.EmptyDataError):
        return None
    return [np.ascontiguousarray(frame.pop(c).to_numpy(np.int64)) for c in list(frame.columns)]


def _arrow_columns(data: bytes, body: int, sep: str) -> list[np.ndarray] | None:
    """:func:`_parsed` by pyarrow's multi-threaded CSV reader (ImportError: no pyarrow)."""
    import pyarrow as pa
    import pyarrow.csv as pc

    end = data.find(b"\n", body)
    ncols = data[body:len(data) if end < 0 else end].count(sep.encode()) + 1  # a row with another count fails
    names = [f"c{j}" for j in range(ncols)]
    # int32 first: half the bytes for every pass that follows; a value int32 cannot hold fails the parse, and
    # int64 reads it again (so does a malformed file, on its way to the lexer).
    for kind in (pa.int32(), pa.int64()):
        try:
            table = pc.read_csv(pa.BufferReader(pa.py_buffer(data)[body:]),  # no copy of the file's bytes
                                read_options=pc.ReadOptions(column_names=names),
                                parse_options=pc.ParseOptions(delimiter=sep, quote_char=False, escape_char=False),
                                convert_options=pc.ConvertOptions(column_types=dict.fromkeys(names, kind)))
            break
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            if kind == pa.int64():
                return None
    cols = []
    for name in names:
        col = table.column(name)
        if col.null_count:  # an empty field (a doubled or trailing separator): the lexer reads it otherwise
            return None
        cols.append(col.to_numpy())
        del col
        table = table.drop_columns([name])  # frees the column's Arrow buffers before the next copy
    del table
    # Arrow's pool keeps freed memory for reuse (RSS the size of the parse) while the graph is built: give it back.
    pa.default_memory_pool().release_unused()
    return cols


def _digits_match(cols: list[np.ndarray], digit_bytes: int) -> bool:
    """Whether every value is below ``10**18`` and the values' decimal digits add up to ``digit_bytes``."""
    total = 0
    for c in cols:
        top = int(c.max(initial=0))
        if c.size and int(c.min()) < 0 or top >= _LIMIT:
            return False
        total += c.size
        powers = [10**k for k in range(1, len(str(top)))]
        for lo in range(0, c.size, 1 << 18):  # blocks: the comparisons' temporaries stay in cache
            block = c[lo:lo + (1 << 18)]
            total += sum(int(np.count_nonzero(block >= p)) for p in powers)
    return total == digit_bytes
