"""Stopping long work promptly on Ctrl-C or SIGTERM, wherever it is blocked.

Python delivers a signal to the main thread only, and only between bytecodes: a worker thread
blocked on a socket read or a child process keeps the process alive until it returns by itself.
So blocking work registers an ``abort`` hook while it runs (a watchdog shuts its sockets, a
runner kills its child process); ``cancel()`` sets the flag and calls every hook, and code that
loops or sleeps checks ``cancelled()`` or calls ``sleep()``, which raise ``Cancelled``.

A section that must finish once started (publishing an attestation and indexing it) runs
``shielded()``: a signal inside it is acted on when it ends, so an interruption never leaves
half of a snapshot written.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

INTERRUPTED_EXIT = 130
"""The shell's code for a process ended by SIGINT (128 + 2); prov uses it for SIGTERM too."""


class Cancelled(KeyboardInterrupt):
    """Raised where work notices the cancellation; a KeyboardInterrupt, so no ``except
    Exception`` swallows it."""


_event = threading.Event()
_lock = threading.Lock()
_hooks: dict[int, Callable[[], None]] = {}
_ids = itertools.count()
_shield_depth = 0
_pending: int | None = None


def cancelled() -> bool:
    return _event.is_set()


def check() -> None:
    """Raise ``Cancelled`` once the work was cancelled."""
    if _event.is_set():
        raise Cancelled


def sleep(seconds: float) -> None:
    """``time.sleep`` that a cancellation ends at once (with ``Cancelled``)."""
    if _event.wait(seconds):
        raise Cancelled


def cancel() -> None:
    """Mark the work cancelled and abort everything blocked (each hook once)."""
    _event.set()
    with _lock:
        hooks = list(_hooks.values())
        _hooks.clear()
    for hook in hooks:
        with contextlib.suppress(Exception):  # one failed abort must not keep the others
            hook()


def reset() -> None:
    """Forget a cancellation (tests that run several commands in one process)."""
    global _pending
    _event.clear()
    _pending = None


def register(hook: Callable[[], None]) -> Callable[[], None]:
    """Run ``hook`` on cancellation (at once if the work already was); returns the remover."""
    key = next(_ids)
    with _lock:
        _hooks[key] = hook
    if _event.is_set():
        cancel()

    def remove() -> None:
        with _lock:
            _hooks.pop(key, None)

    return remove


@contextlib.contextmanager
def on_cancel(hook: Callable[[], None]) -> Iterator[None]:
    """Run ``hook`` if the work is cancelled while the block runs."""
    remove = register(hook)
    try:
        yield
    finally:
        remove()


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """Defer a signal that arrives inside the block to its end (main thread only)."""
    global _shield_depth, _pending
    _shield_depth += 1
    try:
        yield
    finally:
        _shield_depth -= 1
    if _shield_depth == 0 and _pending is not None:
        _pending = None
        raise KeyboardInterrupt


def _handle(signum: int, frame: FrameType | None) -> None:
    global _pending
    if _event.is_set() and _shield_depth == 0:
        # A second signal: the user wants out now, whatever is still unwinding.
        sys.stderr.flush()
        os._exit(INTERRUPTED_EXIT)
    cancel()
    if _shield_depth:
        _pending = signum
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def handling_signals() -> Iterator[None]:
    """SIGINT and SIGTERM cancel the work of the block, then are handled as before it.

    Only the main thread can set signal handlers; elsewhere the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reset()
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum in previous:
        signal.signal(signum, _handle)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
