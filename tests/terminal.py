"""A real ``prov`` process on a pseudo-terminal, for what only a terminal shows.

Ctrl-C reaches a program as SIGINT only through its controlling terminal, and a passphrase
prompt reads ``/dev/tty``: neither can be tested with pipes. The child starts a new session and
opens the pty's terminal side, which makes it its controlling terminal (and its process group
the foreground one), as a shell in a terminal window would. No ``fork()`` of the test process:
it runs server threads, and only ``exec`` is safe after forking a threaded process.
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

# Runs in the child's new session: open the terminal (it becomes the controlling one), make it
# stdin, stdout and stderr, then become prov.
_ATTACH = (
    "import os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
    "[os.dup2(fd, n) for n in (0, 1, 2)]; os.close(fd); os.execv(sys.argv[2], sys.argv[2:])"
)


class Terminal:
    """``prov ARGS`` on a pty: read what it shows, type into it, press Ctrl-C."""

    def __init__(self, args: list[str], cwd: Path, env: Mapping[str, str] | None = None) -> None:
        try:
            master, slave = pty.openpty()
        except OSError as e:  # a container without /dev/pts
            pytest.skip(
                f"needs a pseudo-terminal ({e}): mount one (mount -t devpts devpts /dev/pts)"
            )
        terminal = os.ttyname(slave)
        # Held open here until prov ends, so that reading never fails before the child opens it.
        self._slave = slave
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ATTACH, terminal, sys.executable, "-m", "provenance", *args],
            cwd=cwd,
            env=dict(os.environ if env is None else env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.pid, self.fd = self.process.pid, master
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
            code = self.process.poll()
            if code is not None:
                while self.read(0.05) and self._pending():
                    pass
                self._close()
                self.status = code if code >= 0 else 128 - code
                return self.status
            self.read(0.05)
        self.kill()
        raise AssertionError(f"prov did not end within {timeout}s; it shows:\n{self.text}")

    def kill(self) -> None:
        if self.status is None:
            self.process.kill()
            self.process.wait()
            self._close()
            self.status = -9

    def _pending(self) -> bool:
        ready, _, _ = select.select([self.fd], [], [], 0)
        return bool(ready)

    def _close(self) -> None:
        for fd in (self.fd, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace").replace("\r\n", "\n")
