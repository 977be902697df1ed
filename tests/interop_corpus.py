"""The interop corpus (tests/fixtures/interop): its cases, how each is verified, and the ways a
valid bundle is tampered with. Used by tests/unit/attest/test_interop.py and by the reliability
figures (tests/reliability/test_interop_corpus.py).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from provenance.attest import sigstore

CORPUS = Path(__file__).resolve().parent / "fixtures" / "interop"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
CASES: list[dict[str, Any]] = MANIFEST["cases"]
DOCS = Path(__file__).resolve().parents[1] / "docs" / "reliability.md"


def verify_case(case: dict[str, Any], data: bytes | None = None) -> sigstore.BundleVerified:
    """Verify one manifest case the way its source client's test does (prov's library API)."""
    bundle = CORPUS / case["bundle"]
    artifact = (CORPUS / case["artifact"]).read_bytes() if case.get("artifact") else None
    policy = key = None
    if case.get("key"):
        key = sigstore.load_public_key(CORPUS / case["key"])
    else:
        policy = sigstore.IdentityPolicy(issuer=case["issuer"], identity=case["identity"])
    result = sigstore.verify_bundle(
        data if data is not None else bundle.read_bytes(),
        policy=policy,
        key=key,
        trusted_root=CORPUS / case["trusted_root"],
        artifact=artifact,
        origin=bundle.name,
    )
    if case.get("subject"):
        _check_subject(result, case["subject"])
    return result


def _check_subject(result: sigstore.BundleVerified, subject: str) -> None:
    """The in-toto layer: the statement names the artifact's digest (any algorithm)."""
    from provenance.errors import VerificationError

    algorithm, _, hex_digest = subject.partition(":")
    statement = json.loads(result.payload or b"{}")
    digests = [s.get("digest", {}).get(algorithm) for s in statement.get("subject", [])]
    if hex_digest not in digests:
        raise VerificationError(f"the statement names no subject {subject}")


# -- the tamper corpus: each valid bundle, altered one way at a time ------------------------


def _flip(b64: str, at: int = -1) -> str:
    raw = bytearray(base64.b64decode(b64))
    raw[at] ^= 0x01
    return base64.b64encode(bytes(raw)).decode()


def _signature(doc: dict[str, Any]) -> None:
    if "dsseEnvelope" in doc:
        sig = doc["dsseEnvelope"]["signatures"][0]
        sig["sig"] = _flip(sig["sig"])
    else:
        doc["messageSignature"]["signature"] = _flip(doc["messageSignature"]["signature"])


def _payload(doc: dict[str, Any]) -> None:
    if "dsseEnvelope" in doc:
        doc["dsseEnvelope"]["payload"] = _flip(doc["dsseEnvelope"]["payload"], 10)
    else:
        digest = doc["messageSignature"]["messageDigest"]
        digest["digest"] = _flip(digest["digest"])


def _log_body(doc: dict[str, Any]) -> None:
    for entry in doc["verificationMaterial"].get("tlogEntries", []):
        entry["canonicalizedBody"] = _flip(entry["canonicalizedBody"], 40)


def _drop_log(doc: dict[str, Any]) -> None:
    if doc["verificationMaterial"].get("tlogEntries"):
        doc["verificationMaterial"]["tlogEntries"] = []


def _certificate(doc: dict[str, Any]) -> None:
    material = doc["verificationMaterial"]
    if "certificate" in material:
        material["certificate"]["rawBytes"] = _flip(material["certificate"]["rawBytes"], 200)
    elif "x509CertificateChain" in material:
        leaf = material["x509CertificateChain"]["certificates"][0]
        leaf["rawBytes"] = _flip(leaf["rawBytes"], 200)


def _timestamps(doc: dict[str, Any]) -> None:
    data = doc["verificationMaterial"].get("timestampVerificationData") or {}
    for token in data.get("rfc3161Timestamps") or []:
        token["signedTimestamp"] = _flip(token["signedTimestamp"])


def _media_type(doc: dict[str, Any]) -> None:
    doc["mediaType"] = "application/vnd.dev.sigstore.bundle.v9.9+json"


TAMPERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "signature": _signature,
    "payload": _payload,
    "log-body": _log_body,
    "drop-log": _drop_log,
    "certificate": _certificate,
    "timestamps": _timestamps,
    "media-type": _media_type,
}


def tampered(case: dict[str, Any], how: str) -> bytes | None:
    """The bundle altered one way, or None where it has nothing of that kind to alter."""
    original = json.loads((CORPUS / case["bundle"]).read_bytes())
    doc = json.loads(json.dumps(original))
    TAMPERS[how](doc)
    return None if doc == original else json.dumps(doc).encode()


TAMPERED = [
    (case, how)
    for case in CASES
    if case["expect"] == "valid"
    for how in sorted(TAMPERS)
    if tampered(case, how) is not None
]
