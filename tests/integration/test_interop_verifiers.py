"""prov's keyless bundles, checked by verifiers that are not prov: sigstore-js, the ``sigstore``
CLI and ``gh attestation verify``; its RFC 3161 tokens by ``openssl ts -verify``.

The bundle is a real prov attestation: ``prov snapshot``'s path (``take`` with the Sigstore
attester) signed by the local Sigstore instance, whose certificate carries the identity the
GitHub Action signs with (a workflow of ``example/project`` at a tag, GitHub's OIDC issuer, the
source-repository extensions). Each verifier must accept it and refuse it once tampered with.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from provenance._internal import canonical
from provenance._testing import schemes
from provenance._testing.sigstore import LocalSigstore
from provenance._testing.tsa import LocalTSA
from provenance.attest import sigstore
from provenance.capture.snapshot import take
from provenance.errors import VerificationError
from provenance.model import PREDICATE_TYPE
from provenance.store.objects import Store
from tests import verifiers
from tests.interop_corpus import CASES, CORPUS

IDENTITY = "https://github.com/example/project/.github/workflows/release.yml@refs/tags/v1.0"
ISSUER = "https://token.actions.githubusercontent.com"


@pytest.fixture
def tsa(tmp_path: Path) -> Iterator[LocalTSA]:
    (tmp_path / "tsa").mkdir()
    with LocalTSA(tmp_path / "tsa") as authority:
        yield authority


@pytest.fixture
def keyless(project: Path, make_repo, tmp_path: Path, tsa: LocalTSA) -> tuple[Path, Path, Path]:  # type: ignore[no-untyped-def]
    """(bundle, trusted root, artifact): a prov attestation from the local instance, with an
    RFC 3161 token, and the canonical snapshot bytes its subject digests."""
    from provenance import config as configuration
    from provenance.attest import timestamp

    instance = LocalSigstore(signer_identity=IDENTITY, issuer=ISSUER, tsa=tsa)
    repo = make_repo("code")
    repo.write("train.py", "steps = 390251\n")
    repo.commit("launcher")
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    attester = sigstore.SigstoreAttester(
        instance, timestamper=lambda signature: timestamp.request(tsa.url, signature)
    )
    result = take(
        configuration.load(project / "prov.toml"), Store(project / ".prov"), attester, label="v1.0"
    )
    root = instance.write_trusted_root(tmp_path / "trusted_root.json")
    _, payload, _ = sigstore.dsse_content(result.attestation.read_bytes())
    artifact = tmp_path / "v1.0.snapshot.json"
    artifact.write_bytes(canonical.dumps(json.loads(payload)["predicate"]))
    return result.attestation, root, artifact


def _tampered(bundle: Path) -> Path:
    """The same bundle with one bit of its DSSE signature flipped."""
    document = json.loads(bundle.read_bytes())
    signature = document["dsseEnvelope"]["signatures"][0]
    raw = bytearray(base64.b64decode(signature["sig"]))
    raw[-1] ^= 0x01
    signature["sig"] = base64.b64encode(bytes(raw)).decode()
    path = bundle.with_name("tampered.sigstore.json")
    path.write_text(json.dumps(document))
    return path


def test_prov_itself_accepts_the_bundle(keyless: tuple[Path, Path, Path]) -> None:
    bundle, root, _ = keyless
    policy = sigstore.IdentityPolicy(issuer=ISSUER, identity=IDENTITY)
    verified = sigstore.verify_bundle(bundle.read_bytes(), policy=policy, trusted_root=root)
    assert {t.source for t in verified.times} == {"timestamp authority", "transparency log"}


def test_sigstore_js_verifies_prov_bundles(keyless: tuple[Path, Path, Path]) -> None:
    bundle, root, _ = keyless
    ok, output = verifiers.run_sigstore_js(bundle, root, identity=IDENTITY, issuer=ISSUER)
    assert ok, output
    ok, output = verifiers.run_sigstore_js(
        _tampered(bundle), root, identity=IDENTITY, issuer=ISSUER
    )
    assert not ok and "FAIL" in output, output
    ok, output = verifiers.run_sigstore_js(bundle, root, identity=IDENTITY + "x", issuer=ISSUER)
    assert not ok and "identity" in output, output


def test_sigstore_cli_verifies_prov_bundles(keyless: tuple[Path, Path, Path]) -> None:
    bundle, root, artifact = keyless
    ok, output = verifiers.run_sigstore_cli(
        bundle, root, identity=IDENTITY, issuer=ISSUER, artifact=str(artifact)
    )
    assert ok, output
    ok, output = verifiers.run_sigstore_cli(
        _tampered(bundle), root, identity=IDENTITY, issuer=ISSUER, artifact=str(artifact)
    )
    assert not ok, output


def test_gh_attestation_verify_accepts_what_the_action_signs(
    keyless: tuple[Path, Path, Path],
) -> None:
    bundle, root, artifact = keyless
    ok, output = verifiers.run_gh(
        artifact, bundle, root, repository="example/project", predicate_type=PREDICATE_TYPE
    )
    assert ok, output
    ok, output = verifiers.run_gh(
        artifact,
        _tampered(bundle),
        root,
        repository="example/project",
        predicate_type=PREDICATE_TYPE,
    )
    assert not ok, output
    ok, output = verifiers.run_gh(
        artifact, bundle, root, repository="example/other", predicate_type=PREDICATE_TYPE
    )
    assert not ok, output


def test_openssl_verifies_the_bundles_timestamp(
    keyless: tuple[Path, Path, Path], tsa: LocalTSA, tmp_path: Path
) -> None:
    bundle, _, _ = keyless
    data = bundle.read_bytes()
    (token,) = sigstore.timestamp_tokens(data)
    signature = sigstore.bundle_signature(data)
    (tmp_path / "token.tsr").write_bytes(token)
    (tmp_path / "signature").write_bytes(signature)
    (tmp_path / "other").write_bytes(signature[:-1] + bytes([signature[-1] ^ 1]))
    from cryptography.hazmat.primitives import serialization

    (tmp_path / "root.pem").write_bytes(tsa.root.public_bytes(serialization.Encoding.PEM))

    def openssl(data_file: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                *("openssl", "ts", "-verify", "-in", "token.tsr", "-data", data_file),
                *("-CAfile", "root.pem", "-untrusted", str(tsa.directory / "tsa.pem")),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )

    verified = openssl("signature")
    assert verified.returncode == 0 and "Verification: OK" in verified.stdout, verified.stderr
    assert openssl("other").returncode != 0


# -- every signing scheme Fulcio certifies, end to end ----------------------------------------

# sigstore-js checks a DSSE signature with SHA-256 whatever the curve, and RSA as PKCS#1 v1.5:
# a P-384 / P-521 envelope signed by the registry's scheme (SHA-384 / SHA-512, as sigstore-go
# and sigstore-java sign) and an RSA-PSS one are outside what it verifies.
SIGSTORE_JS_SCHEMES = {"ecdsa-p256", "rsa-2048", "rsa-3072", "rsa-4096", "ed25519"}


@pytest.mark.parametrize("scheme", schemes.SCHEMES)
def test_every_registry_scheme_verifies_and_a_tampered_copy_does_not(
    scheme: str, tmp_path: Path
) -> None:
    """A keyless bundle whose ephemeral key is of ``scheme``: prov verifies it, and refuses it
    with one bit of the signature flipped; sigstore-js agrees for the schemes it implements."""
    from provenance.attest import statement as statements

    instance = LocalSigstore(signer_identity=IDENTITY, issuer=ISSUER, scheme=scheme)
    subject = {"name": "artifact.bin", "digest": {"sha256": "ab" * 32}}
    bundle = tmp_path / f"{scheme}.sigstore.json"
    bundle.write_bytes(instance.sign_dsse(statements.wrap([subject], "https://example/p", {})))
    root = instance.write_trusted_root(tmp_path / "trusted_root.json")
    policy = sigstore.IdentityPolicy(issuer=ISSUER, identity=IDENTITY)
    assert sigstore.verify_bundle(bundle.read_bytes(), policy=policy, trusted_root=root).times
    with pytest.raises(VerificationError, match=r"DSSE: invalid signature|signatures do not match"):
        sigstore.verify_bundle(_tampered(bundle).read_bytes(), policy=policy, trusted_root=root)
    if scheme in SIGSTORE_JS_SCHEMES:
        ok, output = verifiers.run_sigstore_js(bundle, root, identity=IDENTITY, issuer=ISSUER)
        assert ok, output


@pytest.mark.parametrize("scheme", schemes.SCHEMES)
def test_a_managed_key_of_every_scheme_verifies(scheme: str, tmp_path: Path) -> None:
    """A bundle signed with a managed key (no certificate) of ``scheme``: it verifies with that
    public key, and not with another key of the same scheme."""
    from provenance.attest import statement as statements

    instance = LocalSigstore()
    key, other = schemes.ephemeral(scheme), schemes.ephemeral(scheme)
    subject = {"name": "artifact.bin", "digest": {"sha256": "cd" * 32}}
    statement = statements.wrap([subject], "https://example/p", {})
    data = instance.sign_dsse_with_key(statement, key, hint="k1", scheme=scheme)
    root = instance.write_trusted_root(tmp_path / "trusted_root.json")
    verified = sigstore.verify_bundle(data, key=key.public_key(), trusted_root=root)
    assert verified.payload == statement and verified.times
    with pytest.raises(VerificationError, match=r"DSSE: invalid signature|do not match"):
        sigstore.verify_bundle(data, key=other.public_key(), trusted_root=root)


# -- the interop corpus: what the manifest says of sigstore-js, checked against sigstore-js ---

JS_CASES = [c for c in CASES if "sigstore-js" in c["accepted_by"] + c["refused_by"]]


@pytest.mark.parametrize("case", JS_CASES, ids=[c["id"] for c in JS_CASES])
def test_sigstore_js_verdicts_in_the_manifest_are_sigstore_js_verdicts(
    case: dict[str, Any],
) -> None:
    root = CORPUS / case["trusted_root"]
    ok, output = verifiers.run_sigstore_js(
        CORPUS / case["bundle"],
        root,
        identity=case.get("identity"),
        issuer=case.get("issuer"),
        artifact=CORPUS / case["artifact"] if case.get("artifact") else None,
        key=CORPUS / case["key"] if case.get("key") else None,
        without_logs=not json.loads(root.read_text()).get("tlogs"),
    )
    assert ok == ("sigstore-js" in case["accepted_by"]), output


PY_CASES = [
    c
    for c in CASES
    if "sigstore-python" in c["accepted_by"] + c["refused_by"] and c.get("artifact")
]


@pytest.mark.parametrize("case", PY_CASES, ids=[c["id"] for c in PY_CASES])
def test_sigstore_python_verdicts_in_the_manifest_are_the_sigstore_clis(
    case: dict[str, Any], tmp_path: Path
) -> None:
    bundle = tmp_path / "bundle.sigstore.json"
    bundle.write_bytes((CORPUS / case["bundle"]).read_bytes())
    ok, output = verifiers.run_sigstore_cli(
        bundle,
        CORPUS / case["trusted_root"],
        identity=case["identity"],
        issuer=case["issuer"],
        artifact=str(CORPUS / case["artifact"]),
    )
    assert ok == ("sigstore-python" in case["accepted_by"]), output
