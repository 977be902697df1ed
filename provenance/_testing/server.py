"""A real HTTP(S) server on 127.0.0.1 that speaks the wire formats prov's collectors read.

It serves, from the ``Fixtures`` it is given (see ``provenance._testing.fixtures``):

* W&B: ``POST /graphql`` (the ``Run`` query; ``config``, ``summaryMetrics`` and
  ``systemMetrics`` as JSON strings; ``Authorization: Basic base64("api:" + key)`` checked);
* Hugging Face: ``/api/{models,datasets,spaces}/{repo}/revision/{rev}``,
  ``/api/.../tree/{rev}[/{path}]`` (paged with ``Link: <...>; rel="next"``),
  ``/[datasets/|spaces/]{repo}/resolve/{rev}/{path}`` with ``X-Repo-Commit``, ``ETag`` and, for
  LFS files, a 302 to a signed CDN URL with ``X-Linked-Etag`` / ``X-Linked-Size``;
* plain routes with their misbehaviours: S3-style 403 XML, redirects, a 503 that recovers after
  N tries or never, an answer slower than the client's timeout, a reset mid-body, an oversized
  body, a chunked body, a connection closed before the body ends, a trickle of one byte every
  few seconds (in the headers or the body) that never ends; and ``/echo``, which sends back the
  request (as servers that echo credentials do).

Use it as a context manager; ``port=0`` picks a free port; ``tls=True`` serves https with a
certificate made at run time (``ca_file`` is its CA). Every request is kept in ``requests``.

    python -m provenance._testing.server --fixtures DIR [--tls] [--port N]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import itertools
import json
import signal
import socket
import ssl
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from provenance._testing import hf_routes, wandb_routes
from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.tls import ServerCertificate, make_certificate

_BLOCK = bytes(range(256)) * 256  # 64 KiB of a fixed pattern for generated bodies


def generated_body(size: int) -> Iterator[bytes]:
    """The bytes a ``Route(size=...)`` serves: a fixed 64 KiB pattern, repeated and cut."""
    remaining = size
    while remaining > 0:
        chunk = _BLOCK[: min(remaining, len(_BLOCK))]
        remaining -= len(chunk)
        yield chunk


@dataclass
class Request:
    """A request as the server received it (kept in ``LocalServer.requests``)."""

    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes
    path: str = ""
    query: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parts = urlsplit(self.target)
        self.path = parts.path
        self.query = parse_qs(parts.query, keep_blank_values=True)

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 30  # idle keep-alive connections end on their own

    def log_message(self, format: str, *args: Any) -> None:
        pass  # requests are kept in LocalServer.requests, not printed

    def do_GET(self) -> None:
        self._dispatch()

    do_HEAD = do_POST = do_PUT = do_DELETE = do_GET

    @property
    def base_url(self) -> str:
        scheme = "https" if self.server.tls else "http"
        return f"{scheme}://{self.headers.get('Host') or '127.0.0.1'}"

    def _dispatch(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        request = Request(self.command, self.path, list(self.headers.items()), body)
        self.server.owner.requests.append(request)
        fixtures = self.server.owner.fixtures
        path = request.path
        if path == "/graphql" and request.method == "POST":
            wandb_routes.graphql(self, request, fixtures)
        elif path.startswith("/api/"):
            hf_routes.api(self, request, fixtures)
        elif path.startswith("/hf-cdn/"):
            hf_routes.cdn(self, request, fixtures)
        elif "/resolve/" in path and hf_routes.resolve(self, request, fixtures):
            pass
        elif path == "/echo":
            self.echo(request)
        else:
            route = next(
                (r for r in fixtures.routes if r.path == path and request.method in r.methods),
                None,
            )
            if route is None:
                self.send_json(404, {"error": f"no route for {request.method} {path}"})
            else:
                self.serve_route(route, request)

    # -- answering ------------------------------------------------------------------------------

    def send(
        self,
        status: int,
        headers: list[tuple[str, str]] | None = None,
        body: bytes = b"",
        reason: str | None = None,
    ) -> None:
        self.send_response(status, reason)
        names = {k.lower() for k, _ in headers or []}
        for key, value in headers or []:
            self.send_header(key, value)
        if "content-length" not in names:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def send_json(
        self, status: int, document: Any, headers: list[tuple[str, str]] | None = None
    ) -> None:
        body = json.dumps(document).encode()
        self.send(
            status, [("Content-Type", "application/json; charset=utf-8"), *(headers or [])], body
        )

    def echo(self, request: Request) -> None:
        self.send_json(
            200,
            {
                "method": request.method,
                "target": request.target,
                "headers": [list(pair) for pair in request.headers],
                "body": request.body.decode("utf-8", "replace"),
            },
        )

    def wait(self, seconds: float) -> None:
        """Sleep, but stop early when the server stops (so shutting down never hangs)."""
        self.server.owner.stopping.wait(seconds)

    def reset(self) -> None:
        """Abort the connection with a TCP RST (SO_LINGER 0), as a crashing server would."""
        with contextlib.suppress(OSError):
            self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        with contextlib.suppress(OSError):
            self.connection.close()
        self.close_connection = True

    def serve_route(self, route: Route, request: Request) -> None:
        if route.fail_times:
            with self.server.owner.lock:
                served = self.server.owner.counters.get(route.path, 0)
                self.server.owner.counters[route.path] = served + 1
            if route.fail_times < 0 or served < route.fail_times:
                body = b"<html><body><h1>503 Service Unavailable</h1></body></html>\n"
                self.send(
                    route.fail_status, [("Content-Type", "text/html"), *route.fail_headers], body
                )
                return
        if route.delay:
            self.wait(route.delay)
            if self.server.owner.stopping.is_set():
                self.reset()
                return
        headers = list(route.headers)
        if route.client_address_header:
            headers.append((route.client_address_header, str(self.client_address[0])))
        if route.trickle:
            self.trickle(route, headers)
            return
        if route.chunked or route.close_after is not None:
            self.send_chunked_or_cut(route, headers)
            return
        if route.redirect is not None:
            self.send(route.status, [("Location", route.redirect), *headers], route.body)
            return
        if route.size is not None and route.reset_after is None:
            self.send_response(route.status, route.reason)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(route.size))
            self.end_headers()
            if self.command == "HEAD":
                return
            with contextlib.suppress(OSError):  # the client may stop reading at its cap
                for chunk in generated_body(route.size):
                    self.wfile.write(chunk)
            return
        if route.reset_after is not None:
            size = len(route.body) if route.size is None else route.size
            self.send_response(route.status, route.reason)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            if self.command != "HEAD":
                sent = b"".join(generated_body(route.reset_after)) if route.size else route.body
                self.wfile.write(sent[: route.reset_after])
                self.wfile.flush()
                time.sleep(0.05)  # let the bytes leave before the RST overtakes them
            self.reset()
            return
        self.send(route.status, headers, route.body, route.reason)

    def trickle(self, route: Route, headers: list[tuple[str, str]]) -> None:
        """One byte every ``route.trickle`` seconds until the client leaves or the server stops."""
        self.close_connection = True
        self.send_response_only(route.status, route.reason)
        if route.trickle_from == "headers":
            endless: Iterator[bytes] = (b"X-Trickle-%d: slow\r\n" % n for n in itertools.count())
            self.flush_headers()
        else:
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(route.size or 1 << 40))
            self.end_headers()
            endless = itertools.repeat(_BLOCK)
        with contextlib.suppress(OSError):
            for block in endless:
                for byte in block:
                    self.wait(route.trickle)
                    if self.server.owner.stopping.is_set():
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()

    def send_chunked_or_cut(self, route: Route, headers: list[tuple[str, str]]) -> None:
        """The body chunked and/or cut short by a clean close after ``route.close_after`` bytes."""
        body = b"".join(generated_body(route.size)) if route.size is not None else route.body
        cut = body if route.close_after is None else body[: route.close_after]
        self.send_response(route.status, route.reason)
        for key, value in headers:
            self.send_header(key, value)
        if route.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(body)))
        if route.close_after is not None:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command == "HEAD":
            return
        with contextlib.suppress(OSError):
            if not route.chunked:
                self.wfile.write(cut)
            else:
                for start in range(0, len(cut), 4096):
                    piece = cut[start : start + 4096]
                    self.wfile.write(b"%x\r\n%b\r\n" % (len(piece), piece))
                if route.close_after is None:
                    self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            if route.close_after is not None:
                self.connection.shutdown(socket.SHUT_WR)  # a FIN: the body just stops


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: LocalServer, address: tuple[str, int]) -> None:
        self.owner = owner
        self.tls: ssl.SSLContext | None = None
        super().__init__(address, Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        # The TLS handshake runs here, in the connection's own thread, so a client that
        # connects and says nothing cannot block the accept loop.
        connection = request
        if self.tls is not None:
            request.settimeout(10)
            try:
                connection = self.tls.wrap_socket(request, server_side=True)
            except (OSError, ssl.SSLError):
                return
        self.owner.track(connection, True)
        try:
            Handler(connection, client_address, self)
        finally:
            self.owner.track(connection, False)
            with contextlib.suppress(OSError):
                connection.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        self.owner.errors.append(sys.exc_info()[1])


class LocalServer:
    """The server: ``with LocalServer(fixtures) as server: server.url ...``."""

    def __init__(
        self,
        fixtures: Fixtures | None = None,
        *,
        tls: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.fixtures = fixtures or Fixtures()
        self.requests: list[Request] = []
        self.errors: list[BaseException | None] = []
        self.counters: dict[str, int] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.certificate: ServerCertificate | None = None
        self._tls = tls
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._temp: tempfile.TemporaryDirectory[str] | None = None
        self._connections: set[Any] = set()

    # -- life cycle ---------------------------------------------------------------------------

    def start(self) -> LocalServer:
        server = _Server(self, self._address)
        if self._tls:
            self._temp = tempfile.TemporaryDirectory(prefix="prov-tls-")
            self.certificate = make_certificate(Path(self._temp.name))
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(self.certificate.cert_file, self.certificate.key_file)
            server.tls = context
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            with self.lock:
                connections = list(self._connections)
            for connection in connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._temp is not None:
            self._temp.cleanup()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def track(self, connection: Any, alive: bool) -> None:
        with self.lock:
            if alive:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    # -- what tests need ------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "start the server first"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base URL, without a trailing slash."""
        scheme = "https" if self._tls else "http"
        host = "localhost" if self._tls else "127.0.0.1"
        return f"{scheme}://{host}:{self.port}"

    @property
    def ca_file(self) -> Path | None:
        return self.certificate.ca_file if self.certificate else None

    @property
    def cert_sha256(self) -> str | None:
        return self.certificate.cert_sha256 if self.certificate else None

    def requests_to(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]


def wandb_auth(key: str) -> str:
    """The Authorization header value the W&B client sends for an API key."""
    return "Basic " + base64.b64encode(f"api:{key}".encode()).decode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m provenance._testing.server",
        description="Serve W&B, Hugging Face and HTTP fixtures on 127.0.0.1 until interrupted.",
    )
    parser.add_argument(
        "--fixtures",
        type=Path,
        action="append",
        required=True,
        help="fixture directory (repeat to serve several as one)",
    )
    parser.add_argument("--port", type=int, default=0, help="http port (0: any free port)")
    parser.add_argument("--tls", action="store_true", help="also serve https on another port")
    args = parser.parse_args(argv)
    fixtures = Fixtures.from_dirs(*args.fixtures)
    servers = [LocalServer(fixtures, port=args.port).start()]
    if args.tls:
        servers.append(LocalServer(fixtures, tls=True).start())
    info: dict[str, Any] = {"http": servers[0].url}
    if args.tls:
        info.update(
            https=servers[1].url,
            ca_file=str(servers[1].ca_file),
            cert_sha256=servers[1].cert_sha256,
        )
    print(json.dumps(info), flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with contextlib.suppress(KeyboardInterrupt):
        done.wait()
    for server in servers:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
