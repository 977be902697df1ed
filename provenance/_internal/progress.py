"""Progress of long work (a source being collected, blobs being hashed), for whoever shows it.

The library only reports: ``task()`` marks a piece of work for as long as it runs, ``advance()``
adds bytes or items to the task of the calling thread. Showing anything is the command line's
business (``cli/_progress.py`` reads ``active()`` on a terminal and shows what runs longer than
about two seconds); with nobody looking, reporting costs a lock and an addition.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Task:
    """One piece of work: what it is, since when, and how much of it is done."""

    text: str
    unit: str = ""
    """``"B"`` for bytes, else a noun for items (``"objects"``), or empty for no count."""
    total: int | None = None
    done: int = 0
    started: float = field(default_factory=time.monotonic)

    def advance(self, amount: int = 1) -> None:
        self.done += amount  # one writer per task: its own thread

    def describe(self, now: float) -> str:
        parts = [self.text, f"{now - self.started:.0f}s"]
        if self.unit and (self.done or self.total):
            shown = _amount(self.done, self.unit)
            if self.total:
                shown += f" of {_amount(self.total, self.unit)}"
            parts.append(shown)
        return " ".join(parts)


_lock = threading.Lock()
_active: list[Task] = []
_local = threading.local()


def current() -> Task | None:
    """The calling thread's current task, to hand to a helper thread (``within``)."""
    found: Task | None = getattr(_local, "task", None)
    return found


@contextlib.contextmanager
def within(item: Task | None) -> Iterator[None]:
    """Count this thread's ``advance`` calls for ``item`` (a task of the thread that asked)."""
    outer = getattr(_local, "task", None)
    _local.task = item
    try:
        yield
    finally:
        _local.task = outer


@contextlib.contextmanager
def task(text: str, *, unit: str = "", total: int | None = None) -> Iterator[Task]:
    """Report ``text`` as running for the block; it is the calling thread's current task."""
    item = Task(text, unit, total)
    outer = getattr(_local, "task", None)
    with _lock:
        _active.append(item)
    _local.task = item
    try:
        yield item
    finally:
        _local.task = outer
        with _lock:
            _active.remove(item)


def advance(amount: int, unit: str = "B") -> None:
    """Count ``amount`` for the calling thread's current task, if it has one."""
    current: Task | None = getattr(_local, "task", None)
    if current is not None:
        if not current.unit:
            current.unit = unit
        current.advance(amount)


def active() -> list[Task]:
    """The tasks running now, oldest first."""
    with _lock:
        return list(_active)


def _amount(value: int, unit: str) -> str:
    if unit != "B":
        return f"{value:,} {unit}"
    size = float(value)
    for name in ("B", "KB", "MB", "GB"):
        if size < 1000 or name == "GB":
            return f"{size:.0f} {name}" if name == "B" else f"{size:.1f} {name}"
        size /= 1000
    raise AssertionError("unreachable")
