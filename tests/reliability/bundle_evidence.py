"""Valid Sigstore bundles to tamper with, signed offline over the DSSE evidence's statements.

``LocalSigstore`` (provenance/testing/sigstore.py) is a CA, CT log and transparency log made of
keys generated here, with a real RFC 3161 authority (``LocalTSA``, openssl) in its trust root:

* ``m1`` (keyless, with an RFC 3161 timestamp) and ``m2`` (keyless, none) carry the very statement
  bytes of the DSSE evidence, so ``--store`` checks their blobs too;
* ``m1-other-identity``: m1 signed by the same CA for another workflow;
* ``m1-other-instance``: m1 signed by another Sigstore instance (CA and log nobody trusts);
* ``m1-managed``: m1 signed with a managed ECDSA key (``publicKey`` material, no certificate),
  and ``m1-managed-other``: the same by a key nobody trusts.

Built once per session, next to the DSSE evidence (``Evidence.root / "sigstore"``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from provenance._testing.sigstore import LocalSigstore
from provenance._testing.tsa import LocalTSA, make_tsa_certificates
from provenance.attest import sigstore, timestamp
from tests.reliability.evidence import Evidence

IDENTITY = "https://github.com/marin-community/marin/.github/workflows/release.yml@refs/tags/m1"
OTHER_IDENTITY = "https://github.com/marin-community/marin/.github/workflows/other.yml@refs/heads/x"
ISSUER = sigstore.GITHUB_ISSUER
REPOSITORY = "marin-community/marin"


@dataclass
class Bundles:
    root: Path
    evidence: Evidence
    instance: LocalSigstore
    other_instance: LocalSigstore

    def path(self, name: str) -> Path:
        return self.root / f"{name}.sigstore.json"

    def data(self, name: str) -> bytes:
        return self.path(name).read_bytes()

    def document(self, name: str) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.data(name))
        return document

    @property
    def trusted_root(self) -> Path:
        return self.root / "trusted_root.json"

    @property
    def tsa_chain(self) -> Path:
        return self.root / "tsa-chain.pem"

    def policy(self, identity: str = IDENTITY) -> tuple[str, ...]:
        return (
            "--cert-identity", identity, "--cert-oidc-issuer", ISSUER,
            "--trusted-root", str(self.trusted_root),
        )  # fmt: skip

    def managed_key(self, name: str = "managed") -> tuple[str, ...]:
        return ("--key", str(self.root / f"{name}.pub"), "--trusted-root", str(self.trusted_root))


_built: dict[Path, Bundles] = {}


def bundles(ev: Evidence) -> Bundles:
    """The bundles for this evidence, built on first use."""
    if ev.root not in _built:
        _built[ev.root] = _build(ev, ev.root / "sigstore")
    return _built[ev.root]


def _build(ev: Evidence, root: Path) -> Bundles:
    root.mkdir()
    with LocalTSA(root / "tsa", name="prov reliability TSA") as tsa:
        instance = LocalSigstore(signer_identity=IDENTITY, issuer=ISSUER, repository=REPOSITORY,
                                 ref="refs/tags/m1", tsa=tsa)  # fmt: skip
        other = LocalSigstore(signer_identity=IDENTITY, issuer=ISSUER, repository=REPOSITORY)

        def stamp(signature: bytes) -> bytes:
            return timestamp.request(tsa.url, signature)

        def write(name: str, data: bytes) -> None:
            # One line, as prov writes bundles (SigstoreAttester).
            line = json.dumps(json.loads(data), separators=(",", ":")).encode() + b"\n"
            (root / f"{name}.sigstore.json").write_bytes(line)

        stamped = sigstore.SigstoreAttester(instance, timestamper=stamp)
        write("m1", stamped.attest(ev.payload("m1")))
        write("m2", sigstore.SigstoreAttester(instance).attest(ev.payload("m2")))
        instance.signer_identity = OTHER_IDENTITY
        write("m1-other-identity", instance.sign_dsse(ev.payload("m1")))
        instance.signer_identity = IDENTITY
        write("m1-other-instance", other.sign_dsse(ev.payload("m1")))
        for name in ("managed", "managed-other"):
            key = ec.generate_private_key(ec.SECP256R1())
            public = key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            (root / f"{name}.pub").write_bytes(public)
            write(f"m1-{name}", instance.sign_dsse_with_key(ev.payload("m1"), key, hint=name))
        instance.write_trusted_root(root / "trusted_root.json")
        (root / "tsa-chain.pem").write_bytes(tsa.chain_pem.read_bytes())
        # Trust material that must not do: this instance without its TSA, another instance,
        # and the chain of another TSA.
        without_tsa = instance.trusted_root_json()
        without_tsa["timestampAuthorities"] = []
        (root / "root-without-tsa.json").write_text(json.dumps(without_tsa))
    other.write_trusted_root(root / "other-root.json")
    _, chain, _, _ = make_tsa_certificates(_fresh(root / "other-tsa"), "another TSA")
    (root / "other-tsa-chain.pem").write_bytes(chain.read_bytes())
    return Bundles(root, ev, instance, other)


def _fresh(path: Path) -> Path:
    path.mkdir()
    return path
