"""``prov prove``: an inclusion proof for one file of a manifest, and the auditor's check of it."""

from __future__ import annotations

from pathlib import Path

import click

from provenance.cli._options import resolve_store_path, store_option


@click.command()
@click.argument("snapshot")
@click.argument("path", required=False)
@click.option("--source", help="The capture to prove from (needed when several have a manifest).")
@click.option(
    "--check",
    "proof_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Check this proof against SNAPSHOT's signed root instead of making one.",
)
@store_option
def prove(
    snapshot: str, path: str | None, source: str | None, proof_file: Path | None, store: Path | None
) -> None:
    """Print an inclusion proof that PATH is in SNAPSHOT's manifest.

    A git capture over many files, and every listing, signs the Merkle root
    (RFC 9162, blake3) of its manifest rather than the list. The proof is the
    file's manifest entry and log2(n) hashes; anyone holding the attestation
    checks it with `prov prove SNAPSHOT --check PROOF.json`, without the
    manifest or the other files. Exit 1 when the proof does not lead to the
    root. This does not check signatures: `prov verify` the attestation too.
    """
    import json  # here, not at the top: `prov --help` does not need it

    from provenance.store.objects import Store
    from provenance.verify import inclusion

    blobs = Store(resolve_store_path(store))
    if proof_file is None:
        click.echo(json.dumps(inclusion.make(snapshot, blobs, path, source), indent=2))
        return
    proven = inclusion.check(snapshot, blobs, proof_file)
    click.echo(
        f"proven: {proven.entry['key']!r} is entry {proven.index:,} of the "
        f"{proven.count:,}-entry manifest of {proven.source!r} in snapshot "
        f"{proven.label!r} (root {proven.root})"
    )
    click.echo(json.dumps(proven.entry, sort_keys=True))
