"""``prov pack``: an evidence pack an auditor verifies and diffs with nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from provenance.cli._options import (
    FILE,
    output_option,
    packing_trust_options,
    resolve_store_path,
    store_option,
)

if TYPE_CHECKING:
    from provenance.verify.policy import TrustOptions


@click.command()
@click.argument("attestation", type=FILE)
@output_option("The pack to write (a tar file, e.g. LABEL.evidence.tar).", required=True)
@packing_trust_options
@store_option
def pack(attestation: Path, output: Path, trust: TrustOptions, store: Path | None) -> None:
    """Verify ATTESTATION, then write it with every blob it references and its trust material.

    The attestation must verify (with its blobs) before anything is written. An auditor
    verifies the pack with their own --key / --cert-identity (or, to use the keys and roots
    packed here, --trust-pack); `prov diff FILE ...` reads it with nothing else.
    """
    from provenance.store.objects import Store
    from provenance.verify.audit import make_pack

    blob_store = Store(resolve_store_path(store)).require()
    manifest = make_pack(attestation, trust, blob_store, output)
    blobs = manifest.named("blob")
    click.echo(f"wrote {output}: {manifest.label} sha256:{manifest.snapshot_sha256}")
    click.echo(
        f"  {len(manifest.members)} member(s): attestation, {len(blobs)} blob(s) "
        f"({sum(b.size for b in blobs):,} bytes), {len(manifest.named('key'))} key(s)"
        + (", trusted root" if manifest.named("trusted-root") else "")
        + (", TSA chain" if manifest.named("tsa-chain") else "")
        + (", timestamp" if manifest.named("timestamp") else "")
    )
