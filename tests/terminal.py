"""A real ``prov`` process on a pseudo-terminal, for what only a terminal shows.

Ctrl-C reaches a program as SIGINT only through its controlling terminal, and a passphrase
prompt reads ``/dev/tty``: neither can be tested with pipes. ``pty.fork`` gives the child a new
session whose controlling terminal is the pty, as a shell in a terminal window would.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from collections.abc import Mapping
from pathlib import Path


class Terminal:
    """``prov ARGS`` on a pty: read what it shows, type into it, press Ctrl-C."""

    def __init__(self, args: list[str], cwd: Path, env: Mapping[str, str] | None = None) -> None:
        argv = [sys.executable, "-m", "provenance", *args]
        environment = dict(os.environ if env is None else env)
        pid, fd = pty.fork()
        if pid == 0:  # the child: nothing here may return into the test run
            try:
                os.chdir(cwd)
                os.execve(sys.executable, argv, environment)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.output = b""
        self.status: int | None = None

    def read(self, timeout: float) -> bool:
        """Read what arrives within ``timeout`` seconds; False at end of output."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        self.output += data
        return bool(data)

    def expect(self, text: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.output:
            left = deadline - time.monotonic()
            if left <= 0 or not self.read(left):
                raise AssertionError(f"{text!r} did not appear; the terminal shows:\n{self.text}")

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def ctrl_c(self) -> None:
        self.type("\x03")

    def signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def wait(self, timeout: float = 20.0) -> int:
        """The exit code (as a shell reports it), reading everything shown until then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                while self.read(0.05):
                    pass
                self.status = os.waitstatus_to_exitcode(status)
                os.close(self.fd)
                return self.status
            self.read(0.05)
        self.kill()
        raise AssertionError(f"prov did not end within {timeout}s; it shows:\n{self.text}")

    def kill(self) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            os.close(self.fd)
            self.status = -9

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace").replace("\r\n", "\n")
