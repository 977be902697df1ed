"""``prov-conformance``: the sigstore-conformance client protocol, verification half.

    prov-conformance verify-bundle --bundle F
        (--certificate-identity I --certificate-oidc-issuer O | --key PEM)
        [--trusted-root F] FILE_OR_sha256:DIGEST

Exit 0 when the bundle verifies, 1 when it does not (the reason on stderr), 2 on a usage error.
Without ``--trusted-root`` the production trust root shipped in the sigstore package is used,
so the run is offline. DSSE bundles also get the in-toto check: the artifact must be a subject.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from provenance.errors import ProvError

_DIGEST = re.compile(r"^sha256:([0-9a-f]{64})$")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """A sigstore-conformance client backed by prov's bundle verifier."""


@main.command("verify-bundle")
@click.option("--bundle", "bundle_path", required=True, type=click.Path(path_type=Path))
@click.option("--certificate-identity", "identity")
@click.option("--certificate-oidc-issuer", "issuer")
@click.option("--key", "key_path", type=click.Path(path_type=Path))
@click.option("--trusted-root", type=click.Path(path_type=Path))
@click.argument("artifact")
def verify_bundle(
    bundle_path: Path,
    identity: str | None,
    issuer: str | None,
    key_path: Path | None,
    trusted_root: Path | None,
    artifact: str,
) -> None:
    """Verify BUNDLE for ARTIFACT (a file, or sha256:HEX)."""
    try:
        _verify(bundle_path, identity, issuer, key_path, trusted_root, artifact)
    except ProvError as error:
        click.echo(error.diagnostics(), err=True)
        sys.exit(error.exit_code)
    click.echo("OK")


def _verify(
    bundle_path: Path,
    identity: str | None,
    issuer: str | None,
    key_path: Path | None,
    trusted_root: Path | None,
    artifact: str,
) -> None:
    from provenance.attest import sigstore
    from provenance.digest import Digest, sha256_bytes
    from provenance.errors import UsageError

    if key_path is not None and (identity or issuer):
        raise UsageError("--key excludes --certificate-identity / --certificate-oidc-issuer")
    if key_path is None and not (identity and issuer):
        raise UsageError("pass --certificate-identity and --certificate-oidc-issuer, or --key")
    match = _DIGEST.match(artifact)
    content: bytes | None = None
    if match:
        digest = Digest("sha256", match.group(1))
    else:
        try:
            content = Path(artifact).read_bytes()
        except OSError as e:
            raise UsageError(f"cannot read the artifact {artifact}", cause=str(e)) from e
        digest = sha256_bytes(content)
    try:
        data = bundle_path.read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read the bundle {bundle_path}", cause=str(e)) from e

    result = sigstore.verify_bundle(
        data,
        policy=sigstore.IdentityPolicy(issuer=issuer, identity=identity) if issuer else None,
        key=sigstore.load_public_key(key_path) if key_path else None,
        trusted_root=trusted_root,
        artifact=content if content is not None else digest,
        origin=str(bundle_path),
    )
    if result.payload is not None:
        sigstore.check_subject_digest(result.payload_type, result.payload, digest)
