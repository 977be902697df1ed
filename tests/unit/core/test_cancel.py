"""Cancellation (Ctrl-C, SIGTERM) reaches work blocked where Python's signals do not.

A signal interrupts only the main thread; these are the places a worker thread blocks: an HTTP
read from a server that never answers, a git child waiting on one. Each is real: a listening
socket on 127.0.0.1 that accepts and never answers, the real git binary.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from provenance._internal import cancel, redact
from provenance._internal.proc import git
from provenance.capture._http import Fetcher, Policy
from provenance.store.objects import Store

SOON = 1.0


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    cancel.reset()
    yield
    cancel.reset()


@pytest.fixture
def silent() -> Iterator[str]:
    """A server that accepts connections (the kernel's backlog) and never answers."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"


def blocked(work: Callable[[], object]) -> tuple[threading.Thread, list[BaseException]]:
    """Run ``work`` in a thread, as a source runs; keep what it raises."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as e:  # Cancelled is a KeyboardInterrupt
            raised.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    time.sleep(0.5)  # it is blocked by now
    assert thread.is_alive()
    return thread, raised


def test_a_read_from_a_silent_server_ends_at_cancel(silent: str, tmp_path: Path) -> None:
    store = Store(tmp_path / ".prov").init()
    fetcher = Fetcher(Policy(timeout=120, retries=0), store, redact.Scrubber())
    thread, raised = blocked(lambda: fetcher.fetch("GET", f"{silent}/x"))
    started = time.monotonic()
    cancel.cancel()
    thread.join(SOON)
    assert not thread.is_alive(), "the read went on after the cancellation"
    assert time.monotonic() - started < SOON
    assert raised and isinstance(raised[0], cancel.Cancelled)  # not recorded as a failure
    fetcher.close()


def test_a_git_child_is_killed_at_cancel(silent: str, tmp_path: Path) -> None:
    git(["init", "--quiet", "--bare", str(tmp_path / "r")])
    thread, raised = blocked(lambda: git(["fetch", f"{silent}/repo.git"], cwd=tmp_path / "r"))
    cancel.cancel()
    thread.join(SOON)
    assert not thread.is_alive(), "git went on after the cancellation"
    assert raised and isinstance(raised[0], cancel.Cancelled)


def test_a_retry_wait_ends_at_cancel() -> None:
    thread, raised = blocked(lambda: cancel.sleep(60))
    cancel.cancel()
    thread.join(SOON)
    assert not thread.is_alive() and isinstance(raised[0], cancel.Cancelled)


def test_a_signal_inside_a_shielded_section_acts_when_it_ends() -> None:
    finished = []
    with pytest.raises(KeyboardInterrupt), cancel.handling_signals():
        with cancel.shielded():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.1)  # the handler has run: it must not have raised in here
            finished.append("published")
        finished.append("after")  # never reached: the deferred interrupt is raised first
    assert finished == ["published"]
    assert cancel.cancelled()


def test_signal_handlers_are_restored() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with cancel.handling_signals():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before
