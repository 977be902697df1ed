"""``prov-conformance``: the sigstore-conformance client protocol, verification half.

    prov-conformance verify-bundle --bundle F
        (--certificate-identity I --certificate-oidc-issuer O | --key PEM)
        [--trusted-root F] FILE_OR_sha256:DIGEST

Exit 0 when the bundle verifies, 1 when it does not (the reason on stderr), 2 on a usage error.
Without ``--trusted-root`` the production trust root shipped in the sigstore package is used,
so the run is offline. DSSE bundles also get the in-toto check: the artifact must be a subject.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from provenance.errors import ProvError


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
    from provenance.verify.bundle import verify_bundle_file

    try:
        verify_bundle_file(bundle_path, artifact, identity, issuer, key_path, trusted_root)
    except ProvError as error:
        click.echo(error.diagnostics(), err=True)
        sys.exit(error.exit_code)
    click.echo("OK")
