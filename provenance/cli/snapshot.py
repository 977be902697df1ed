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
    from provenance.attest import keys
    from provenance.attest.signing import DsseAttester
    from provenance.errors import UsageError
    from provenance.snapshot import plan, take
    from provenance.store import Store

    if no_sign and key_paths:
        raise UsageError("--no-sign and --key exclude each other")
    if not no_sign and not key_paths:
        raise UsageError(
            "choose how to sign: --key keys/NAME.key (repeatable), or --no-sign for a dry run",
            hint="`prov keygen NAME` makes a key pair",
        )
    config = configuration.load(config_path)
    plan(config)  # reject a bad prov.toml before asking for keys
    signers = [keys.load_signer(path) for path in key_paths]
    target_store = Store(resolve_store_path(store, config.store_path))
    click.echo(f"collecting {len(config.sources)} source(s)...", err=True)
    result = take(
        config,
        target_store,
        DsseAttester(signers),
        label=label,
        output=output,
        progress=lambda line: click.echo(line, err=True),
    )
    snap = result.snapshot
    click.echo(f"snapshot {snap.label}  sha256:{snap.sha256().hex}")
    click.echo(f"  attestation: {result.attestation}")
    click.echo(f"  store: {target_store.root}")
    click.echo(f"  signed by: {', '.join(s.keyid[:16] for s in signers) or '(unsigned)'}")
    for capture in snap.captures:
        mark = (
            "ok"
            if capture.status == "ok"
            else f"FAILED: {capture.error.message if capture.error else ''}"
        )
        click.echo(f"  {capture.source} [{capture.kind}] {capture.digest[:19]}... {mark}")
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
