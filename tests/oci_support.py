"""Real registries for the oci tests: Debian's docker-registry (CNCF distribution) on 127.0.0.1.

* ``Registry``: ``docker-registry serve`` with a config.yml written here (storage in a tmp dir,
  a free port), anonymous or with ``auth: token:`` pointing at ``TokenServer``.
  A third kind uses ``auth: htpasswd:`` (``WWW-Authenticate: Basic``), users made by htpasswd.
* ``TokenServer``: docker's token authentication, as Docker Hub's auth.docker.io does it: Basic
  credentials in, an ES256 JWT out, signed by a key whose self-signed certificate the registry
  trusts (``rootcertbundle``) and carried in the JWT's ``x5c`` header.
* ``ReferrersFront``: distribution 2.8 has no referrers API. This front forwards every request to
  a real registry and adds what a registry with the API does (distribution spec v1.1): it answers
  a manifest PUT that has a ``subject`` with ``OCI-Subject`` and lists such manifests at
  ``GET /v2/<name>/referrers/<digest>``. With ``corrupt=True`` it appends a newline to every
  manifest it serves while keeping the registry's Docker-Content-Digest: a tampering middlebox.
* ``Pusher``: builds images (random gzip layers, a config with labels) and pushes them through the
  registry API with plain httpx, independently of the client under test.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import socket
import subprocess
import tarfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
SERVICE = "prov-test-registry"
ISSUER = "prov-test-token-issuer"
USERS = {"alice": "correct-horse-battery-staple"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def need_registry() -> str:
    binary = shutil.which("docker-registry")
    if binary is None:
        pytest.skip("needs a local OCI registry: apt-get install docker-registry (.ci/run does)")
    return binary


# -- the token server ------------------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class TokenServer:
    """Issues registry tokens: full requested access to known users, none to anonymous ones."""

    def __init__(self, directory: Path) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "prov test token issuer")])
        now = datetime.datetime.now(datetime.UTC)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .sign(self.key, hashes.SHA256())
        )
        self.cert_path = directory / "token-issuer.pem"
        self.cert_path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                server._handle(self, query, self.headers.get("Authorization"))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                user = None
                if form.get("grant_type") == "refresh_token":
                    user = form.get("refresh_token", "").removeprefix("refresh-")
                    if user not in USERS:
                        return server._reply(self, 401, {"error": "invalid_grant"})
                server._grant(self, form, user)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.realm = f"http://127.0.0.1:{self.httpd.server_address[1]}/token"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def _handle(
        self, handler: BaseHTTPRequestHandler, query: dict[str, str], authorization: str | None
    ) -> None:
        user = None
        if authorization:
            scheme, _, value = authorization.partition(" ")
            name, _, password = base64.b64decode(value).decode().partition(":")
            if scheme != "Basic" or USERS.get(name) != password:
                self.requests.append({"user": name, "granted": False})
                return self._reply(handler, 401, {"details": "incorrect username or password"})
            user = name
        self._grant(handler, query, user)

    def _grant(
        self, handler: BaseHTTPRequestHandler, query: dict[str, str], user: str | None
    ) -> None:
        access = []
        for scope in query.get("scope", "").split(" "):
            kind, _, rest = scope.partition(":")
            repository, _, actions = rest.rpartition(":")
            if kind == "repository" and user is not None:
                access.append(
                    {"type": "repository", "name": repository, "actions": actions.split(",")}
                )
        self.requests.append({"user": user, "scope": query.get("scope"), "granted": bool(access)})
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": user or "",
            "aud": query.get("service", SERVICE),
            "exp": now + 300,
            "nbf": now - 10,
            "iat": now,
            "jti": uuid.uuid4().hex,
            "access": access,
        }
        token = self.sign(claims)
        self._reply(handler, 200, {"token": token, "access_token": token, "expires_in": 300})

    def sign(self, claims: dict[str, Any]) -> str:
        header = {
            "typ": "JWT",
            "alg": "ES256",
            "x5c": [base64.b64encode(self.cert.public_bytes(serialization.Encoding.DER)).decode()],
        }
        signing_input = (
            _b64url(json.dumps(header).encode()) + "." + _b64url(json.dumps(claims).encode())
        )
        der = self.key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    def token_for(self, user: str, repository: str, actions: str = "pull,push") -> str:
        now = int(time.time())
        return self.sign(
            {
                "iss": ISSUER,
                "sub": user,
                "aud": SERVICE,
                "exp": now + 300,
                "nbf": now - 10,
                "iat": now,
                "jti": uuid.uuid4().hex,
                "access": [
                    {"type": "repository", "name": repository, "actions": actions.split(",")}
                ],
            }
        )

    @staticmethod
    def _reply(handler: BaseHTTPRequestHandler, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# -- the registry ----------------------------------------------------------------------------


class Registry:
    """``docker-registry serve`` on 127.0.0.1, storage in ``directory``."""

    def __init__(
        self, directory: Path, token: TokenServer | None = None, htpasswd: bool = False
    ) -> None:
        binary = need_registry()
        directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.host}"
        self.token = token
        lines = [
            "version: 0.1",
            "log:",
            "  level: error",
            "  accesslog:",
            "    disabled: true",
            "storage:",
            "  filesystem:",
            f"    rootdirectory: {directory / 'data'}",
            "  delete:",
            "    enabled: true",
            "http:",
            f"  addr: {self.host}",
            f"  secret: {uuid.uuid4().hex}",
        ]
        self.basic = htpasswd
        if htpasswd:
            users = directory / "htpasswd"
            tool = shutil.which("htpasswd")
            if tool is None:
                pytest.skip(
                    "needs htpasswd for the registry's users: apt-get install apache2-utils"
                )
            for user, password in USERS.items():
                create = [] if users.exists() else ["-c"]
                subprocess.run(
                    [tool, "-Bb", *create, str(users), user, password],
                    check=True,
                    capture_output=True,
                )
            lines += ["auth:", "  htpasswd:", "    realm: prov-test", f"    path: {users}"]
        if token is not None:
            lines += [
                "auth:",
                "  token:",
                f"    realm: {token.realm}",
                f"    service: {SERVICE}",
                f"    issuer: {ISSUER}",
                f"    rootcertbundle: {token.cert_path}",
            ]
        config = directory / "config.yml"
        config.write_text("\n".join(lines) + "\n")
        self.log = (directory / "registry.log").open("wb")
        self.process = subprocess.Popen(
            [binary, "serve", str(config)], stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 15
        while True:
            try:
                status = httpx.get(f"{self.url}/v2/", timeout=1).status_code
                if status in (200, 401):
                    break
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                log = (directory / "registry.log").read_text(errors="replace")
                raise RuntimeError(f"docker-registry did not start:\n{log[-2000:]}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


# -- a front with the referrers API ----------------------------------------------------------

_HOP = {"connection", "transfer-encoding", "keep-alive", "content-length", "date", "server"}
_MANIFEST_PATH = re.compile(r"^/v2/(.+)/manifests/([^/]+)$")
_REFERRERS_PATH = re.compile(r"^/v2/(.+)/referrers/(sha256:[0-9a-f]{64})$")


class ReferrersFront:
    """A real registry behind, the OCI 1.1 referrers API in front (see the module docstring)."""

    def __init__(self, backend: Registry, corrupt: bool = False) -> None:
        self.backend = backend
        self.corrupt = corrupt
        self.index: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.http = httpx.Client(timeout=10)
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _any(self) -> None:
                front._handle(self)

            do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.httpd.server_address[1]}"
        self.url = f"http://{self.host}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        path = urlsplit(handler.path).path
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP | {"host"}}
        if handler.command == "GET" and (match := _REFERRERS_PATH.match(path)):
            return self._referrers(handler, match.group(1), match.group(2), headers)
        response = self.http.request(
            handler.command, self.backend.url + handler.path, headers=headers, content=body
        )
        extra: dict[str, str] = {}
        content = response.content
        manifest = _MANIFEST_PATH.match(path)
        if manifest and handler.command == "PUT" and response.status_code == 201:
            subject = self._record(manifest.group(1), body, headers)
            if subject:
                extra["OCI-Subject"] = subject
        if manifest and handler.command == "GET" and self.corrupt and response.status_code == 200:
            content += b"\n"  # still valid JSON, no longer the bytes the digest names
        self._send(handler, response.status_code, response.headers, content, extra)

    def _record(self, repository: str, body: bytes, headers: dict[str, str]) -> str | None:
        try:
            document = json.loads(body)
        except ValueError:
            return None
        subject = document.get("subject") if isinstance(document, dict) else None
        if not isinstance(subject, dict) or not isinstance(subject.get("digest"), str):
            return None
        config = document.get("config") or {}
        descriptor = {
            "mediaType": document.get("mediaType")
            or headers.get("Content-Type")
            or headers.get("content-type"),
            "digest": sha256(body),
            "size": len(body),
            "artifactType": document.get("artifactType") or config.get("mediaType"),
        }
        if document.get("annotations"):
            descriptor["annotations"] = document["annotations"]
        with self.lock:
            listed = self.index.setdefault((repository, subject["digest"]), [])
            if all(d["digest"] != descriptor["digest"] for d in listed):
                listed.append(descriptor)
        return str(subject["digest"])

    def _referrers(
        self, handler: BaseHTTPRequestHandler, repository: str, digest: str, headers: dict[str, str]
    ) -> None:
        # Ask the registry whether this caller may read the image: its 401 is the answer.
        check = self.http.head(
            f"{self.backend.url}/v2/{repository}/manifests/{digest}",
            headers={**headers, "Accept": f"{OCI_MANIFEST}, {OCI_INDEX}"},
        )
        if check.status_code == 401:
            return self._send(handler, 401, check.headers, b"", {})
        wanted = parse_qs(urlsplit(handler.path).query).get("artifactType", [None])[0]
        with self.lock:
            listed = list(self.index.get((repository, digest), []))
        extra = {"Content-Type": OCI_INDEX}
        if wanted:
            listed = [d for d in listed if d.get("artifactType") == wanted]
            extra["OCI-Filters-Applied"] = "artifactType"
        document = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": listed}
        self._send(handler, 200, httpx.Headers(), json.dumps(document).encode(), extra)

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        headers: httpx.Headers,
        content: bytes,
        extra: dict[str, str],
    ) -> None:
        handler.send_response(status)
        for key, value in headers.multi_items():
            if key.lower() in _HOP:
                continue
            if key.lower() == "location":
                value = value.replace(self.backend.url, self.url)
            if key.lower() not in {k.lower() for k in extra}:
                handler.send_header(key, value)
        for key, value in extra.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(content)))
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(content)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.http.close()


# -- building and pushing images -------------------------------------------------------------


def random_layer(seed: bytes) -> tuple[bytes, str]:
    """A gzip'd tar holding one random file; returns the blob and its uncompressed diff id."""
    content = os.urandom(256) + seed
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(f"app/{seed.decode()}.bin")
        info.size = len(content)
        info.mtime = 1_786_000_000
        tar.addfile(info, io.BytesIO(content))
    raw = buffer.getvalue()
    return gzip.compress(raw, mtime=0), sha256(raw)


