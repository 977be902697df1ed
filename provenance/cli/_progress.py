"""What a person at a terminal sees while a command works: one status line on stderr.

Lines that say what finished are printed as they come (unless ``-q``). On a terminal, a status
line under them names each task running longer than ``AFTER`` seconds with its elapsed time and
bytes, redrawn in place; it is never written when stderr is not a terminal (logs and pipes get
only whole lines) or with ``-q``.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from typing import TextIO

AFTER = 2.0
"""Seconds before a task shows: anything quicker needs no reassurance."""
TICK = 0.25


class Display:
    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.live = not quiet and _is_terminal(self.stream)
        self._lock = threading.Lock()
        self._shown = False
        self._text = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def line(self, text: str) -> None:
        """A line that stays (what finished, a retry): above the status line."""
        if self.quiet:
            return
        with self._lock:
            self._clear()
            self.stream.write(text + "\n")
            self.stream.flush()

    def start(self) -> None:
        if self.live and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="prov-progress", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
            self._thread = None
        with self._lock:
            self._clear()

    def _run(self) -> None:
        from provenance._internal import progress

        while not self._stop.wait(TICK):
            now = time.monotonic()
            shown = [t.describe(now) for t in progress.active() if now - t.started >= AFTER]
            with self._lock:
                if self._stop.is_set():
                    return
                if not shown:
                    self._clear()
                    continue
                width = shutil.get_terminal_size((100, 20)).columns - 1
                text = ("  still running: " + "; ".join(shown))[:width]
                if text != self._text or not self._shown:
                    self.stream.write("\r\x1b[K" + text)
                    self.stream.flush()
                    self._shown, self._text = True, text

    def _clear(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False
