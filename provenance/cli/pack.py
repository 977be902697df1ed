"""``prov pack``: an evidence pack an auditor verifies and diffs with nothing else."""

from __future__ import annotations

from pathlib import Path

import click

from provenance.cli._options import resolve_store_path, store_option


@click.command()
@click.argument("attestation", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="The pack to write (a tar file, e.g. evidence.tar).",
)
@click.option(
    "--key",
    "key_paths",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="A public key the attestation verifies with (repeat; packed with it).",
)
@click.option("--threshold", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--cert-identity", help="Sigstore: the signer's identity (SAN).")
@click.option("--cert-oidc-issuer", help="Sigstore: the identity's OIDC issuer.")
@click.option("--repository", metavar="OWNER/NAME", help="Sigstore: the GitHub repository.")
@click.option("--ref", help="Sigstore: the git ref the workflow ran on.")
@click.option(
    "--trusted-root",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Sigstore trusted_root.json to pack [default: production, shipped with sigstore].",
)
@click.option(
    "--tsa-certs",
    type=click.Path(path_type=Path, dir_okay=False),
    help="PEM chain of the TSA that timestamped the attestation (packed with it).",
)
@store_option
def pack(
    attestation: Path,
    output: Path,
    key_paths: tuple[Path, ...],
    threshold: int,
    cert_identity: str | None,
    cert_oidc_issuer: str | None,
    repository: str | None,
    ref: str | None,
    trusted_root: Path | None,
    tsa_certs: Path | None,
    store: Path | None,
) -> None:
    """Verify ATTESTATION, then write it with every blob it references and its trust material.

    The attestation must verify (with its blobs) before anything is written, so a pack is
    always verifiable: `prov verify --pack FILE` and `prov diff FILE ...` need nothing else.
    """
    from provenance.attest import keys, sigstore, timestamp
    from provenance.attest.envelope import read_attestation
    from provenance.cli.verify import _identity
    from provenance.errors import UsageError
    from provenance.store.objects import Store
    from provenance.store.pack import PackInput, PackPolicy, write_pack
    from provenance.verify.steps import verify as run

    blob_store = Store(resolve_store_path(store)).require()
    bundle = sigstore.is_bundle(read_attestation(attestation))
    identity = _identity(cert_identity, cert_oidc_issuer, repository, ref)
    if not bundle and not key_paths:
        raise UsageError("a DSSE attestation is packed with its public keys: pass --key PUB")
    if bundle and identity is None and not key_paths:
        raise UsageError(
            "a Sigstore bundle is packed with its identity policy",
            hint="pass --cert-identity and --cert-oidc-issuer, or --repository owner/name",
        )
    if bundle and trusted_root is None:
        trusted_root = sigstore.production_trusted_root_path()
    tsa = timestamp.TsaTrust.from_pem(tsa_certs) if tsa_certs else None
    report = run(
        attestation,
        [keys.load_verifier(path) for path in key_paths],
        threshold=threshold,
        store=blob_store,
        identity=identity,
        trusted_root=trusted_root,
        tsa=tsa,
    )
    assert report.snapshot is not None
    sidecar = timestamp.sidecar_path(attestation)
    manifest = write_pack(
        PackInput(
            attestation=attestation,
            kind="sigstore" if bundle else "dsse",
            snapshot=report.snapshot,
            policy=PackPolicy(
                threshold=threshold,
                identity=identity.identity if identity else None,
                issuer=identity.issuer if identity else None,
                repository=identity.repository if identity else None,
                ref=identity.ref if identity else None,
            ),
            keys=key_paths,
            trusted_root=trusted_root if bundle else None,
            tsa_chain=tsa_certs,
            timestamp=sidecar if not bundle and sidecar.is_file() else None,
        ),
        blob_store,
        output,
    )
    blobs = manifest.named("blob")
    click.echo(f"wrote {output}: {manifest.label} sha256:{manifest.snapshot_sha256}")
    click.echo(
        f"  {len(manifest.members)} member(s): attestation, {len(blobs)} blob(s) "
        f"({sum(b.size for b in blobs):,} bytes), {len(manifest.named('key'))} key(s)"
        + (", trusted root" if manifest.named("trusted-root") else "")
        + (", TSA chain" if manifest.named("tsa-chain") else "")
        + (", timestamp" if manifest.named("timestamp") else "")
    )
