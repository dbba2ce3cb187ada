"""A dependency-free progress bar for the command line (stderr, redrawn in place on a terminal)."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO


class ProgressBar:
    """``with ProgressBar(total, "counting") as bar: ... bar.advance()``.

    Draws only when ``enabled`` (default: the stream is a terminal), so logs and pipes stay clean.
    :meth:`within` shows progress inside the current item (one long query advances the bar too).  ``status``
    (optional) says what runs now, e.g. ``"slowest running: q7 12.3s"``: it is asked by :meth:`refresh`, which a
    background thread calls every ``interval`` seconds while the bar is open (so a long query's seconds keep
    counting on screen), and its last answer is shown on every draw.  It runs on that thread: it must be
    thread-safe, and may take a while (a round trip to a scheduler); an exception it raises shows nothing.
    """

    def __init__(self, total: int, label: str, *, stream: TextIO | None = None, enabled: bool | None = None,
                 width: int = 30, status: Callable[[], str | None] | None = None, interval: float = 1.0):
        self.total = max(int(total), 0)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = enabled
        self.width = width
        self.status = status
        self.interval = interval
        self.done = 0
        self.part = 0.0  # fraction of the current item done
        self.started = time.perf_counter()
        self.note: str | None = None
        self._last_draw = 0.0
        self._lock = threading.RLock()  # the refresh thread and the caller both draw
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> ProgressBar:
        self._draw(force=True)
        if self.enabled and self.status is not None:
            self._ticker = threading.Thread(target=self._tick, name="distsm-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            self.note = None  # nothing runs any more
            self._draw(force=True)
            if self.enabled:
                self.stream.write("\n")
                self.stream.flush()

    def advance(self, k: int = 1) -> None:
        with self._lock:
            self.done += k
            self.part = 0.0
            self._draw()

    def within(self, done: int, total: int) -> None:
        """Progress inside the current item: ``done`` of ``total`` units (a ``progress(done, total)`` callback)."""
        with self._lock:
            self.part = min(max(done / total, 0.0), 1.0) if total > 0 else 0.0
            self._draw()

    @contextmanager
    def above(self) -> Iterator[None]:
        """Clear the bar's line for output printed inside the block (the next draw puts the bar back below it);
        the refresh thread does not draw meanwhile."""
        with self._lock:
            if self.enabled:
                self.stream.write("\r\033[K")
            yield

    def refresh(self) -> None:
        """Ask ``status`` again and redraw (when enabled)."""
        if not self.enabled or self.status is None:
            return
        try:
            note = self.status()
        except Exception:  # a status that cannot be had now (e.g. a scheduler going away) shows nothing
            note = None
        with self._lock:
            self.note = note
            self._draw(force=True)

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            self.refresh()

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        with self._lock:
            now = time.perf_counter()
            if not force and now - self._last_draw < 0.1 and self.done < self.total:
                return
            self._last_draw = now
            frac = min((self.done + self.part) / self.total, 1.0) if self.total else 1.0
            fill = int(frac * self.width)
            elapsed = now - self.started
            current = f" ({self.part:4.0%} of the current)" if self.part and self.done < self.total else ""
            note = f" {self.note}" if self.note and self.done < self.total else ""
            self.stream.write(f"\r\033[K{self.label} [{'#' * fill}{'.' * (self.width - fill)}] "
                              f"{self.done}/{self.total}{current} {elapsed:6.1f}s{note}")
            self.stream.flush()


class Running:
    """The query running now in this process, for a :class:`ProgressBar`'s ``status``: :meth:`start` names it,
    :meth:`__call__` says ``"running: NAME 1.2s"`` (one query runs at a time here, so it is the slowest running)."""

    def __init__(self) -> None:
        self._current: tuple[str, float] | None = None

    def start(self, name: str | None) -> None:
        """``name`` starts now (None: nothing runs)."""
        self._current = None if name is None else (name, time.perf_counter())

    def __call__(self) -> str | None:
        current = self._current
        if current is None:
            return None
        return f"running: {current[0]} {time.perf_counter() - current[1]:.1f}s"


@contextmanager
def logged_steps(name: str, *, enabled: bool | None = None, stream: TextIO | None = None) -> Iterator[None]:
    """Print logger ``name``'s INFO messages (the steps of a long set-up: partitioning, each part's load) to
    ``stream`` (stderr) while the block runs, when ``enabled`` (default: the stream is a terminal)."""
    stream = stream if stream is not None else sys.stderr
    if enabled is None:
        enabled = hasattr(stream, "isatty") and stream.isatty()
    if not enabled:
        yield
        return
    log = logging.getLogger(name)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.setLevel(logging.INFO)
    level = log.level
    log.addHandler(handler)
    if not log.isEnabledFor(logging.INFO):
        log.setLevel(logging.INFO)
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
