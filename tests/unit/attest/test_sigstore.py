"""Keyless signing up to the network boundary, and bundle verification through ``prov verify``.

The signer is ``LocalSigstore``: a CA, CT log and transparency log made of keys generated here,
with the envelope signed by sigstore-python's DSSE code and the bundle parsed back by its
``Bundle``. The verifier is the real one, given that instance's trusted_root.json. What crosses
the network in production (Fulcio, Rekor, the OIDC token) is exercised by the ``online`` test.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from provenance._testing.sigstore import LocalSigstore
from provenance._testing.tsa import LocalTSA
from provenance.attest import sigstore
from provenance.attest import statement as statements
from provenance.capture.snapshot import take
from provenance.errors import SigningError, UsageError, VerificationError
from provenance.store.objects import Store

IDENTITY = "https://github.com/example/project/.github/workflows/release.yml@refs/tags/v1.0"
ISSUER = "https://token.actions.githubusercontent.com"


@pytest.fixture
def instance() -> LocalSigstore:
    return LocalSigstore(signer_identity=IDENTITY, issuer=ISSUER)


@pytest.fixture
def keyless_project(
    project: Path, make_repo, instance: LocalSigstore, tmp_path: Path
) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """A project snapshotted through SigstoreAttester + LocalSigstore; returns (bundle, root)."""
    from provenance import config as configuration

    repo = make_repo("code")
    repo.write("train.py", "steps = 390251\n")
    repo.commit("launcher")
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    config = configuration.load(project / "prov.toml")
    result = take(
        config, Store(project / ".prov"), sigstore.SigstoreAttester(instance), label="v1.0"
    )
    root = instance.write_trusted_root(tmp_path / "trusted_root.json")
    return result.attestation, root


def test_keyless_attestation_is_a_bundle_with_our_statement_bytes(
    keyless_project: tuple[Path, Path],
) -> None:
    bundle, _ = keyless_project
    assert bundle.name == "v1.0.sigstore.json"
    data = bundle.read_bytes()
    assert json.loads(data)["mediaType"] == "application/vnd.dev.sigstore.bundle.v0.3+json"
    assert data.count(b"\n") == 1  # one line: a valid *.intoto.jsonl as well
    payload_type, payload, signatures = sigstore.dsse_content(data)
    assert payload_type == statements.PAYLOAD_TYPE and len(signatures) == 1
    assert statements.parse(payload).predicate["label"] == "v1.0"


def test_prov_verify_bundle(
    keyless_project: tuple[Path, Path], prov: Callable[..., Result]
) -> None:
    bundle, root = keyless_project
    result = prov(
        "verify", str(bundle), "--cert-identity", IDENTITY, "--cert-oidc-issuer", ISSUER,
        "--trusted-root", str(root), "--store", ".prov",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "[ok  ] 1. bundle: Sigstore bundle application/vnd.dev.sigstore.bundle.v0.3+json" in (
        result.output
    )
    assert f"[ok  ] 2. bundle: signed by identity {IDENTITY} (issuer {ISSUER})" in result.output
    assert "(transparency log)" in result.output
    for step in ("4. statement", "5. subject", "6. blobs"):
        assert f"[ok  ] {step}" in result.output

    by_repo = prov(
        "verify", str(bundle), "--repository", "example/project", "--ref", "refs/tags/v1.0",
        "--trusted-root", str(root),
    )  # fmt: skip
    assert by_repo.exit_code == 0, by_repo.output


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (
            ["--cert-identity", IDENTITY.replace("v1.0", "v2.0"), "--cert-oidc-issuer", ISSUER],
            "SANs",
        ),
        (["--cert-identity", IDENTITY[:-4], "--cert-oidc-issuer", ISSUER], "SANs"),
        (["--cert-identity", IDENTITY, "--cert-oidc-issuer", ISSUER + "/"], "OIDCIssuer"),
        (["--repository", "example/other"], "expected https://github.com/example/other"),
    ],
    ids=["wrong-identity", "identity-prefix", "issuer-trailing-slash", "wrong-repository"],
)
def test_prov_verify_bundle_rejects_another_identity(
    keyless_project: tuple[Path, Path], prov: Callable[..., Result], args: list[str], reason: str
) -> None:
    bundle, root = keyless_project
    result = prov("verify", str(bundle), *args, "--trusted-root", str(root))
    assert result.exit_code == 1
    assert "[FAIL] 2. bundle" in result.output and reason in result.stderr


def test_bundle_against_another_trust_root_fails(
    keyless_project: tuple[Path, Path], prov: Callable[..., Result]
) -> None:
    bundle, _ = keyless_project
    production = prov(
        "verify", str(bundle), "--cert-identity", IDENTITY, "--cert-oidc-issuer", ISSUER
    )
    assert production.exit_code == 1
    assert "failed to build timestamp certificate chain" in production.stderr


def test_tampered_bundle_fails(
    keyless_project: tuple[Path, Path], prov: Callable[..., Result]
) -> None:
    bundle, root = keyless_project
    document = json.loads(bundle.read_bytes())
    statement = json.loads(
        sigstore.dsse_content(bundle.read_bytes())[1]
    )  # re-signing is impossible: change the label and put it back
    statement["predicate"]["label"] = "v9.9"
    import base64

    document["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    bundle.write_text(json.dumps(document))
    result = prov(
        "verify", str(bundle), "--cert-identity", IDENTITY, "--cert-oidc-issuer", ISSUER,
        "--trusted-root", str(root),
    )  # fmt: skip
    assert result.exit_code == 1 and "DSSE: invalid signature" in result.stderr


def test_bundle_needs_an_identity_policy(
    keyless_project: tuple[Path, Path], prov: Callable[..., Result]
) -> None:
    bundle, root = keyless_project
    result = prov("verify", str(bundle), "--trusted-root", str(root))
    assert result.exit_code == 2 and "no trust policy" in result.stderr
    only_identity = prov("verify", str(bundle), "--cert-identity", IDENTITY)
    assert only_identity.exit_code == 2 and "needs --cert-oidc-issuer" in only_identity.stderr
    with pytest.raises(UsageError):
        sigstore.IdentityPolicy(issuer=ISSUER)


def test_timestamp_inside_the_bundle(
    project: Path, make_repo, tmp_path: Path, prov: Callable[..., Result]
) -> None:  # type: ignore[no-untyped-def]
    from provenance import config as configuration
    from provenance.attest import timestamp

    repo = make_repo("code")
    repo.write("train.py", "x = 1\n")
    repo.commit()
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    with LocalTSA(tmp_path / "tsa", name="TSA A") as tsa:
        instance = LocalSigstore(signer_identity=IDENTITY, issuer=ISSUER, tsa=tsa)
        attester = sigstore.SigstoreAttester(
            instance, timestamper=lambda sig: timestamp.request(tsa.url, sig)
        )
        result = take(
            configuration.load(project / "prov.toml"), Store(".prov"), attester, label="v1"
        )
        root = instance.write_trusted_root(tmp_path / "root.json")
    data = result.attestation.read_bytes()
    assert len(sigstore.timestamp_tokens(data)) == 1
    verified = prov(
        "verify", str(result.attestation), "--cert-identity", IDENTITY, "--cert-oidc-issuer",
        ISSUER, "--trusted-root", str(root), "--tsa-certs", str(tsa.chain_pem),
    )  # fmt: skip
    assert verified.exit_code == 0, verified.output
    assert "(timestamp authority)" in verified.output  # counted by Sigstore's own check too
    assert "[ok  ] 3. timestamp: time-anchored: existed no later than" in verified.output

    with LocalTSA(tmp_path / "tsa-b", name="TSA B") as other:
        wrong = prov(
            "verify", str(result.attestation), "--cert-identity", IDENTITY,
            "--cert-oidc-issuer", ISSUER, "--trusted-root", str(root),
            "--tsa-certs", str(other.chain_pem),
        )  # fmt: skip
    assert wrong.exit_code == 1 and "issued by another TSA" in wrong.stderr


def _statement(name: str) -> bytes:
    subject = {"name": name, "digest": {"sha256": "a" * 64}}
    document = {"_type": statements.STATEMENT_TYPE, "subject": [subject], "predicateType": "p"}
    return json.dumps({**document, "predicate": {}}, separators=(",", ":")).encode()


def test_attester_refuses_a_bundle_over_other_bytes(instance: LocalSigstore) -> None:
    class Substituting:
        def sign_dsse(self, statement: bytes) -> bytes:
            return instance.sign_dsse(statement.replace(b'"name":"v1"', b'"name":"v2"'))

        def identity(self) -> str:
            return IDENTITY

    statement = _statement("v1")
    assert sigstore.SigstoreAttester(instance).attest(statement)
    with pytest.raises(SigningError, match="does not carry the statement bytes"):
        sigstore.SigstoreAttester(Substituting()).attest(statement)


def test_a_pack_never_brings_its_own_trust_root(
    keyless_project: tuple[Path, Path], prov: Callable[..., Result], tmp_path: Path
) -> None:
    """A pack signed by a Sigstore instance of the packer's own, with that instance's root
    inside: the auditor's identity options are checked against the auditor's root (the
    production one by default), never the pack's, unless the auditor asks with --trust-pack."""
    import hashlib

    bundle, root = keyless_project
    pack = tmp_path / "e.tar"
    packed = prov(
        "pack", str(bundle), "-o", str(pack), "--cert-identity", IDENTITY,
        "--cert-oidc-issuer", ISSUER, "--trusted-root", str(root), "--store", ".prov",
    )  # fmt: skip
    assert packed.exit_code == 0, packed.output
    identity = ("--cert-identity", IDENTITY, "--cert-oidc-issuer", ISSUER)

    bare = prov("verify", str(pack))
    assert bare.exit_code == 2 and "--trust-pack" in bare.output
    refused = prov("verify", str(pack), *identity)
    assert refused.exit_code == 1, refused.output
    assert "[FAIL] 2. bundle" in refused.output and "from the pack" not in refused.output
    own_root = prov("verify", str(pack), *identity, "--trusted-root", str(root))
    assert own_root.exit_code == 0, own_root.output
    opted = prov("verify", str(pack), "--trust-pack")
    assert opted.exit_code == 0, opted.output
    fingerprint = hashlib.sha256(root.read_bytes()).hexdigest()
    assert f"trusted from the pack (--trust-pack): Sigstore identity {IDENTITY}" in opted.output
    assert f"Sigstore trusted root sha256:{fingerprint}" in opted.output
    both = prov("verify", str(pack), "--trust-pack", *identity)
    assert both.exit_code == 2 and "exclude each other" in both.output


