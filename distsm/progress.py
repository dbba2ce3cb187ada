"""A dependency-free progress bar for the command line (stderr, redrawn in place on a terminal)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """``with ProgressBar(total, "counting") as bar: ... bar.advance()``.

    Draws only when ``enabled`` (default: the stream is a terminal and there is more than one item), so logs and
    pipes stay clean.
    """

    def __init__(self, total: int, label: str, *, stream: TextIO | None = None, enabled: bool | None = None,
                 width: int = 30):
        self.total = max(int(total), 0)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = self.total > 1 and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.width = width
        self.done = 0
        self.started = time.perf_counter()
        self._last_draw = 0.0

    def __enter__(self) -> ProgressBar:
        self._draw(force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self._draw(force=True)
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()

    def advance(self, k: int = 1) -> None:
        self.done += k
        self._draw()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._last_draw < 0.1 and self.done < self.total:
            return
        self._last_draw = now
        frac = self.done / self.total if self.total else 1.0
        fill = int(frac * self.width)
        elapsed = now - self.started
        self.stream.write(f"\r{self.label} [{'#' * fill}{'.' * (self.width - fill)}] "
                          f"{self.done}/{self.total} {elapsed:6.1f}s")
        self.stream.flush()
