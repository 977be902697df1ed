"""``prov snapshot``."""

from __future__ import annotations

from pathlib import Path

import click

from provenance.cli._options import config_option, resolve_store_path, store_option

PARTIAL_EXIT = 4


@click.command()
@config_option
@click.option("--label", help="Name of this milestone [default: snapshot-<UTC time>].")
@click.option(
    "--key",
    "key_paths",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Sign with this private key (repeat for several signers).",
)
@click.option(
    "--sigstore",
    "use_sigstore",
    is_flag=True,
    help="Sign keyless with Sigstore (ambient CI OIDC credential, else the browser flow).",
)
@click.option(
    "--sigstore-staging", is_flag=True, help="With --sigstore: use Sigstore's staging instance."
)
@click.option(
    "--timestamp",
    "timestamp_url",
    metavar="URL",
    help="Also get an RFC 3161 token over the signature from this timestamp authority.",
)
@click.option(
    "--no-sign", is_flag=True, help="Write the statement unsigned (a dry run; verify rejects it)."
)
@store_option
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Attestation file [default: attestations/LABEL.intoto.jsonl].",
)
@click.option(
    "--strict", is_flag=True, help="Exit 1 when any source failed (default: exit 4, partial)."
)
@click.pass_context
def snapshot(
    ctx: click.Context,
    config_path: Path,
    label: str | None,
    key_paths: tuple[Path, ...],
    use_sigstore: bool,
    sigstore_staging: bool,
    timestamp_url: str | None,
    no_sign: bool,
    store: Path | None,
    output: Path | None,
    strict: bool,
) -> None:
    """Capture the sources, sign, write the attestation.

    Every source in prov.toml is captured into the store; the snapshot is signed
    as an in-toto statement and written to attestations/LABEL.intoto.jsonl.

    Exit 0 when every source was captured, 4 when the snapshot was written but some
    sources failed (their failure is recorded as evidence), 1 for that with --strict.
    """
    from provenance import config as configuration
    from provenance.attest import timestamp
    from provenance.attest.signing import Attester, DsseAttester
    from provenance.capture.snapshot import prepare, take
    from provenance.cli import progress
    from provenance.cli._keys import load_signers
    from provenance.errors import UsageError
    from provenance.store.objects import Store

    chosen = [bool(key_paths), use_sigstore, no_sign]
    if sum(chosen) > 1:
        raise UsageError("--key, --sigstore and --no-sign exclude each other")
    if not any(chosen):
        raise UsageError(
            "choose how to sign: --key keys/NAME.key (repeatable), --sigstore (keyless), "
            "or --no-sign for a dry run",
            hint="`prov keygen NAME` makes a key pair",
        )
    if timestamp_url and no_sign:
        raise UsageError("--timestamp needs a signature to timestamp: drop --no-sign")
    if sigstore_staging and not use_sigstore:
        raise UsageError("--sigstore-staging goes with --sigstore")
    config = configuration.load(config_path)
    target_store = Store(resolve_store_path(store, config.store_path))
    attester: Attester
    if use_sigstore:
        from provenance.attest.sigstore import KeylessSigner, SigstoreAttester

        suffix = SigstoreAttester.suffix
    else:
        suffix = DsseAttester.suffix
    # Everything that can be wrong without collecting is checked before keys are asked for.
    prepared = prepare(config, target_store, suffix, label=label, output=output)
    signers = load_signers(key_paths)
    if use_sigstore:

        def stamp(signature: bytes) -> bytes:
            assert timestamp_url is not None
            return timestamp.request(timestamp_url, signature)

        attester = SigstoreAttester(
            KeylessSigner(staging=sigstore_staging), timestamper=stamp if timestamp_url else None
        )
    else:
        attester = DsseAttester(signers)
    display = progress(ctx)
    result = take(config, target_store, attester, prepared=prepared, progress=display.line)
    display.stop()
    snap = result.snapshot
    click.echo(f"snapshot {snap.label}  sha256:{snap.sha256().hex}")
    click.echo(f"  attestation: {result.attestation}")
    if timestamp_url and not use_sigstore:
        click.echo(f"  timestamp: {timestamp.stamp_dsse(result.attestation, timestamp_url)}")
    elif timestamp_url:
        click.echo("  timestamp: in the bundle's timestampVerificationData")
    click.echo(f"  store: {target_store.root}")
    signed_by = attester.signer_ids() if use_sigstore else [s.keyid[:16] for s in signers]
    click.echo(f"  signed by: {', '.join(signed_by) or '(unsigned)'}")
    for capture in snap.captures:
        mark = (
            "ok"
            if capture.status == "ok"
            else f"FAILED: {capture.error.message if capture.error else ''}"
        )
        click.echo(f"  {capture.source} [{capture.kind}] {capture.digest[:19]}... {mark}")
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    for key, check in sorted(snap.cross_checks.items()):
        if check.result == "mismatch":
            click.echo(f"warning: cross-check {key}: {check.detail}", err=True)
    if result.partial:
        click.echo(
            f"warning: {len(result.failed)} source(s) failed and were recorded as such: "
            + ", ".join(result.failed),
            err=True,
        )
        ctx.exit(1 if strict else PARTIAL_EXIT)
