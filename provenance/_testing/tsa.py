"""A real RFC 3161 time-stamping authority on 127.0.0.1, made with ``openssl ts``.

An HTTP handler pipes each ``application/timestamp-query`` body to ``openssl ts -reply`` and
returns its DER reply. The TSA's root CA and signing certificate (critical timeStamping EKU) are
generated on start, so every ``LocalTSA`` is a distinct authority::

    with LocalTSA(tmp_path / "tsa") as tsa:
        token = timestamp.request(tsa.url, signature)
        timestamp.verify(token, [signature], TsaTrust.from_pem(tsa.chain_pem))
"""

from __future__ import annotations

import datetime
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from provenance._testing.certs import SIGNING_ONLY, ca_certificate

_CONFIG = """\
[ tsa ]
default_tsa = tsa_config

[ tsa_config ]
dir = {dir}
serial = $dir/serial
crypto_device = builtin
signer_cert = $dir/tsa.pem
certs = $dir/chain.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.3.6.1.4.1.57264.99.1
other_policies = 1.3.6.1.4.1.57264.99.2
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "prov test"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def make_tsa_certificates(
    directory: Path, name: str
) -> tuple[Path, Path, x509.Certificate, x509.Certificate]:
    """A root CA and a TSA certificate it issued; writes tsa.key, tsa.pem and chain.pem."""
    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)
    root_key = ec.generate_private_key(ec.SECP256R1())
    root = ca_certificate(root_key, _name(f"{name} root"), start, end)
    tsa_key = ec.generate_private_key(ec.SECP256R1())
    tsa = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(root.subject)
        .public_key(tsa_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            SIGNING_ONLY,
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(root_key.public_key()),
            critical=False,
        )
        .sign(root_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    key_path = directory / "tsa.key"
    key_path.write_bytes(
        tsa_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    pem = serialization.Encoding.PEM
    (directory / "tsa.pem").write_bytes(tsa.public_bytes(pem))
    chain = directory / "chain.pem"
    chain.write_bytes(tsa.public_bytes(pem) + root.public_bytes(pem))
    return key_path, chain, tsa, root


class LocalTSA:
    """An ``openssl ts`` authority behind ``http://127.0.0.1:<port>/``; a context manager."""

    def __init__(self, directory: Path | None = None, name: str = "prov test TSA") -> None:
        self._temp = None if directory else tempfile.TemporaryDirectory(prefix="prov-tsa-")
        self.directory = directory or Path(self._temp.name)  # type: ignore[union-attr]
        self.name = name
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests = 0
        _, self.chain_pem, self.certificate, self.root = make_tsa_certificates(self.directory, name)
        (self.directory / "serial").write_text("01\n")
        self.config = self.directory / "openssl-tsa.cnf"
        self.config.write_text(_CONFIG.format(dir=self.directory))

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the TSA is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def reply(self, query: bytes) -> bytes:
        """Run ``openssl ts -reply`` on one DER TimeStampReq; returns the DER TimeStampResp."""
        with self._lock:  # openssl updates the serial file: one reply at a time
            self.requests += 1
            query_path = self.directory / "query.tsq"
            reply_path = self.directory / "reply.tsr"
            query_path.write_bytes(query)
            subprocess.run(
                [
                    "openssl",
                    "ts",
                    "-reply",
                    "-config",
                    str(self.config),
                    "-queryfile",
                    str(query_path),
                    "-out",
                    str(reply_path),
                ],
                check=True,
                capture_output=True,
            )
            return reply_path.read_bytes()

    def start(self) -> LocalTSA:
        tsa = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                query = self.rfile.read(length)
                if self.headers.get("Content-Type") != "application/timestamp-query":
                    self.send_error(415, "expected application/timestamp-query")
                    return
                try:
                    body = tsa.reply(query)
                except subprocess.CalledProcessError as e:
                    self.send_error(400, e.stderr.decode(errors="replace")[:200])
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/timestamp-reply")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="prov-tsa", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._temp is not None:
            self._temp.cleanup()

    def __enter__(self) -> LocalTSA:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
