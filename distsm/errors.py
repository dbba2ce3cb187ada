"""Exceptions raised by distsm."""

from __future__ import annotations

import os
from typing import Any


def elide(text: str, limit: int = 60) -> str:
    """``text`` cut in the middle to at most ``limit`` characters (errors quote user input, which may be huge)."""
    if len(text) <= limit:
        return text
    head = (limit - 3) // 2
    return f"{text[:head]}...{text[len(text) - (limit - 3 - head):]}"


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)`` elided to at most ``limit`` characters."""
    return elide(repr(value), limit)


class GraphError(ValueError):
    """A graph's content is invalid (self loop, duplicate edge, id out of range, ...).

    ``edge_index`` (when not None) is the position of the offending edge in the input given to
    :meth:`distsm.Graph.from_edges`; ``vertex_index`` likewise for a vertex.  Readers use them to
    name the line of the file the bad record came from.
    """

    def __init__(self, message: str, *, edge_index: int | None = None, vertex_index: int | None = None):
        super().__init__(message)
        self.message = message
        self.edge_index = edge_index
        self.vertex_index = vertex_index


class GraphFormatError(ValueError):
    """A graph file (or query file) cannot be read.  The message names the file, the line (1-based; and the
    column where one is known) and the problem: ``path:line[:column]: problem``."""

    def __init__(self, path: str | os.PathLike | None, line: int | None, problem: str, *,
                 column: int | None = None):
        self.path = None if path is None else os.fspath(path)
        self.line = line
        self.column = column
        self.problem = problem
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}:{line}" if column is None else f"{where}:{line}:{column}"
        super().__init__(f"{where}: {problem}")


class BackendUnavailableError(RuntimeError):
    """The requested compute backend cannot run here (e.g. ``backend="cupy"`` without a CUDA device)."""
