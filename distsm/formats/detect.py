"""Guess a graph file's format from its first meaningful line, asking each registered format."""

from __future__ import annotations

import gzip
import zlib

from distsm.errors import GraphFormatError, short_repr
from distsm.formats._common import PathLike, fspath, is_gzip_name, without_bom
from distsm.formats.registry import registered

_LINE_LIMIT = 1 << 16


def detect_format(path: PathLike) -> str:
    """Return the name of the registered format (:mod:`distsm.formats.registry`) of the file at ``path``
    (``.gz`` files are decompressed), e.g. ``"sm"``, ``"gsi"`` or ``"snap"``.

    Only the first line that is neither blank nor a ``#`` comment is read, and each format's detector judges it:

    * ``t # k`` → ``"gsi"``;
    * ``t N M`` (two integers) → ``"sm"``;
    * two or three integers → ``"snap"``;
    * binary formats by their name ending or first bytes: ``.parquet`` or ``PAR1`` → ``"parquet"``.

    Raises:
        GraphFormatError: the file has no such line, or the line fits none of the above (names that line).
        OSError: the file cannot be opened.
    """
    p = fspath(path)
    binary = _binary_format(p)
    if binary is not None:
        return binary
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


def _binary_format(path: str) -> str | None:
    """The format a binary file's name ending or magic bytes name (``.parquet``, ``PAR1``), or None."""
    formats = [f for f in registered() if f.magic is not None or f.suffix is not None]
    for fmt in formats:
        if fmt.suffix is not None and path.lower().endswith(fmt.suffix):
            return fmt.name
    if formats and not is_gzip_name(path):
        with open(path, "rb") as f:
            head = f.read(16)
        for fmt in formats:
            if fmt.magic is not None and head.startswith(fmt.magic):
                return fmt.name
    return None


def _classify(path: str, lineno: int, fields: list[bytes], raw: bytes) -> str:
    formats = registered()
    for fmt in formats:
        if fmt.detect(fields):
            return fmt.name
    text = short_repr(raw.decode("utf-8", "replace").strip())
    expected = [f"{fmt.first_line} ({fmt.title})" for fmt in formats if fmt.magic is None]  # text formats
    raise GraphFormatError(path, lineno, f"cannot detect the graph format from {text}: expected "
                                         f"{', '.join(expected[:-1])} or {expected[-1]}")
