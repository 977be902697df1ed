"""The HTTP client every network collector uses, and the one place that talks httpx.

A ``Fetcher`` serves one capture. It follows redirects itself so that every hop is recorded,
retries transient failures (connect errors; 429, 502, 503, 504, honouring ``Retry-After``) with
exponential backoff and records every attempt, streams bodies into the store through a secret
scrubber with a size cap, ends each attempt at its deadline whatever it is waiting for (see
``deadline.Watchdog``), and notes the server's address and, over TLS, the protocol version, the
peer certificate's sha256 fingerprint and the verified chain (``chain_info``).

Remote failures are returned, not raised: an ``Exchange`` carries what was observed up to the
failure and a ``CaptureError`` typed as docs/captures.md lists. Everything recorded has been
through ``redact`` (names) and the ``Scrubber`` (values) first.

httpx is imported by this module only, and this module only by the network collectors, so
``prov --help`` never loads it.
"""

from __future__ import annotations

import email.utils
import hashlib
import ipaddress
import logging
import os
import random
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from provenance import __version__
from provenance._internal import cancel, progress, redact
from provenance._internal.deadline import Watchdog
from provenance.model import CaptureError, utc_now
from provenance.store.objects import Store

RETRY_STATUSES = frozenset({429, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_DECODED = 256 << 20
USER_AGENT = f"prov/{__version__}"

# httpx logs every request URL at INFO, and `prov -v` turns on DEBUG: a signed URL's query string
# would reach the log. Its loggers stay at WARNING whatever the root level is.
for _name in ("httpx", "httpcore"):
    logging.getLogger(_name).setLevel(logging.WARNING)


@dataclass(frozen=True)
class Policy:
    """How one capture talks to servers: limits, retries, redirects."""

    timeout: float = 30.0
    """Seconds for connect and for each read, and for one attempt from request to last byte."""
    retries: int = 3
    backoff: float = 0.5
    max_wait: float = 30.0
    """Longest wait between attempts; a longer ``Retry-After`` ends the retries."""
    follow_redirects: bool = True
    max_redirects: int = 10
    allow_private: bool = False
    """Follow a redirect to another host whose address is loopback, private or link-local.

    The URL a capture was configured with is always used as configured."""
    max_body_bytes: int = 16 << 20
    max_redirect_body: int = 64 << 10
    ca_bundle: Path | None = None


@dataclass(frozen=True)
class Body:
    """A body kept in the store: its blake3 address, how much arrived and whether all of it."""

    digest: str
    size: int
    truncated: bool
    complete: bool
    scrubbed: int

    def to_json(self, media_type: str | None) -> dict[str, Any]:
        return {
            "size": self.size,
            "truncated": self.truncated,
            "complete": self.complete,
            "scrubbed": self.scrubbed,
            "media_type": media_type,
        }


@dataclass(frozen=True)
class Hop:
    """One response: a redirect on the way, or the final answer. Everything here is redacted."""

    method: str
    url: str
    status: int
    reason: str
    http_version: str
    headers: list[tuple[str, str]]
    request_headers: list[tuple[str, str]]
    server_ip: str | None
    tls: dict[str, Any] | None
    body: Body | None = None
    location: str | None = None

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in self.headers:
            if key.lower() == lowered:
                return value
        return None

    def header_values(self, name: str) -> list[str]:
        lowered = name.lower()
        return [value for key, value in self.headers if key.lower() == lowered]

    @property
    def media_type(self) -> str | None:
        value = self.header("content-type")
        return value.split(";")[0].strip().lower() or None if value else None

    def redirect_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "url": self.url,
            "status": self.status,
            "reason": self.reason,
            "location": self.location,
            "http_version": self.http_version,
            "headers": [list(pair) for pair in self.headers],
            "request_headers": [list(pair) for pair in self.request_headers],
            "server_ip": self.server_ip,
            "tls": self.tls,
        }


@dataclass
class Exchange:
    """What one request produced: redirect hops, the final response if any, and how it went."""

    method: str
    url: str
    hops: list[Hop] = field(default_factory=list)
    response: Hop | None = None
    error: CaptureError | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    elapsed_ms: float = 0.0
    exhausted: bool = False
    """The last answer had a transient status (429, 5xx) and no retry was left or allowed."""

    @property
    def final_url(self) -> str | None:
        return self.response.url if self.response else (self.hops[-1].url if self.hops else None)

    @property
    def tls_bound(self) -> bool:
        """Every response, redirects included, came over verified TLS."""
        answers = [*self.hops, *([self.response] if self.response else [])]
        return bool(answers) and all(hop.tls is not None for hop in answers)


class _Failure(Exception):
    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retryable: bool = False,
        hops: list[Hop] | None = None,
        partial: Hop | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.error = CaptureError(type=kind, message=message, detail=detail or {})
        self.retryable = retryable
        self.hops = hops or []
        self.partial = partial


@dataclass
class _Retry:
    status: int
    reason: str
    retry_after: str | None
    wait: float


def make_client(policy: Policy, env: Mapping[str, str]) -> httpx.Client:
    """An httpx client configured from the policy and the collect context's environment.

    ``trust_env`` is off: the context's environment is the one that counts (tests and the
    library pass their own), so CA bundles and proxies are read from it here.
    """
    context = ssl_context(policy.ca_bundle, env)
    timeout = httpx.Timeout(policy.timeout)
    return httpx.Client(
        verify=context,
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
        mounts=_proxy_mounts(env, context),
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
    )


def ssl_context(ca_bundle: Path | None, env: Mapping[str, str]) -> ssl.SSLContext:
    """The TLS context for a CA bundle (the source's, ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``, else
    certifi's).

    Parsing a bundle costs ~25 ms of CPU (certifi's); made for every capture, that was 5 s of a
    200-source snapshot. So contexts are shared by every client of the process (an ``SSLContext``
    is safe to use from several threads), keyed by the bundle's bytes: an edited file is parsed
    again, whatever its timestamps say.
    """
    if ca_bundle is not None:
        kind, where = "cafile", str(ca_bundle)
    elif env.get("SSL_CERT_FILE"):
        kind, where = "cafile", env["SSL_CERT_FILE"]
    elif env.get("SSL_CERT_DIR"):
        kind, where = "capath", env["SSL_CERT_DIR"]  # read lazily by OpenSSL, file by file
    else:
        import certifi

        kind, where = "certifi", certifi.where()
    try:
        identity = os.stat(where).st_mtime_ns if kind == "capath" else _file_digest(where)
    except OSError:  # ssl reports the missing file; nothing is kept
        identity = None
    key = (kind, where, identity)
    with _CONTEXTS_LOCK:
        context = _CONTEXTS.get(key) if identity is not None else None
        if context is None:
            if kind == "cafile":
                context = ssl.create_default_context(cafile=where)
            elif kind == "capath":
                context = ssl.create_default_context(capath=where)
            else:
                context = httpx.create_ssl_context(trust_env=False)  # certifi's, as httpx ships it
            if identity is not None:
                _CONTEXTS[key] = context
    return context


def _file_digest(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


_CONTEXTS: dict[tuple[str, str, object], ssl.SSLContext] = {}
_CONTEXTS_LOCK = threading.Lock()


def _proxy_mounts(
    env: Mapping[str, str], context: ssl.SSLContext
) -> dict[str, httpx.BaseTransport | None]:
    def get(name: str) -> str | None:
        return env.get(name.upper()) or env.get(name.lower()) or None

    mounts: dict[str, httpx.BaseTransport | None] = {}
    for scheme in ("http", "https"):
        proxy = get(f"{scheme}_proxy") or get("all_proxy")
        if proxy:
            mounts[f"{scheme}://"] = httpx.HTTPTransport(verify=context, proxy=proxy)
    if mounts:
        for host in (get("no_proxy") or "").split(","):
            host = host.strip().lstrip(".")
            if host == "*":
                return {}
            if host:
                mounts[f"all://{host}"] = None
                mounts[f"all://*.{host}"] = None
    return mounts


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return (url.scheme, url.host, url.port)


def _addresses(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Every address ``host`` resolves to (an address literal is its own); [] when none."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except OSError:
        return []  # the connect attempt will report the failure
    return [ipaddress.ip_address(str(info[4][0]).partition("%")[0]) for info in infos]


def _proxied(env: Mapping[str, str]) -> bool:
    names = ("http_proxy", "https_proxy", "all_proxy")
    return any(env.get(n) or env.get(n.upper()) for n in names)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait per RFC 9110 section 10.2.3 (delay-seconds or an HTTP-date)."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def cert_info(der: bytes) -> dict[str, Any]:
    """The peer certificate's fingerprint, with its subject, issuer and validity for people."""
    info: dict[str, Any] = {"peer_cert_sha256": hashlib.sha256(der).hexdigest()}
    from cryptography import x509

    try:
        cert = x509.load_der_x509_certificate(der)
    except ValueError:
        return info
    info["subject"] = cert.subject.rfc4514_string()
    info["issuer"] = cert.issuer.rfc4514_string()
    info["not_after"] = cert.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%SZ")
    return info


def chain_info(ssl_object: Any) -> dict[str, Any]:
    """The chain the client verified, leaf first: PEM, and each certificate's sha256 and names.

    This is what ``tls-bound`` is checked against later (``provenance.verify.tls``): the leaf
    must be the peer certificate, each certificate signed by the next, all valid at capture time.
    """
    getter = getattr(ssl_object, "get_verified_chain", None)  # CPython's _SSLSocket, 3.10+
    try:
        chain = getter() if getter is not None else None
    except (ssl.SSLError, ValueError):
        chain = None
    if not chain:
        return {}
    from cryptography import x509

    pems = [str(cert.public_bytes()) for cert in chain]  # PEM, the default encoding
    certificates = []
    for pem in pems:
        der = ssl.PEM_cert_to_DER_cert(pem)
        entry: dict[str, Any] = {"sha256": hashlib.sha256(der).hexdigest()}
        try:
            cert = x509.load_der_x509_certificate(der)
        except ValueError:
            certificates.append(entry)
            continue
        entry.update(
            subject=cert.subject.rfc4514_string(),
            issuer=cert.issuer.rfc4514_string(),
            not_before=cert.not_valid_before_utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
            not_after=cert.not_valid_after_utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        certificates.append(entry)
    return {"chain": certificates, "chain_pem": "".join(pems)}


class Fetcher:
    """Makes the requests of one capture. Use as a context manager; inject ``client`` in tests."""

    def __init__(
        self,
        policy: Policy,
        store: Store,
        scrubber: redact.Scrubber,
        *,
        env: Mapping[str, str] | None = None,
        client: httpx.Client | None = None,
        notify: Callable[[str], None] | None = None,
        label: str = "",
    ) -> None:
        self.policy = policy
        self.store = store
        self.scrubber = scrubber
        self._own_client = client is None
        self._client = client if client is not None else make_client(policy, env or {})
        self._secret: frozenset[str] = frozenset()
        # Through a proxy, the proxy connects: the address checked here is all prov can check.
        self._pin = not _proxied(env or {})
        self._notify = notify
        self._label = label
        self._watchdog = Watchdog()

    def close(self) -> None:
        self._watchdog.close()
        if self._own_client:
            self._client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the public operation ----------------------------------------------------------------

    def fetch(
        self,
        method: str,
        url: str,
        *,
        headers: Sequence[tuple[str, str]] = (),
        content: bytes | None = None,
        body_limit: int | None = None,
        credentials: Collection[str] = (),
    ) -> Exchange:
        """Request ``url`` with retries; never raises for a remote failure.

        Headers are credentials when ``redact.is_credential`` says so by name, or when named in
        ``credentials`` (say, because their values came from the environment): their values
        are scrubbed from everything kept, and they never follow a redirect to another origin.
        """
        self.scrubber.add_url(url)
        self._secret = frozenset(name.lower() for name in credentials)
        for name, value in headers:
            if self._is_credential(name):
                self.scrubber.add_credential_header(value)
        limit = self.policy.max_body_bytes if body_limit is None else body_limit
        exchange = Exchange(method=method, url=self.redact_url(url))
        began = time.monotonic()
        total = self.policy.retries + 1
        for number in range(1, total + 1):
            attempt: dict[str, Any] = {
                "attempt": number,
                "request": f"{method} {exchange.url}",
                "started": utc_now(),
            }
            started = time.monotonic()
            cancel.check()
            self._watchdog.arm(self.policy.timeout)
            try:
                outcome = self._attempt(
                    method, url, list(headers), content, limit, number, number < total
                )
            except _Failure as failure:
                self._watchdog.disarm()
                if self._watchdog.cancelled:  # Ctrl-C / SIGTERM shut the socket: not evidence
                    raise cancel.Cancelled from failure
                attempt["elapsed_ms"] = _ms(started)
                attempt["outcome"] = failure.error.type
                attempt["message"] = failure.error.message
                if failure.retryable and number < total:
                    wait = self._backoff(number)
                    attempt["wait_s"] = round(wait, 3)
                    exchange.attempts.append(attempt)
                    self._say(f"{failure.error.message}; retry {number}/{total - 1} in {wait:.1f}s")
                    cancel.sleep(wait)
                    continue
                exchange.attempts.append(attempt)
                exchange.hops = failure.hops
                exchange.response = failure.partial
                detail = dict(failure.error.detail)
                detail["attempts"] = number
                exchange.error = failure.error.model_copy(update={"detail": detail})
                break
            self._watchdog.disarm()
            attempt["elapsed_ms"] = _ms(started)
            attempt["outcome"] = "response"
            if isinstance(outcome, _Retry):
                attempt.update(status=outcome.status, retry_after=outcome.retry_after)
                attempt["wait_s"] = round(outcome.wait, 3)
                exchange.attempts.append(attempt)
                self._say(
                    f"HTTP {outcome.status} {outcome.reason} from {exchange.url}; "
                    f"retry {number}/{total - 1} in {outcome.wait:.1f}s"
                )
                cancel.sleep(outcome.wait)
                continue
            hops, response = outcome
            attempt["status"] = response.status
            if response.status in RETRY_STATUSES:
                attempt["retry_after"] = response.header("retry-after")
                exchange.exhausted = True
            exchange.attempts.append(attempt)
            exchange.hops, exchange.response = hops, response
            break
        exchange.elapsed_ms = _ms(began)
        return exchange

    def read(self, body: Body) -> bytes:
        """The stored (scrubbed) bytes of a body."""
        from provenance.digest import Digest

        return self.store.read(Digest.parse(body.digest))

    def content(self, hop: Hop, limit: int = MAX_DECODED) -> bytes:
        """A body as the server meant it, for parsing: the stored bytes, content-decoded.

        prov asks for ``identity``, but a server may compress anyway; the store keeps the wire
        bytes, and only what is parsed from them is decoded (at most ``limit`` bytes, so a
        small compressed body cannot expand without bound).
        """
        if hop.body is None:
            return b""
        raw = self.read(hop.body)
        encoding = (hop.header("content-encoding") or "identity").strip().lower()
        if encoding in ("", "identity"):
            return raw
        if encoding not in ("gzip", "x-gzip", "deflate"):
            raise ValueError(f"cannot decode a {encoding!r} body")
        # wbits 47 reads gzip and zlib; a raw deflate stream (some servers) needs -15.
        for wbits in (47, -15):
            decoder = zlib.decompressobj(wbits)
            try:
                out = decoder.decompress(raw, limit)
            except zlib.error:
                continue
            if decoder.unconsumed_tail:
                raise ValueError(f"the decoded body is larger than {limit} bytes")
            return out
        raise ValueError(f"the body is not valid {encoding}")

    def redact_url(self, url: str) -> str:
        return self.scrubber.text(redact.url_minimal(url))

    # -- one attempt ---------------------------------------------------------------------------

    def _attempt(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        content: bytes | None,
        limit: int,
        number: int,
        can_retry: bool,
    ) -> tuple[list[Hop], Hop] | _Retry:
        deadline = time.monotonic() + self.policy.timeout
        hops: list[Hop] = []
        current = httpx.URL(url)
        origin = _origin(current)
        while True:
            connect, pinned = self._connect_to(current, origin[1], hops)
            try:
                request = self._client.build_request(
                    method,
                    connect,
                    headers=[*headers, *pinned],
                    content=content,
                    extensions={**self._watchdog.extensions, **self._sni(current, connect)},
                )
                response = self._client.send(request, stream=True)
            except httpx.HTTPError as e:
                raise self._map(e, hops) from e
            try:
                hop = self._describe(response, current)
                location = response.headers.get("location")
                if (
                    response.status_code in REDIRECT_STATUSES
                    and location is not None
                    and self.policy.follow_redirects
                ):
                    target = current.join(location)
                    self.scrubber.add_url(str(target))
                    body = self._read(response, self.policy.max_redirect_body, deadline, hop, hops)
                    hop = _replace(hop, body=body, location=self.redact_url(str(target)))
                    hops.append(hop)
                    if target.scheme not in ("http", "https"):
                        raise _Failure(
                            "redirect-refused",
                            f"{hop.url} redirects to a {target.scheme}: URL",
                            hops=hops,
                        )
                    if len(hops) > self.policy.max_redirects:
                        raise _Failure(
                            "too-many-redirects",
                            f"more than {self.policy.max_redirects} redirects from "
                            f"{self.redact_url(url)}",
                            hops=hops,
                        )
                    if _origin(target) != origin:
                        # Credentials go to the origin they were configured for, never further
                        # (a CDN, another host, plain http on the same host: none gets them).
                        headers = [(k, v) for k, v in headers if not self._is_credential(k)]
                    if response.status_code == 303 or (
                        response.status_code in (301, 302) and method == "POST"
                    ):
                        method, content = ("HEAD" if method == "HEAD" else "GET"), None
                    current = target
                    continue
                if response.status_code in RETRY_STATUSES and can_retry:
                    wait = self._retry_wait(hop.header("retry-after"), number)
                    if wait is not None:
                        return _Retry(
                            response.status_code, hop.reason, hop.header("retry-after"), wait
                        )
                if method != "HEAD":
                    hop = _replace(hop, body=self._read(response, limit, deadline, hop, hops))
                return hops, hop
            finally:
                response.close()

    def _is_credential(self, name: str) -> bool:
        return redact.is_credential(name) or name.lower() in self._secret

    def _connect_to(
        self, url: httpx.URL, configured: str, hops: list[Hop]
    ) -> tuple[httpx.URL, list[tuple[str, str]]]:
        """Where to send a request for ``url``, and the Host header that goes with it.

        The configured host is used as configured. A redirect to another host is followed only
        when every address it resolves to is public (or ``allow_private``), and the request
        goes to the address that was checked, so that DNS cannot answer otherwise at connect
        time (a rebinding to 169.254.169.254, the cloud metadata endpoint). One exception: from
        a configured host on this machine (a local mirror, a test server), another name of this
        machine is no step inward.
        """
        if url.host == configured or self.policy.allow_private:
            return url, []
        port = url.port or (443 if url.scheme == "https" else 80)
        addresses = _addresses(url.host, port)
        home = _addresses(configured, port)
        local = bool(home) and all(a.is_loopback for a in home)
        private = next(
            (a for a in addresses if not a.is_global and not (local and a.is_loopback)), None
        )
        if private is not None:
            raise _Failure(
                "redirect-refused",
                f"{self.redact_url(str(url))} is another host than the one configured, at the "
                f"non-public address {private}, and allow_private is false",
                hops=hops,
                detail={"address": str(private)},
            )
        if not addresses or not self._pin or str(addresses[0]) == url.host:
            return url, []
        return url.copy_with(host=str(addresses[0])), [("Host", url.netloc.decode("ascii"))]

    @staticmethod
    def _sni(url: httpx.URL, connect: httpx.URL) -> dict[str, Any]:
        return {"sni_hostname": url.host} if connect.host != url.host else {}

    def _describe(self, response: httpx.Response, url: httpx.URL) -> Hop:
        stream = response.extensions.get("network_stream")
        server_ip: str | None = None
        tls: dict[str, Any] | None = None
        if stream is not None:
            self._watchdog.watch_stream(stream)
            address = stream.get_extra_info("server_addr")
            if address:
                server_ip = str(address[0])
            ssl_object = stream.get_extra_info("ssl_object")
            if ssl_object is not None:
                der = ssl_object.getpeercert(True)  # a low-level _SSLSocket: no keywords
                cipher = ssl_object.cipher()
                tls = {
                    "version": ssl_object.version(),
                    "cipher": cipher[0] if cipher else None,
                    "alpn": ssl_object.selected_alpn_protocol(),
                    **(cert_info(der) if der else {}),
                    **chain_info(ssl_object),
                }
        return Hop(
            method=response.request.method,
            url=self.redact_url(str(url)),
            status=response.status_code,
            reason=response.reason_phrase,
            http_version=response.http_version,
            headers=self._headers(response.headers.raw),
            request_headers=self._headers(response.request.headers.raw),
            server_ip=server_ip,
            tls=tls,
        )

    def _headers(self, raw: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
        pairs = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]
        out = []
        for name, value in redact.headers(pairs):
            if name.lower() in ("location", "content-location", "link"):
                value = _redact_urls_in(value)
            out.append((name, self.scrubber.text(value)))
        return out

    def _read(
        self,
        response: httpx.Response,
        limit: int,
        deadline: float,
        hop: Hop,
        hops: list[Hop],
    ) -> Body:
        """Stream the body into the store through the scrubber, up to ``limit`` bytes."""
        scrub = self.scrubber.stream()
        truncated = False
        received = 0
        with self.store.writer() as writer:
            try:
                for (
                    chunk
                ) in response.iter_raw():  # as it arrives: a chunk size would hold bytes back
                    room = limit - received
                    if len(chunk) > room:
                        writer.write(scrub.feed(chunk[:room]))
                        received = limit
                        truncated = True
                        break
                    received += len(chunk)
                    writer.write(scrub.feed(chunk))
                    progress.advance(len(chunk))
                    if time.monotonic() > deadline:
                        raise self._late_body(hop)
            except (httpx.HTTPError, _Failure) as e:
                writer.write(scrub.flush())
                written = writer.commit()
                partial = Body(str(written.digest), written.size, False, False, scrub.count)
                if isinstance(e, _Failure):
                    failure = e
                elif self._watchdog.expired:
                    failure = self._late_body(hop)
                else:
                    failure = self._map(e, hops)
                failure.hops = hops
                failure.partial = _replace(hop, body=partial)
                raise failure from e
            writer.write(scrub.flush())
            written = writer.commit()
        return Body(str(written.digest), written.size, truncated, not truncated, scrub.count)

    def _late_body(self, hop: Hop) -> _Failure:
        return _Failure(
            "timeout",
            f"the body of {hop.url} was still arriving after {self.policy.timeout:g}s",
            detail={"phase": "deadline", "timeout_s": self.policy.timeout},
        )

    def _map(self, error: httpx.HTTPError, hops: list[Hop]) -> _Failure:
        """Translate an httpx exception into a typed, scrubbed failure (docs/captures.md)."""
        where = self.redact_url(str(error.request.url)) if _has_request(error) else "the server"
        text = self.scrubber.text(str(error) or type(error).__name__)
        if self._watchdog.expired:
            return _Failure(
                "timeout",
                f"{where} had not finished answering after {self.policy.timeout:g}s",
                hops=hops,
                detail={"phase": "deadline", "timeout_s": self.policy.timeout},
            )
        if isinstance(error, httpx.TimeoutException):
            phase = {
                httpx.ConnectTimeout: "connecting to",
                httpx.ReadTimeout: "waiting for",
                httpx.WriteTimeout: "sending to",
                httpx.PoolTimeout: "waiting for a connection to",
            }.get(type(error), "talking to")
            return _Failure(
                "timeout",
                f"timed out after {self.policy.timeout:g}s {phase} {where}",
                hops=hops,
                detail={"phase": type(error).__name__, "timeout_s": self.policy.timeout},
            )
        if isinstance(error, httpx.ConnectError):
            if "CERTIFICATE_VERIFY_FAILED" in text or isinstance(error.__context__, ssl.SSLError):
                return _Failure("tls", f"TLS with {where} failed: {text}", hops=hops)
            return _Failure(
                "connect", f"cannot connect to {where}: {text}", retryable=True, hops=hops
            )
        if isinstance(error, (httpx.ReadError, httpx.WriteError)):
            return _Failure("reset", f"the connection to {where} broke: {text}", hops=hops)
        if isinstance(error, httpx.RemoteProtocolError):
            lowered = text.lower()
            if any(s in lowered for s in ("closed", "disconnect", "incomplete", "reset")):
                return _Failure("reset", f"the connection to {where} broke: {text}", hops=hops)
            return _Failure("protocol", f"{where} broke the HTTP protocol: {text}", hops=hops)
        if isinstance(error, httpx.DecodingError):
            return _Failure("decode", f"cannot decode the answer of {where}: {text}", hops=hops)
        return _Failure("protocol", f"request to {where} failed: {text}", hops=hops)

    def _retry_wait(self, retry_after: str | None, number: int) -> float | None:
        asked = parse_retry_after(retry_after)
        if asked is None:
            return self._backoff(number)
        return asked if asked <= self.policy.max_wait else None

    def _backoff(self, number: int) -> float:
        base = self.policy.backoff * 2.0 ** (number - 1)
        return min(self.policy.max_wait, base * (0.5 + random.random() / 2))

    def _say(self, message: str) -> None:
        if self._notify is not None:
            prefix = f"  {self._label}: " if self._label else "  "
            self._notify(prefix + self.scrubber.text(message))


def _has_request(error: httpx.HTTPError) -> bool:
    try:
        error.request  # noqa: B018 - raises RuntimeError when the error has no request
    except RuntimeError:
        return False
    return True


def _replace(hop: Hop, **changes: Any) -> Hop:
    from dataclasses import replace

    return replace(hop, **changes)


def _redact_urls_in(value: str) -> str:
    """Redact the URLs in a header such as ``Location`` or ``Link: <url>; rel="next"``.

    A URL is rewritten only when it carries a credential, so an opaque paging cursor keeps its
    exact spelling.
    """

    if "<" not in value:
        return redact.url_minimal(value)
    head, *rest = value.split("<")
    return "<".join(
        [head] + [redact.url_minimal(p.partition(">")[0]) + ">" + p.partition(">")[2] for p in rest]
    )


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
