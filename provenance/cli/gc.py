"""``prov gc``: remove the objects no snapshot or note refers to, and repack the rest."""

from __future__ import annotations

from pathlib import Path

import click

from provenance.cli._options import resolve_store_path, store_option


@click.command()
@store_option
@click.option("--dry-run", is_flag=True, help="Say what would be removed; change nothing.")
def gc(store: Path | None, dry_run: bool) -> None:
    """Remove unreferenced objects from the store and repack the rest.

    An object is kept when a snapshot, a change note or a witness statement in
    the store refers to it (its attestation, its blobs, the files its manifest
    names). Live small
    objects are copied into one new pack, each re-hashed; the old packs go only
    once the new one is durable. Refuses to run while another prov process
    writes into the store. Exit 3 when an attestation cannot be read (nothing
    is removed then).
    """
    from provenance.store.gc import collect
    from provenance.store.objects import Store
    from provenance.verify.reachable import reachable

    target = Store(resolve_store_path(store)).require()
    with target.exclusive():
        found = reachable(target)
        report = collect(target, found.live, keep_loose=found.attestations, dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    click.echo(
        f"{verb} {report.removed} unreferenced object(s), {report.removed_bytes:,} bytes; "
        f"kept {report.live} referenced by {found.snapshots} snapshot(s), {found.notes} note(s) "
        f"and {found.entries.get('witnesses', 0)} witness statement(s)"
    )
    if not dry_run:
        click.echo(
            f"repacked {report.repacked} object(s): {report.packs_before} pack(s) -> "
            f"{report.packs_after}; disk {report.disk_before:,} -> {report.disk_after:,} bytes "
            f"(freed {report.freed:,})"
        )
