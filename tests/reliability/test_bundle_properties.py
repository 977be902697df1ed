"""Property tests for Sigstore bundles and evidence-pack manifests.

* ``sigstore.is_bundle`` answers for any bytes and never raises; ``dsse_content`` and
  ``check_form`` raise nothing but ``VerificationError``; ``prov verify`` of any bundle-like
  file raises nothing but prov's errors; ``pack.Manifest.from_json`` raises nothing but
  ``ValueError`` (pydantic's ValidationError is one) and round-trips.
* A key written twice in any object of a bundle or a manifest is refused, whichever copy
  comes first and whatever it holds (as in DSSE envelopes).
* Every respelling protobuf JSON allows (key order, whitespace, wrapped base64, escapes) of a
  real bundle verifies: the spelling check refuses no valid bundle.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import tarfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from provenance.attest import sigstore
from provenance.errors import ProvError, VerificationError
from provenance.store import pack
from provenance.verify.steps import verify
from tests.reliability import figures
from tests.reliability.bundle_evidence import IDENTITY, ISSUER, Bundles, bundles
from tests.reliability.evidence import Evidence, run_cli
from tests.reliability.strategies import (
    bundle_documents,
    edited_bytes,
    edited_json,
    json_values,
    repeated_key,
)
from tests.reliability.test_properties import printable, ran

# A full verification per example: a smaller share of the CI budget (all of it under `make
# reliability`).
SLOW = settings(max_examples=settings().max_examples if figures.full() else 100)


@pytest.fixture(scope="module")
def b(evidence: Evidence) -> Bundles:
    return bundles(evidence)


def _bundle_inputs(b: Bundles) -> st.SearchStrategy[bytes]:
    real = b.data("m1")
    return (
        st.binary(max_size=300)
        | bundle_documents().map(lambda d: json.dumps(d).encode())
        | edited_json(b.document("m1")).map(lambda d: json.dumps(d).encode())
        | edited_bytes(real)
    )


def test_is_bundle_answers_for_any_bytes(b: Bundles) -> None:
    @given(_bundle_inputs(b) | edited_bytes(b.evidence.attestation("m1").read_bytes()))
    @example(b"[" * 100_000)
    @example(b'{"mediaType": 7, "dsseEnvelope": null}')
    @example(b"\xff\xfe{\x00}\x00")
    def check(data: bytes) -> None:
        ran("bundle: is_bundle of anything")
        assert sigstore.is_bundle(data) in (True, False)

    check()


def test_bundle_readers_raise_only_verification_errors(b: Bundles) -> None:
    @given(_bundle_inputs(b))
    @example(b'{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","dsseEnvelope":{}}')
    @example(b'{"dsseEnvelope":{"payload":"\\ud800","payloadType":"x","signatures":[]}}')
    def check(data: bytes) -> None:
        ran("bundle: dsse_content and check_form")
        for read in (sigstore.dsse_content, sigstore.check_form, sigstore.timestamp_tokens):
            try:
                read(data)
            except VerificationError as e:
                printable(e)

    check()


def test_verifying_any_bundle_like_file_raises_only_prov_errors(b: Bundles, tmp_path: Path) -> None:
    path = tmp_path / "m1.sigstore.json"
    policy = sigstore.IdentityPolicy(issuer=ISSUER, identity=IDENTITY)

    @given(_bundle_inputs(b))
    def check(data: bytes) -> None:
        ran("bundle: prov verify of bundle-like files")
        path.write_bytes(data)
        try:
            verify(path, [], identity=policy, trusted_root=b.trusted_root, expect_label="m1")
        except ProvError as e:
            printable(e)

    check()


def test_a_repeated_key_anywhere_in_a_bundle_is_refused(b: Bundles, tmp_path: Path) -> None:
    path = tmp_path / "m1.sigstore.json"
    policy = sigstore.IdentityPolicy(issuer=ISSUER, identity=IDENTITY)

    @SLOW
    @given(repeated_key(b.document("m1")))
    def check(case: tuple[bytes, str]) -> None:
        ran("bundle: repeated keys refused")
        data, key = case
        path.write_bytes(data)
        with pytest.raises(VerificationError) as caught:
            verify(path, [], identity=policy, trusted_root=b.trusted_root, expect_label="m1")
        assert f"repeats the key {key!r}" in caught.value.message

    check()


def _respelled(document: Any, rng: random.Random) -> str:
    """The same bundle as another protobuf-JSON spelling: key order, whitespace, escapes,
    base64 wrapped at any width."""

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            items = list(node.items())
            rng.shuffle(items)
            return {k: walk(v) for k, v in items}
        if isinstance(node, list):
            return [walk(v) for v in node]
        if isinstance(node, str) and len(node) > 40 and _is_base64(node) and rng.random() < 0.5:
            width = rng.choice([4, 16, 60, 64, 76])
            return "\n".join(node[i : i + width] for i in range(0, len(node), width))
        return node

    indent = rng.choice([None, 0, 1, 2, "\t"])
    separators = rng.choice([(",", ":"), (", ", ": "), (" ,", " : ")]) if indent is None else None
    return json.dumps(walk(document), indent=indent, separators=separators,
                      ensure_ascii=rng.random() < 0.5)  # fmt: skip


def _is_base64(text: str) -> bool:
    try:
        return base64.b64encode(base64.b64decode(text, validate=True)).decode() == text
    except ValueError:
        return False


def test_every_valid_respelling_of_a_bundle_verifies(b: Bundles, tmp_path: Path) -> None:
    policy = sigstore.IdentityPolicy(issuer=ISSUER, identity=IDENTITY)

    @SLOW
    @given(st.sampled_from(["m1", "m2"]), st.randoms(use_true_random=False))
    def check(name: str, rng: random.Random) -> None:
        ran("bundle: equivalent respellings verify")
        path = tmp_path / f"{name}.sigstore.json"
        path.write_text(_respelled(copy.deepcopy(b.document(name)), rng))
        report = verify(path, [], identity=policy, trusted_root=b.trusted_root)
        assert report.ok and report.snapshot is not None and report.snapshot.label == name

    check()


# -- evidence-pack manifests ------------------------------------------------------------------


@pytest.fixture(scope="module")
def manifest(b: Bundles, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The manifest of a real pack of the keyless m1 bundle, made by `prov pack`."""
    out = tmp_path_factory.mktemp("pack") / "m1.tar"
    code, _, err, unexpected = run_cli(
        "pack", str(b.path("m1")), "-o", str(out), "--cert-identity", IDENTITY,
        "--cert-oidc-issuer", ISSUER, "--trusted-root", str(b.trusted_root),
        "--tsa-certs", str(b.tsa_chain), "--store", str(b.evidence.store),
    )  # fmt: skip
    assert code == 0 and unexpected is None, err
    with tarfile.open(out) as tar:
        member = tar.extractfile(pack.MANIFEST)
        assert member is not None
        return member.read()


def test_manifest_parser_raises_only_value_errors_and_round_trips(manifest: bytes) -> None:
    document = json.loads(manifest)

    @given(
        st.binary(max_size=200)
        | edited_bytes(manifest)
        | edited_json(document).map(lambda d: json.dumps(d).encode())
        | json_values().map(lambda v: json.dumps(v).encode())
    )
    @example(b'{"schema":' + b"[" * 100_000)
    @example(b"[" * 100_000 + b"]" * 100_000)
    def check(data: bytes) -> None:
        ran("pack: manifest of anything")
        try:
            parsed = pack.Manifest.from_json(data)
        except ValueError:
            return
        assert pack.Manifest.from_json(parsed.to_json()) == parsed

    check()


def test_a_repeated_key_anywhere_in_a_manifest_is_refused(manifest: bytes) -> None:
    @SLOW
    @given(repeated_key(json.loads(manifest)))
    def check(case: tuple[bytes, str]) -> None:
        ran("pack: repeated keys refused")
        data, key = case
        with pytest.raises(ValueError, match=f"repeats the key {key!r}".replace("\\", "\\\\")):
            pack.Manifest.from_json(data)

    check()
