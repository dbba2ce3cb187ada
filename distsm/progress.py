"""A dependency-free progress bar for the command line (stderr, redrawn in place on a terminal)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """``with ProgressBar(total, "counting") as bar: ... bar.advance()``.

    Draws only when ``enabled`` (default: the stream is a terminal), so logs and pipes stay clean.
    :meth:`within` shows progress inside the current item (one long query advances the bar too).
    """

    def __init__(self, total: int, label: str, *, stream: TextIO | None = None, enabled: bool | None = None,
                 width: int = 30):
        self.total = max(int(total), 0)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.width = width
        self.done = 0
        self.part = 0.0  # fraction of the current item done
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
        self.part = 0.0
        self._draw()

    def within(self, done: int, total: int) -> None:
        """Progress inside the current item: ``done`` of ``total`` units (a ``progress(done, total)`` callback)."""
        self.part = min(max(done / total, 0.0), 1.0) if total > 0 else 0.0
        self._draw()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._last_draw < 0.1 and self.done < self.total:
            return
        self._last_draw = now
        frac = min((self.done + self.part) / self.total, 1.0) if self.total else 1.0
        fill = int(frac * self.width)
        elapsed = now - self.started
        current = f" ({self.part:4.0%} of the current)" if self.part and self.done < self.total else ""
        self.stream.write(f"\r\033[K{self.label} [{'#' * fill}{'.' * (self.width - fill)}] "
                          f"{self.done}/{self.total}{current} {elapsed:6.1f}s")
        self.stream.flush()
