"""Guess a graph file's format from its first meaningful line."""

from __future__ import annotations

import gzip
import zlib

from distsm.errors import GraphFormatError, short_repr
from distsm.formats._common import PathLike, fspath, is_gzip_name, without_bom

_LINE_LIMIT = 1 << 16


def _is_int(tok: bytes, *, allow_negative: bool = False) -> bool:
    digits = tok[1:] if allow_negative and tok[:1] == b"-" else tok
    return digits.isdigit() and digits.isascii()


def detect_format(path: PathLike) -> str:
    """Return ``"sm"``, ``"gsi"`` or ``"snap"`` for the file at ``path`` (``.gz`` files are decompressed).

    Only the first line that is neither blank nor a ``#`` comment is read:

    * ``t # k`` → ``"gsi"``;
    * ``t N M`` (two integers) → ``"sm"``;
    * two or three integers → ``"snap"``.

    Raises:
        GraphFormatError: the file has no such line, or the line fits none of the above (names that line).
        OSError: the file cannot be opened.
    """
    p = fspath(path)
    lineno = 0
    try:
        with (gzip.open(p, "rb") if is_gzip_name(p) else open(p, "rb")) as f:
            partial = False  # inside a line longer than _LINE_LIMIT that began as a comment
            while True:
                raw = f.readline(_LINE_LIMIT)
                if not raw:
                    break
                if not partial:
                    lineno += 1
                if lineno == 1:
                    raw = without_bom(raw)
                complete = raw.endswith(b"\n") or len(raw) < _LINE_LIMIT
                if partial:
                    partial = not complete
                    continue
                fields = raw.split()
                if not fields or fields[0].startswith(b"#"):
                    partial = not complete
                    continue
                return _classify(p, lineno, fields, raw)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise GraphFormatError(p, None, f"cannot decompress gzip data: {exc}") from exc
    raise GraphFormatError(p, max(lineno, 1), "empty file: no graph found (only blank or comment lines)")


def _classify(path: str, lineno: int, fields: list[bytes], raw: bytes) -> str:
    if fields[0] == b"t":
        if len(fields) == 3 and fields[1] == b"#" and _is_int(fields[2], allow_negative=True):
            return "gsi"
        if len(fields) == 3 and _is_int(fields[1]) and _is_int(fields[2]):
            return "sm"
    elif len(fields) in (2, 3) and all(_is_int(x) for x in fields):
        return "snap"
    text = short_repr(raw.decode("utf-8", "replace").strip())
    raise GraphFormatError(path, lineno, f"cannot detect the graph format from {text}: expected 't # k' (GSI), "
                                         "'t N M' (sm) or 'u v [label]' (SNAP edge list)")
