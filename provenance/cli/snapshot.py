"""``prov snapshot``."""

from __future__ import annotations

from pathlib import Path

import click

from provenance.cli._options import (
    config_option,
    output_option,
    signing_keys_option,
    store_option,
)

PARTIAL_EXIT = 4


@click.command()
@config_option
@click.option("--label", help="Name of this milestone [default: snapshot-<UTC time>].")
@signing_keys_option("Sign with this private key (repeat for several signers).")
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
@output_option("Attestation file [default: attestations/LABEL.intoto.jsonl].")
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
    from provenance.capture.signed import Signing, take_signed
    from provenance.cli import progress
    from provenance.cli._keys import load_signers
    from provenance.render.taken import taken_text, taken_warnings

    signing = Signing(key_paths, use_sigstore, sigstore_staging, timestamp_url, no_sign)
    display = progress(ctx)
    taken = take_signed(
        config_path,
        store,
        signing,
        label=label,
        output=output,
        load_keys=load_signers,
        progress=display.line,
    )
    display.stop()
    click.echo(taken_text(taken), nl=False)
    for line in taken_warnings(taken):
        click.echo(line, err=True)
    if taken.result.partial:
        ctx.exit(1 if strict else PARTIAL_EXIT)
