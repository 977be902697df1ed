"""A deadline for a whole HTTP exchange, which httpx's own timeouts do not give.

httpx bounds each connect, read and write, never an exchange: a server that sends one byte of
its headers or body every few seconds trips no read timeout and holds a capture for ever. A
``Watchdog`` is armed for each attempt; when the deadline passes it shuts down the sockets of its
client's connections, the blocked read returns at once, and the caller reports a timeout (it
checks ``expired`` when the request fails).

Sockets are learnt from httpcore's ``trace`` request extension as connections open (pass
``extensions`` with every request), and from each response's network stream (a connection an
injected client opened earlier). A TLS handshake in progress is not covered: its socket is known
only once the handshake is done; each of its reads is bounded by the connect timeout.

A cancellation (Ctrl-C, SIGTERM: ``cancel``) shuts the sockets down the same way, at once, and
sets ``cancelled``; the caller then raises ``cancel.Cancelled`` instead of reporting a failure.

No httpx import here: the OCI client imports httpx lazily and uses this module too.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import weakref
from typing import Any

from provenance._internal import cancel


class Watchdog:
    """Shuts down the watched sockets once the armed deadline passes. ``close`` when done."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.expired = False
        self.cancelled = False
        self.extensions: dict[str, Any] = {"trace": self._trace}
        """Request extensions that let the watchdog see each new connection."""
        # Weakly: a watchdog nobody closed must not be kept alive by the cancel hooks.
        abort = weakref.WeakMethod(self._abort)

        def hook() -> None:
            method = abort()
            if method is not None:
                method()

        self._unhook = cancel.register(hook)

    def watch_stream(self, stream: Any) -> None:
        """An httpcore network stream (``response.extensions["network_stream"]``)."""
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with self._cond:
                self._sockets.add(sock)
                if self.cancelled:  # opened while the cancellation ran
                    _shut(sock)

    def arm(self, seconds: float) -> None:
        with self._cond:
            self.expired = False
            self._deadline = time.monotonic() + seconds
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="prov-deadline", daemon=True)
                self._thread.start()
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None

    def close(self) -> None:
        self._unhook()
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _abort(self) -> None:
        with self._cond:
            self.cancelled = True
            for sock in list(self._sockets):
                _shut(sock)

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        if event.endswith((".connect_tcp.complete", ".start_tls.complete")):
            self.watch_stream(info.get("return_value"))

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                if self._deadline is None:
                    self._cond.wait()
                    continue
                remaining = self._deadline - time.monotonic()
                if remaining > 0:
                    self._cond.wait(remaining)
                    continue
                self._deadline = None
                self.expired = True
                for sock in list(self._sockets):
                    _shut(sock)


def _shut(sock: socket.socket) -> None:
    # The plain socket's shutdown, also for an SSLSocket (whose own would drop its SSL object
    # under the reading thread). A closed socket has fileno -1 and raises: no other file's
    # descriptor is ever touched.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
