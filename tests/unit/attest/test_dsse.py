"""DSSE: interoperability with securesystemslib, the spec's test vector and the derived cases."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from provenance.attest import dsse, keys
from provenance.attest import statement as statements
from provenance.errors import VerificationError


@pytest.mark.parametrize("algorithm", ["ed25519", "ecdsa-p256"])
def test_securesystemslib_verifies_our_envelopes(tmp_path: Path, algorithm: str) -> None:
    from securesystemslib.dsse import Envelope
    from securesystemslib.signer import SSlibKey

    private_path, public_path = keys.generate(tmp_path, "k", algorithm)  # type: ignore[arg-type]
    signer = keys.load_signer(private_path)
    envelope = dsse.sign(statements.PAYLOAD_TYPE, b'{"hello": "world"}', [signer])
    theirs = Envelope.from_dict(json.loads(envelope.to_json()))
    verifier = keys.load_verifier(public_path)
    key = SSlibKey.from_crypto(verifier.public, keyid=verifier.keyid)
    accepted = theirs.verify([key], threshold=1)
    assert list(accepted) == [signer.keyid]
    # And the other way round: securesystemslib's own failure on a wrong key.
    other = keys.load_verifier(keys.generate(tmp_path, "other", algorithm)[1])  # type: ignore[arg-type]
    from securesystemslib.exceptions import VerificationError as TheirError

    with pytest.raises(TheirError):
        theirs.verify([SSlibKey.from_crypto(other.public, keyid=signer.keyid)], threshold=1)


def test_pae_cases_from_the_spec(shared: Path) -> None:
    vectors = json.loads((shared / "conformance/dsse/spec/vectors.json").read_text())
    for case in vectors["pae_cases"]:
        expected = (
            bytes.fromhex(case["pae_hex"]) if "pae_hex" in case else case["pae_utf8"].encode()
        )
        assert dsse.pae(case["payloadType"], case["payload_utf8"].encode()) == expected


def test_the_spec_envelopes_verify(shared: Path) -> None:
    spec = shared / "conformance/dsse/spec"
    vectors = json.loads((spec / "vectors.json").read_text())
    key = keys.load_verifier(spec / vectors["key"]["public_key_pem_file"])
    for case in vectors["envelopes"]:
        envelope = dsse.parse(json.dumps(case["envelope"]).encode())
        assert case["expect"] == "valid"
        checks = dsse.verify(envelope, [key], threshold=1)
        assert checks[0].verified_by == key.source


def _derived_cases(shared_dir: Path) -> list[dict]:  # type: ignore[type-arg]
    path = shared_dir / "conformance/dsse/derived/cases.json"
    return json.loads(path.read_text())["cases"] if path.is_file() else []


def _verify_case(folder: Path, case: dict) -> None:  # type: ignore[type-arg]
    key = keys.load_verifier((folder / case["verify_with_key"]).resolve())
    envelope = dsse.parse((folder / case["file"]).read_bytes())
    dsse.verify(envelope, [key], threshold=1)
    if case["layer"] == "in-toto":
        if envelope.payload_type != statements.PAYLOAD_TYPE:
            raise VerificationError(f"payloadType {envelope.payload_type!r}")
        parsed = statements.parse(envelope.payload)
        artifact = hashlib.sha256((folder / case["artifact"]).read_bytes()).hexdigest()
        if artifact not in [s.get("digest", {}).get("sha256") for s in parsed.subjects]:
            raise VerificationError("the artifact is not a subject of the statement")


def test_the_derived_cases_meet_their_expectations(shared: Path) -> None:
    folder = shared / "conformance/dsse/derived"
    cases = _derived_cases(shared)
    assert len(cases) >= 19
    outcomes = []
    for case in cases:
        try:
            _verify_case(folder, case)
            outcome = "valid"
        except VerificationError:
            outcome = "fail"
        outcomes.append((case["file"], outcome, case["expect"]))
    wrong = [o for o in outcomes if o[1] != o[2]]
    assert wrong == []


def test_url_safe_and_unpadded_base64_are_accepted(tmp_path: Path) -> None:
    signer = keys.load_signer(keys.generate(tmp_path, "k")[0])
    envelope = dsse.sign("text/plain", b"\xfb\xff payload with bytes that need + and /", [signer])
    document = json.loads(envelope.to_json())
    for field in ("payload",):
        raw = base64.b64decode(document[field])
        document[field] = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    parsed = dsse.parse(json.dumps(document).encode())
    assert parsed == envelope


def test_mixed_alphabets_are_refused() -> None:
    with pytest.raises(VerificationError, match="mixes base64 alphabets"):
        dsse.parse(b'{"payload": "ab+_", "payloadType": "x", "signatures": []}')
