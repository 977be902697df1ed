"""``prov export-warc``: a snapshot's http captures as a WARC file for web-archive tools."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from provenance.cli._options import (
    output_option,
    resolve_store_path,
    say_what_was_checked,
    store_option,
    trust_options,
)

if TYPE_CHECKING:
    from provenance.verify.policy import TrustOptions


@click.command("export-warc")
@click.argument("snapshot")
@output_option("WARC file to write (gzipped per record when it ends in .gz).", required=True)
@store_option
@trust_options
def export_warc(snapshot: str, output: Path, store: Path | None, trust: TrustOptions) -> None:
    """Write the http captures of SNAPSHOT (a label, an id or an attestation) as WARC.

    Each exchange becomes a request and a response record with the body bytes from the
    store (each re-hashed first), plus a metadata record with the capture (failed
    captures included). With --key / --cert-identity the snapshot is verified first.
    """
    from provenance.render.warc import export
    from provenance.store.objects import Store
    from provenance.verify.resolve import load

    blob_store = Store(resolve_store_path(store)).require()
    loaded = load(snapshot, blob_store, trust)
    say_what_was_checked(loaded.verified)
    summary = export(loaded.snapshot, blob_store, output)
    click.echo(
        f"wrote {summary.path}: {summary.records} WARC records, {summary.responses} response(s) "
        f"from {summary.captures} http capture(s) of {loaded.snapshot.label}"
    )
