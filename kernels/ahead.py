"""Host work started on a thread beside a device join, taken only if the join does not answer by itself.

A count on a GPU first tries the general join on the device under an allowance (a *trial*).  When the trial is
stopped, the count refines and plans on the host: on gMatch's suite that is most of a small query's time, and
the stopped trial (2.4 ms of launches and waits on Q_8, 7.7 ms on Q_19, H200) is all waste.  While the device
works the host thread mostly waits on it, so the count hands its host refinement and planning to this module's
one thread as soon as the trial has read past its least allowance, and takes the result if the trial is stopped.
A trial that finishes drops it: the thread stops at its next cancellation check.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from distsm.kernels.records import Control

T = TypeVar("T")

_executor: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def _thread() -> ThreadPoolExecutor:
    """The one thread that runs work ahead (a process's counts share it: work ahead waits for the host, which a
    second thread would not add)."""
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="distsm-ahead")
        return _executor


class Ahead(Generic[T]):
    """``work(control)`` started on the work-ahead thread, under a :class:`Control` that cancels it once
    :meth:`drop` is called or once ``control`` (the count's own) is cancelled."""

    def __init__(self, work: Callable[[Control], T], control: Control | None):
        self._dropped = False
        theirs = None if control is None else control.cancelled

        def cancelled() -> bool:
            return self._dropped or (theirs is not None and theirs())

        self._future: Future[T] = _thread().submit(work, Control(cancelled=cancelled))

    def drop(self) -> None:
        """Not wanted: stop it at its next cancellation check (or before it starts)."""
        self._dropped = True
        self._future.cancel()

    def take(self) -> T | None:
        """Its result, waiting for it if it is running; None where it had not started (the caller does the work
        itself rather than wait behind another count's).  Its exceptions are raised here."""
        if self._future.cancel():
            return None
        return self._future.result()