@dataclass
class Pushed:
    manifest: bytes
    digest: str
    config: bytes
    layers: list[tuple[str, int]] = field(default_factory=list)


class Pusher:
    """Pushes images through the registry API with plain httpx (not the client under test)."""

    def __init__(self, registry: Registry, base_url: str | None = None) -> None:
        self.registry = registry
        self.base = base_url or registry.url
        self.http = httpx.Client(timeout=10)

    def _headers(self, repository: str) -> dict[str, str]:
        if self.registry.basic:
            user, password = next(iter(USERS.items()))
            raw = base64.b64encode(f"{user}:{password}".encode()).decode()
            return {"Authorization": f"Basic {raw}"}
        if self.registry.token is None:
            return {}
        return {"Authorization": f"Bearer {self.registry.token.token_for('alice', repository)}"}

    def blob(self, repository: str, data: bytes) -> str:
        digest = sha256(data)
        headers = self._headers(repository)
        started = self.http.post(f"{self.base}/v2/{repository}/blobs/uploads/", headers=headers)
        assert started.status_code == 202, started.text
        location = str(started.url.join(started.headers["location"]))
        location += ("&" if "?" in location else "?") + f"digest={digest}"
        done = self.http.put(location, content=data, headers=headers)
        assert done.status_code == 201, done.text
        return digest

    def manifest(self, repository: str, reference: str, data: bytes, media_type: str) -> str:
        headers = {**self._headers(repository), "Content-Type": media_type}
        response = self.http.put(
            f"{self.base}/v2/{repository}/manifests/{reference}", content=data, headers=headers
        )
        assert response.status_code == 201, response.text
        return sha256(data)

    def image(
        self,
        repository: str,
        tag: str | None,
        labels: dict[str, str],
        *,
        architecture: str = "amd64",
        layers: int = 2,
    ) -> Pushed:
        blobs = [random_layer(f"{architecture}-{n}".encode()) for n in range(layers)]
        config = json.dumps(
            {
                "architecture": architecture,
                "os": "linux",
                "created": "2026-08-21T00:00:00Z",
                "config": {"Labels": labels, "Env": ["PATH=/usr/bin"]},
                "rootfs": {"type": "layers", "diff_ids": [diff for _, diff in blobs]},
            },
            indent=1,
        ).encode()
        config_digest = self.blob(repository, config)
        descriptors = []
        for data, _ in blobs:
            digest = self.blob(repository, data)
            descriptors.append({"mediaType": OCI_LAYER, "digest": digest, "size": len(data)})
        manifest = json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": OCI_MANIFEST,
                "config": {"mediaType": OCI_CONFIG, "digest": config_digest, "size": len(config)},
                "layers": descriptors,
            },
            indent=2,  # not canonical on purpose: the digest is over the bytes as sent
        ).encode()
        digest = self.manifest(repository, tag or sha256(manifest), manifest, OCI_MANIFEST)
        return Pushed(manifest, digest, config, [(d["digest"], d["size"]) for d in descriptors])

    def index(self, repository: str, tag: str, images: dict[str, Pushed]) -> Pushed:
        manifests = []
        for platform, image in images.items():
            os_name, architecture = platform.split("/")
            manifests.append(
                {
                    "mediaType": OCI_MANIFEST,
                    "digest": image.digest,
                    "size": len(image.manifest),
                    "platform": {"os": os_name, "architecture": architecture},
                }
            )
        data = json.dumps(
            {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests}
        ).encode()
        return Pushed(data, self.manifest(repository, tag, data, OCI_INDEX), b"")

    def get(self, repository: str, path: str, accept: str = OCI_INDEX) -> httpx.Response:
        headers = {**self._headers(repository), "Accept": accept}
        return self.http.get(f"{self.base}/v2/{repository}/{path}", headers=headers)

    def close(self) -> None:
        self.http.close()


@contextlib.contextmanager
def running(directory: Path, *, auth: bool = False, basic: bool = False) -> Iterator[Registry]:
    token = TokenServer(directory) if auth else None
    registry = Registry(directory / "registry", token, htpasswd=basic)
    try:
        yield registry
    finally:
        registry.stop()
        if token is not None:
            token.stop()