def test_verify_bundle_api_needs_exactly_one_kind_of_trust() -> None:
    with pytest.raises(UsageError):
        sigstore.verify_bundle(b"{}")
    with pytest.raises(VerificationError, match="not JSON"):
        sigstore.dsse_content(b"not json")


@pytest.mark.online
def test_keyless_signing_against_sigstore_staging(tmp_path: Path) -> None:
    """Fulcio + Rekor for real: needs the internet and an ambient OIDC token (CI)."""
    if not os.environ.get("ACTIONS_ID_TOKEN_REQUEST_URL"):
        pytest.skip("needs GitHub Actions' ambient OIDC credential")
    signer = sigstore.KeylessSigner(staging=True)
    statement = _statement("x")
    bundle = sigstore.SigstoreAttester(signer).attest(statement)
    staging_root = Path(sigstore.production_trusted_root_path()).parent.with_name(
        "https%3A%2F%2Ftuf-repo-cdn.sigstage.dev"
    )
    verified = sigstore.verify_bundle(
        bundle,
        policy=sigstore.IdentityPolicy(issuer=ISSUER, identity=signer.identity()),
        trusted_root=staging_root / "trusted_root.json",
    )
    assert verified.payload == statement


def test_help_does_not_import_sigstore() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from click.testing import CliRunner; from provenance.cli import cli; "
        "CliRunner().invoke(cli, ['--help']); "
        "print(sorted(m for m in ('sigstore', 'rfc3161_client', 'httpx', 'tarfile') "
        "if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "[]", result.stdout + result.stderr


def test_a_certificate_with_an_rsa_key_is_a_verification_error_not_a_traceback(
    tmp_path: Path, instance: LocalSigstore
) -> None:
    import base64

    from click.testing import CliRunner
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from provenance.cli import cli

    subject = {"name": "prov-snapshot:m1", "digest": {"sha256": "00" * 32}}
    bundle = json.loads(instance.sign_dsse(statements.wrap([subject], "x", {"a": 1})))
    certificate = instance.issue(rsa.generate_private_key(65537, 2048).public_key())  # type: ignore[arg-type]
    der = certificate.public_bytes(serialization.Encoding.DER)
    bundle["verificationMaterial"]["certificate"]["rawBytes"] = base64.b64encode(der).decode()
    path = tmp_path / "m1.sigstore.json"
    path.write_text(json.dumps(bundle))
    root = instance.write_trusted_root(tmp_path / "root.json")
    result = CliRunner().invoke(
        cli, ["verify", str(path), "--trusted-root", str(root), "--repository", "example/project"]
    )
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)
    # The RSA key is checked by its own scheme (issue 15): the ECDSA signature is not its.
    assert "step 2 (bundle) failed" in result.stderr
    assert "DSSE: invalid signature (RSA 2048 key)" in result.stderr
