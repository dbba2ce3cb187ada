"""Write a ``.npy`` file of int64 rows chunk by chunk, without holding the rows in memory.

A ``.npy`` header states the array's shape, which a stream of matches does not know until it ends: the header
is written with room to spare, the rows follow, and the header is rewritten in place with the final row count.
The file is an ordinary version 1.0 ``.npy`` file (``numpy.load`` reads it, memory-mapped too).
"""

from __future__ import annotations

import os
import struct
from typing import Any

import numpy as np

_MAGIC = b"\x93NUMPY\x01\x00"
_HEADER_BYTES = 128  # magic + length + dict, a multiple of 64 as the format asks; room for 20-digit shapes
_DTYPE = np.dtype("<i8")


class NpyRowWriter:
    """``with NpyRowWriter(path, columns) as w: w.write(rows)`` writes an ``int64[rows, columns]`` array."""

    def __init__(self, path: str | os.PathLike, columns: int):
        self.path = os.fspath(path)
        self.columns = int(columns)
        self.rows = 0
        self._file = open(self.path, "wb")
        self._file.write(self._header())

    def _header(self) -> bytes:
        text = f"{{'descr': '{_DTYPE.str}', 'fortran_order': False, 'shape': ({self.rows}, {self.columns}), }}"
        room = _HEADER_BYTES - len(_MAGIC) - 2
        return _MAGIC + struct.pack("<H", room) + text.ljust(room - 1).encode("latin1") + b"\n"

    def write(self, rows: Any) -> None:
        """Append ``rows`` (``[k, columns]`` integers)."""
        arr = np.ascontiguousarray(rows, dtype=_DTYPE)
        if arr.ndim != 2 or arr.shape[1] != self.columns:
            raise ValueError(f"rows must have shape (k, {self.columns}), got {arr.shape}")
        self._file.write(arr.tobytes())
        self.rows += arr.shape[0]

    def close(self) -> None:
        """Rewrite the header with the final shape and close the file."""
        if self._file.closed:
            return
        self._file.seek(0)
        self._file.write(self._header())
        self._file.close()

    def __enter__(self) -> NpyRowWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
