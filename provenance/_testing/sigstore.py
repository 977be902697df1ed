"""A local Sigstore instance for tests and the demo: keyless-style signing with no network.

It plays the three services a real signing flow talks to, with keys generated on the spot:

* a Fulcio-like CA issuing a short-lived certificate for an ephemeral key, with the Fulcio
  identity extensions and an embedded SCT signed by a local CT log key (RFC 6962);
* a Rekor-v1-like transparency log: ``dsse/0.0.1`` entries in an RFC 6962 Merkle tree, an
  inclusion proof with a signed checkpoint, and a signed entry timestamp (SET);
* optionally a TSA (``LocalTSA``) listed in the trust root.

Envelopes are signed with sigstore-python's own DSSE code and the bundle is parsed back through
sigstore-python's ``Bundle``; ``trusted_root_json()`` describes the instance so that the real
verifier (``prov verify --trusted-root``) checks everything as it would for production.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.types import CertificatePublicKeyTypes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

from provenance._testing import schemes
from provenance._testing.certs import SIGNING_ONLY, ca_certificate
from provenance._testing.schemes import PrivateKey
from provenance.attest.dsse import pae
from provenance.attest.statement import PAYLOAD_TYPE

if TYPE_CHECKING:
    from provenance._testing.tsa import LocalTSA

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
_OID_ISSUER_V1 = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")
_OID_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
_OID_SOURCE_REPO_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.12")
_OID_SOURCE_REPO_REF = ObjectIdentifier("1.3.6.1.4.1.57264.1.14")
_OID_SOURCE_REPO_OWNER_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.16")
# What GitHub's Fulcio adds for a workflow and `gh attestation verify` reads: the workflow that
# signed and the one that defined the build (both the SAN here), and the runner kind.
_OID_BUILD_SIGNER_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.9")
_OID_RUNNER_ENVIRONMENT = ObjectIdentifier("1.3.6.1.4.1.57264.1.11")
_OID_BUILD_CONFIG_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.18")
_OID_SCT_LIST = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")


def _der_utf8(text: str) -> bytes:
    data = text.encode()
    return b"\x0c" + _der_length(len(data)) + data


def _der_octets(data: bytes) -> bytes:
    return b"\x04" + _der_length(len(data)) + data


def _der_length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def _spki(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _rfc3339(when: datetime.datetime) -> str:
    return when.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pae(statement: bytes) -> bytes:
    return pae(PAYLOAD_TYPE, statement)


def _envelope(statement: bytes, signature: bytes) -> dict[str, Any]:
    """The DSSE envelope of an in-toto statement and its one signature."""
    return {
        "payload": _b64(statement),
        "payloadType": PAYLOAD_TYPE,
        "signatures": [{"sig": _b64(signature)}],
    }


def _merkle_root(leaves: list[bytes]) -> bytes:
    """RFC 6962 MTH over leaf hashes."""
    if len(leaves) == 1:
        return leaves[0]
    split = 1 << ((len(leaves) - 1).bit_length() - 1)
    return hashlib.sha256(
        b"\x01" + _merkle_root(leaves[:split]) + _merkle_root(leaves[split:])
    ).digest()


def _audit_path(index: int, leaves: list[bytes]) -> list[bytes]:
    """RFC 6962 PATH(m, D[n]), leaf to root."""
    if len(leaves) <= 1:
        return []
    split = 1 << ((len(leaves) - 1).bit_length() - 1)
    if index < split:
        return [*_audit_path(index, leaves[:split]), _merkle_root(leaves[split:])]
    return [*_audit_path(index - split, leaves[split:]), _merkle_root(leaves[:split])]


@dataclass
class LocalSigstore:
    """CA + CT log + transparency log (+ TSA) in memory; implements ``BundleSigner``."""

    signer_identity: str = (
        "https://github.com/example/project/.github/workflows/release.yml@refs/tags/v1.0"
    )
    issuer: str = GITHUB_ISSUER
    repository: str | None = "example/project"
    ref: str | None = "refs/tags/v1.0"
    tsa: LocalTSA | None = None
    log_url: str = "http://127.0.0.1/rekor"
    scheme: str = "ecdsa-p256"  # the ephemeral key's signing scheme (``_testing.schemes``)
    # The checkpoint's origin, "<log host/path> - <tree id>" as Rekor v1 writes it: its signer
    # name must be part of the log's base URL for sigstore-js to take the signature as the log's.
    origin: str = ""
    started: datetime.datetime = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)
    )

    def __post_init__(self) -> None:
        if not self.origin:
            url = urlsplit(self.log_url)
            self.origin = f"{url.netloc}{url.path} - 1"
        self.ca_key = ec.generate_private_key(ec.SECP384R1())
        name = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "prov test"),
                x509.NameAttribute(NameOID.COMMON_NAME, "prov test fulcio"),
            ]
        )
        self.ca = ca_certificate(
            self.ca_key,
            name,
            self.started,
            self.started + datetime.timedelta(days=365),
            path_length=1,
            hash_algorithm=hashes.SHA384(),
        )
        self.ct_key = ec.generate_private_key(ec.SECP256R1())
        self.log_key = ec.generate_private_key(ec.SECP256R1())
        self.log_id = hashlib.sha256(_spki(self.log_key.public_key())).digest()
        self.leaves: list[bytes] = []
        self.last_identity = ""

    # -- the CA ------------------------------------------------------------------------------

    def issue(self, key: CertificatePublicKeyTypes) -> x509.Certificate:
        """A 10-minute code-signing certificate with Fulcio's extensions and an embedded SCT."""
        now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
        serial = x509.random_serial_number()

        def build(sct_list: bytes) -> x509.Certificate:
            builder = (
                x509.CertificateBuilder()
                .subject_name(x509.Name([]))
                .issuer_name(self.ca.subject)
                .public_key(key)
                .serial_number(serial)
                .not_valid_before(now - datetime.timedelta(seconds=30))
                .not_valid_after(now + datetime.timedelta(minutes=10))
                .add_extension(
                    SIGNING_ONLY,
                    critical=True,
                )
                .add_extension(
                    x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False
                )
                .add_extension(
                    x509.SubjectAlternativeName(
                        [x509.UniformResourceIdentifier(self.signer_identity)]
                    ),
                    critical=True,
                )
                .add_extension(
                    x509.AuthorityKeyIdentifier.from_issuer_public_key(self.ca_key.public_key()),
                    critical=False,
                )
                .add_extension(
                    x509.UnrecognizedExtension(_OID_ISSUER_V1, self.issuer.encode()),
                    critical=False,
                )
                .add_extension(
                    x509.UnrecognizedExtension(_OID_ISSUER_V2, _der_utf8(self.issuer)),
                    critical=False,
                )
            )
            if self.repository:
                uri = f"https://github.com/{self.repository}"
                owner = f"https://github.com/{self.repository.split('/')[0]}"
                builder = builder.add_extension(
                    x509.UnrecognizedExtension(_OID_SOURCE_REPO_URI, _der_utf8(uri)),
                    critical=False,
                )
                for oid, value in (
                    (_OID_SOURCE_REPO_OWNER_URI, owner),
                    (_OID_BUILD_SIGNER_URI, self.signer_identity),
                    (_OID_RUNNER_ENVIRONMENT, "github-hosted"),
                    (_OID_BUILD_CONFIG_URI, self.signer_identity),
                ):
                    builder = builder.add_extension(
                        x509.UnrecognizedExtension(oid, _der_utf8(value)), critical=False
                    )
            if self.ref:
                builder = builder.add_extension(
                    x509.UnrecognizedExtension(_OID_SOURCE_REPO_REF, _der_utf8(self.ref)),
                    critical=False,
                )
            builder = builder.add_extension(
                x509.UnrecognizedExtension(_OID_SCT_LIST, _der_octets(sct_list)), critical=False
            )
            return builder.sign(self.ca_key, hashes.SHA384())

        # The SCT signs the precertificate TBS: the certificate without its SCT extension,
        # which is the same whatever the placeholder holds.
        placeholder = build(self._sct_list(b"\x00" * 8, 0, b""))
        tbs = placeholder.tbs_precertificate_bytes
        millis = int(time.time() * 1000)
        issuer_key_hash = hashlib.sha256(_spki(self.ca_key.public_key())).digest()
        signed = struct.pack(
            f"!BBQH32s3s{len(tbs)}sH", 0, 0, millis, 1, issuer_key_hash,
            len(tbs).to_bytes(3, "big"), tbs, 0,
        )  # fmt: skip
        signature = self.ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
        return build(self._sct_list(signature, millis, self._ct_log_id()))

    def _ct_log_id(self) -> bytes:
        return hashlib.sha256(_spki(self.ct_key.public_key())).digest()

    def _sct_list(self, signature: bytes, millis: int, log_id: bytes) -> bytes:
        log_id = log_id or b"\x00" * 32
        sct = (
            struct.pack("!B32sQH", 0, log_id, millis, 0)
            + struct.pack("!BBH", 4, 3, len(signature))
            + signature
        )
        return struct.pack("!HH", len(sct) + 2, len(sct)) + sct

    # -- the transparency log ----------------------------------------------------------------

    def log_dsse(
        self, envelope: dict[str, Any], certificate: x509.Certificate | CertificatePublicKeyTypes
    ) -> dict[str, Any]:
        """Add a dsse/0.0.1 entry; return the bundle's tlogEntries item for it.

        The verifier logged is the certificate, or for a managed-key bundle the public key.
        """
        if isinstance(certificate, x509.Certificate):
            pem = certificate.public_bytes(serialization.Encoding.PEM)
        else:
            pem = certificate.public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        payload = base64.b64decode(envelope["payload"])
        body = json.dumps(
            {
                "apiVersion": "0.0.1",
                "kind": "dsse",
                "spec": {
                    "envelopeHash": {
                        "algorithm": "sha256",
                        "value": hashlib.sha256(json.dumps(envelope).encode()).hexdigest(),
                    },
                    "payloadHash": {
                        "algorithm": "sha256",
                        "value": hashlib.sha256(payload).hexdigest(),
                    },
                    "signatures": [
                        {"signature": s["sig"], "verifier": _b64(pem)}
                        for s in envelope["signatures"]
                    ],
                },
            },
            separators=(",", ":"),
        ).encode()
        self.leaves.append(hashlib.sha256(b"\x00" + body).digest())
        index, size = len(self.leaves) - 1, len(self.leaves)
        root = _merkle_root(self.leaves)
        note = f"{self.origin}\n{size}\n{_b64(root)}\n"
        note_signature = self.log_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        name = self.origin.split(" ")[0]
        checkpoint = f"{note}\n\u2014 {name} {_b64(self.log_id[:4] + note_signature)}\n"
        integrated = int(time.time())
        import rfc8785

        promise = rfc8785.dumps(
            {
                "body": _b64(body),
                "integratedTime": integrated,
                "logID": self.log_id.hex(),
                "logIndex": index,
            }
        )
        return {
            "logIndex": str(index),
            "logId": {"keyId": _b64(self.log_id)},
            "kindVersion": {"kind": "dsse", "version": "0.0.1"},
            "integratedTime": str(integrated),
            "inclusionPromise": {
                "signedEntryTimestamp": _b64(self.log_key.sign(promise, ec.ECDSA(hashes.SHA256())))
            },
            "inclusionProof": {
                "logIndex": str(index),
                "rootHash": _b64(root),
                "treeSize": str(size),
                "hashes": [_b64(h) for h in _audit_path(index, self.leaves)],
                "checkpoint": {"envelope": checkpoint},
            },
            "canonicalizedBody": _b64(body),
        }

    # -- signing (the BundleSigner protocol) -------------------------------------------------

    def sign_dsse(self, statement: bytes) -> bytes:
        from sigstore import dsse
        from sigstore.models import Bundle

        if self.scheme == "ecdsa-p256":  # sigstore-python's own signer and DSSE code
            key = ec.generate_private_key(ec.SECP256R1())  # ephemeral, like sigstore's Signer
            certificate = self.issue(key.public_key())
            envelope = json.loads(dsse._sign(key, dsse.Statement(statement)).to_json())
        else:
            certificate, envelope = self._sign_by_scheme(statement)
        der = certificate.public_bytes(serialization.Encoding.DER)
        bundle = {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {
                "certificate": {"rawBytes": _b64(der)},
                "tlogEntries": [self.log_dsse(envelope, certificate)],
            },
            "dsseEnvelope": envelope,
        }
        data = json.dumps(bundle, separators=(",", ":")).encode()
        Bundle.from_json(data)  # sigstore-python must accept what we assembled
        self.last_identity = self.signer_identity
        return data

    def _sign_by_scheme(self, statement: bytes) -> tuple[x509.Certificate, dict[str, Any]]:
        key = schemes.ephemeral(self.scheme)
        certificate = self.issue(key.public_key())
        return certificate, _envelope(statement, schemes.sign(key, self.scheme, _pae(statement)))

    def identity(self) -> str:
        return self.last_identity

    def sign_dsse_with_key(
        self, statement: bytes, key: PrivateKey, hint: str = "", scheme: str = ""
    ) -> bytes:
        """A managed-key bundle: no certificate; the key's public half is what the log holds
        (``verificationMaterial.publicKey``; verify with that public key). ``scheme`` names
        the signing scheme of a key that is not ECDSA P-256 (``_testing.schemes``)."""
        from sigstore import dsse
        from sigstore_models.bundle.v1 import Bundle as RawBundle

        if scheme in ("", "ecdsa-p256") and isinstance(key, ec.EllipticCurvePrivateKey):
            envelope = json.loads(dsse._sign(key, dsse.Statement(statement)).to_json())
        else:
            envelope = _envelope(statement, schemes.sign(key, scheme, _pae(statement)))
        bundle = {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {
                "publicKey": {"hint": hint},
                "tlogEntries": [self.log_dsse(envelope, key.public_key())],
            },
            "dsseEnvelope": envelope,
        }
        data = json.dumps(bundle, separators=(",", ":")).encode()
        RawBundle.from_json(data)  # the bundle schema must accept what we assembled
        return data

    # -- trust -------------------------------------------------------------------------------

    def trusted_root_json(self) -> dict[str, Any]:
        start = {"start": _rfc3339(self.started)}

        def log(key: ec.EllipticCurvePrivateKey, url: str) -> dict[str, Any]:
            spki = _spki(key.public_key())
            return {
                "baseUrl": url,
                "hashAlgorithm": "SHA2_256",
                "publicKey": {
                    "rawBytes": _b64(spki),
                    "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                    "validFor": start,
                },
                "logId": {"keyId": _b64(hashlib.sha256(spki).digest())},
            }

        root: dict[str, Any] = {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log(self.log_key, self.log_url)],
            "certificateAuthorities": [
                {
                    "subject": {"organization": "prov test", "commonName": "prov test fulcio"},
                    "uri": "http://127.0.0.1/fulcio",
                    "certChain": {
                        "certificates": [
                            {"rawBytes": _b64(self.ca.public_bytes(serialization.Encoding.DER))}
                        ]
                    },
                    "validFor": start,
                }
            ],
            "ctlogs": [log(self.ct_key, "http://127.0.0.1/ct")],
            "timestampAuthorities": [],
        }
        if self.tsa is not None:
            der = serialization.Encoding.DER
            root["timestampAuthorities"].append(
                {
                    "subject": {"organization": "prov test", "commonName": self.tsa.name},
                    "uri": self.tsa.url,
                    "certChain": {
                        "certificates": [
                            {"rawBytes": _b64(self.tsa.certificate.public_bytes(der))},
                            {"rawBytes": _b64(self.tsa.root.public_bytes(der))},
                        ]
                    },
                    "validFor": start,
                }
            )
        return root

    def write_trusted_root(self, path: Path) -> Path:
        path.write_text(json.dumps(self.trusted_root_json(), indent=2))
        return path
