"""Real bundles from other Sigstore clients' test data, verified by prov offline.

The corpus (tests/fixtures/interop, sources in its SOURCES.md) holds production, staging and
GitHub-instance bundles, v0.1 to v0.3, DSSE and message signatures, Rekor v1 and v2 entries, and
the algorithms Fulcio issues certificates for. ``manifest.json`` gives each case's expected
verdict: a valid case must verify; an invalid one must be refused for its own reason (a regular
expression over prov's message). A case some client accepts and prov refuses must say why in its
``exception`` and in docs/reliability.md. Every valid bundle is also tampered with, and each
tampered copy must be refused with a ProvError, never a traceback.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from provenance.attest import sigstore
from provenance.errors import ProvError

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "interop"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
CASES: list[dict[str, Any]] = MANIFEST["cases"]
DOCS = Path(__file__).resolve().parents[3] / "docs" / "reliability.md"


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


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_verdict(case: dict[str, Any]) -> None:
    if case["expect"] == "valid":
        result = verify_case(case)
        assert result.times, "a verified bundle has at least one verified time"
        return
    with pytest.raises(ProvError) as refused:
        verify_case(case)
    assert re.search(case["reason"], refused.value.message), refused.value.message


def test_every_refusal_of_an_accepted_bundle_is_documented() -> None:
    documented = DOCS.read_text()
    for case in CASES:
        if case["expect"] == "invalid" and case["accepted_by"]:
            assert case.get("exception"), f"{case['id']}: accepted by {case['accepted_by']}"
            assert case["id"] in documented, f"{case['id']} is not in {DOCS.name}"


def test_corpus_covers_what_the_ecosystem_signs() -> None:
    valid = [c for c in CASES if c["expect"] == "valid"]
    text = " ".join(c["why"] for c in valid)
    for needed in ("P-384", "P-521", "RSA 2048", "RSA 4096", "v0.1", "Rekor v2", "GitHub"):
        assert needed in text, needed
    assert any(c.get("key") for c in valid), "a managed-key bundle"


def test_every_file_has_its_source() -> None:
    sources = (CORPUS / "SOURCES.md").read_text()
    files = [p for p in CORPUS.rglob("*") if p.is_file() and p.name not in {"SOURCES.md"}]
    missing = [str(p.relative_to(CORPUS)) for p in files if p.name not in sources]
    assert not missing, missing


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


def _tampered(case: dict[str, Any], how: str) -> bytes | None:
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
    if _tampered(case, how) is not None
]


@pytest.mark.parametrize(
    ("case", "how"), TAMPERED, ids=[f"{case['id']}-{how}" for case, how in TAMPERED]
)
def test_tampered_bundle_is_refused_without_traceback(case: dict[str, Any], how: str) -> None:
    data = _tampered(case, how)
    assert data is not None
    with pytest.raises(ProvError):
        verify_case(case, data)


# -- foreign statements through the command line -----------------------------------------------

DEMO_FILE = "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl"
GITHUB_DEMO = (
    CORPUS / "bundles" / "gh-cli" / "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl"
)
DEMO_IDENTITY = (
    "https://github.com/actions/attest-demo/.github/workflows/build-python.yml@refs/heads/main"
)


def test_prov_verify_reports_a_foreign_statement_with_distinct_steps(
    prov: Callable[..., Result], tmp_path: Path
) -> None:
    bundle = tmp_path / "demo.sigstore.json"
    bundle.write_bytes(GITHUB_DEMO.read_bytes())
    result = prov(
        "verify",
        str(bundle),
        "--format",
        "json",
        "--trusted-root",
        str(CORPUS / "trusted-roots" / "github.trusted_root.json"),
        "--cert-identity",
        DEMO_IDENTITY,
        "--cert-oidc-issuer",
        "https://token.actions.githubusercontent.com",
    )
    assert result.exit_code == 1, result.output
    steps = json.loads(result.stdout)["steps"]
    numbers = [step["number"] for step in steps]
    assert numbers == sorted(set(numbers)) == [1, 2, 3, 4], steps
    assert [s["status"] for s in steps] == ["passed", "passed", "skipped", "failed"]
    assert "foreign in-toto statement" in steps[3]["detail"]
    assert "github_provenance_demo-0.0.12-py3-none-any.whl (sha256:ae57936d" in steps[3]["detail"]


def test_prov_show_reads_a_foreign_statement(prov: Callable[..., Result]) -> None:
    result = prov("show", str(GITHUB_DEMO))
    assert result.exit_code == 0, result.output
    assert "predicateType https://slsa.dev/provenance/v1" in result.stdout
    assert (
        "subject github_provenance_demo-0.0.12-py3-none-any.whl  sha256:ae57936def59bc4c"
        in result.stdout
    )
    shown = json.loads(prov("show", "--format", "json", str(GITHUB_DEMO)).stdout)
    assert shown["predicateType"] == "https://slsa.dev/provenance/v1"
    assert shown["subject"][0]["digest"]["sha256"].startswith("ae57936d")
