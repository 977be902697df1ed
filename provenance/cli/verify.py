"""``prov verify``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, assert_never

import click

from provenance.cli._options import Format, format_option
from provenance.cli.oci import plain_http_option
from provenance.cli.witness import count_witnesses, witness_options

if TYPE_CHECKING:
    from provenance.attest.sigstore import IdentityPolicy
    from provenance.store.pack import OpenedPack


@click.command()
@click.argument("attestation_arg", required=False, metavar="ATTESTATION | oci://IMAGE")
@click.option(
    "--key",
    "key_paths",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="A trusted public key (repeat for several).",
)
@click.option(
    "--threshold",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="How many distinct trusted keys must have signed.",
)
@click.option("--cert-identity", help="Sigstore: the signer's identity (SAN), matched exactly.")
@click.option(
    "--cert-oidc-issuer",
    help="Sigstore: the identity's OIDC issuer, matched exactly "
    "[default with --repository: GitHub Actions].",
)
@click.option(
    "--repository",
    metavar="OWNER/NAME",
    help="Sigstore: signed by a GitHub Actions workflow of this repository.",
)
@click.option("--ref", help="Sigstore: ...and on this git ref (e.g. refs/tags/v1.0).")
@click.option(
    "--trusted-root",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Sigstore trusted_root.json [default: production, shipped with sigstore; offline].",
)
@click.option(
    "--tsa-certs",
    type=click.Path(path_type=Path, dir_okay=False),
    help="PEM chain of the timestamp authority whose RFC 3161 token must verify.",
)
@click.option(
    "--store",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="PROV_STORE",
    help="Also check every referenced blob in this store [env PROV_STORE].",
)
@click.option(
    "--pack",
    "pack_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="An evidence pack: its attestation, blobs, keys and trust root (no store, no network).",
)
@click.option(
    "--expect-label",
    metavar="LABEL",
    help="The label the attestation must be signed for [default: from its file name, "
    "LABEL.intoto.jsonl; for oci://, from each attached file's name].",
)
@witness_options
@format_option
@plain_http_option
@click.pass_context
def verify(
    ctx: click.Context,
    attestation_arg: str | None,
    key_paths: tuple[Path, ...],
    threshold: int,
    cert_identity: str | None,
    cert_oidc_issuer: str | None,
    repository: str | None,
    ref: str | None,
    trusted_root: Path | None,
    tsa_certs: Path | None,
    store: Path | None,
    pack_path: Path | None,
    expect_label: str | None,
    output_format: str,
    plain_http: bool,
    witness_paths: tuple[Path, ...],
    require_witnesses: int | None,
    witness_policy: Path | None,
) -> None:
    """Verify an attestation offline, step by step. Exit 0 verified, 1 not.

    ATTESTATION is a DSSE file (*.intoto.jsonl; trust: --key), a Sigstore bundle
    (*.sigstore.json; trust: --cert-identity + --cert-oidc-issuer, or --repository), or
    an evidence pack (with --pack, or given directly), which brings its own trust material.
    With oci://REGISTRY/REPOSITORY:TAG, every attestation attached to that image (OCI
    referrers) is fetched and verified.
    """
    from dataclasses import replace

    from provenance.attest import keys, sigstore
    from provenance.attest.timestamp import TsaTrust
    from provenance.errors import UsageError, VerificationError
    from provenance.store.objects import Store
    from provenance.store.pack import is_pack, open_pack
    from provenance.verify.steps import Report, label_from_filename
    from provenance.verify.steps import verify as run

    if attestation_arg is not None and attestation_arg.startswith("oci://"):
        from provenance.cli.oci import verify_image

        if not key_paths:
            raise UsageError(
                "no trusted keys: pass --key PUB for each signer you trust",
                hint="an empty policy would trust anything, so prov refuses it",
            )
        verify_image(
            ctx,
            attestation_arg,
            [keys.load_verifier(path) for path in key_paths],
            threshold=threshold,
            store=Store(store).require() if store else None,
            output_format=output_format,
            plain_http=plain_http,
            expect_label=expect_label,
        )
        return
    attestation = Path(attestation_arg) if attestation_arg is not None else None
    if attestation is not None and pack_path is None and is_pack(attestation):
        attestation, pack_path = None, attestation
    if attestation is None and pack_path is None:
        raise UsageError("name the attestation to verify, or an evidence pack with --pack")
    if pack_path is not None and store is not None:
        raise UsageError("--pack and --store exclude each other: the pack holds the blobs")

    opened: OpenedPack | None = open_pack(pack_path) if pack_path is not None else None
    notes: list[str] = []
    try:
        if opened is not None:
            target = _pack_attestation(opened, attestation)
            blob_store: Store | None = opened.store
        else:
            assert attestation is not None
            target = attestation
            blob_store = Store(store).require() if store else None
        identity = _identity(cert_identity, cert_oidc_issuer, repository, ref)
        if opened is not None:
            if not key_paths and opened.keys:
                key_paths = tuple(opened.keys)
                notes.append("trusted keys: from the pack (compare with the publisher's)")
            if identity is None and opened.manifest.kind == "sigstore":
                identity = _pack_identity(opened)
                if identity is not None:
                    notes.append(f"identity policy: from the pack: {identity.describe()}")
            if trusted_root is None and opened.trusted_root is not None:
                trusted_root = opened.trusted_root
                notes.append("Sigstore trust root: from the pack")
            if tsa_certs is None and opened.tsa_chain is not None:
                tsa_certs = opened.tsa_chain
                notes.append("TSA chain: from the pack")
        if not key_paths and identity is None:
            raise UsageError(
                "no trust policy: pass --key PUB for each signer you trust, or for a Sigstore "
                "bundle --cert-identity and --cert-oidc-issuer (or --repository owner/name)",
                hint="an empty policy would trust anything, so prov refuses it",
            )
        if identity is not None and not sigstore.is_bundle(_peek(target)):
            raise UsageError(
                f"{target} is a DSSE envelope: identity options apply to Sigstore bundles",
                hint="verify it with --key PUB",
            )
        trusted = [keys.load_verifier(path) for path in key_paths]
        if opened is not None:  # name packed keys by pack and keyid, not by temporary path
            trusted = [
                replace(
                    k, source=f"{opened.source.name}:keys/{Path(k.source).name} ({k.keyid[:16]})"
                )
                if Path(k.source).is_relative_to(opened.root)
                else k
                for k in trusted
            ]
        tsa = TsaTrust.from_pem(tsa_certs) if tsa_certs else None
        try:
            report: Report = run(
                target,
                trusted,
                threshold=threshold,
                store=blob_store,
                identity=identity,
                trusted_root=trusted_root,
                tsa=tsa,
                expect_label=expect_label or label_from_filename(target),
            )
            error = None
            count_witnesses(
                report, trusted, target, witness_paths, require_witnesses, witness_policy
            )
        except VerificationError as e:
            if not isinstance(e.report, Report):
                raise
            report, error = e.report, e
    finally:
        if opened is not None:
            opened.close()
    if pack_path is not None:
        report.path = f"{pack_path} ({report.path.rsplit('/', 1)[-1]})"

    fmt = Format(output_format)
    if fmt is Format.JSON:
        import json

        document = report.to_json()
        document["trust_notes"] = notes
        click.echo(json.dumps(document, indent=2))
    elif fmt is Format.TEXT:
        for note in notes:
            click.echo(f"note: {note}")
        for step in report.steps:
            mark = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[step.status]
            click.echo(f"[{mark}] {step.number}. {step.name}: {step.detail}")
        if report.observers is not None:
            from provenance.render.witnesses import observer_lines

            click.echo("evidence per capture:")
            click.echo("\n".join(observer_lines(report.observers)))
        if report.snapshot is not None and error is None:
            snap = report.snapshot
            click.echo(
                f"verified: {snap.label} ({len(snap.captures)} captures, created {snap.created})"
            )
    else:
        assert_never(fmt)
    if error is not None:
        click.echo(error.diagnostics(), err=True)
        ctx.exit(error.exit_code)


def _identity(
    identity: str | None, issuer: str | None, repository: str | None, ref: str | None
) -> IdentityPolicy | None:
    from provenance.attest.sigstore import GITHUB_ISSUER, IdentityPolicy
    from provenance.errors import UsageError

    if not (identity or issuer or repository or ref):
        return None
    if repository and not issuer:
        issuer = GITHUB_ISSUER
    if not issuer:
        raise UsageError("--cert-identity needs --cert-oidc-issuer (both are matched exactly)")
    return IdentityPolicy(issuer=issuer, identity=identity, repository=repository, ref=ref)


def _pack_identity(opened: OpenedPack) -> IdentityPolicy | None:
    policy = opened.manifest.policy
    if not policy.issuer:
        return None
    return _identity(policy.identity, policy.issuer, policy.repository, policy.ref)


def _pack_attestation(opened: OpenedPack, attestation: Path | None) -> Path:
    from provenance.errors import UsageError

    inside = opened.attestation
    if attestation is not None and attestation.read_bytes() != inside.read_bytes():
        raise UsageError(
            f"{attestation} is not the attestation in {opened.source}",
            hint="verify the pack alone (prov verify --pack FILE), or the attestation alone",
        )
    return inside


def _peek(path: Path) -> bytes:
    from provenance.attest.envelope import read_attestation

    return read_attestation(path)
