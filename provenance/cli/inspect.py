"""``prov show``, ``prov log`` and ``prov fsck``: reading what is stored."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from provenance.cli._options import (
    config_option,
    emit,
    format_option,
    formats_option,
    resolve_store_path,
    say_what_was_checked,
    store_option,
    trust_options,
)

if TYPE_CHECKING:
    from provenance.config import Config
    from provenance.verify.policy import TrustOptions


@click.command()
@click.argument("snapshot")
@store_option
@format_option
@trust_options
def show(snapshot: str, store: Path | None, output_format: str, trust: TrustOptions) -> None:
    """Show a snapshot (an attestation file, label or id).

    SNAPSHOT is an attestation file, or a label / id of a snapshot in the store.
    With --key / --cert-identity (as for verify) it is verified first; without, its
    digests are recomputed and a line says the signatures were not checked.
    """
    from provenance.render import show as shown
    from provenance.store.objects import Store
    from provenance.verify.resolve import foreign_statement, load

    foreign = foreign_statement(snapshot, trust)
    if foreign is not None:
        emit(
            output_format, lambda: shown.foreign_json(foreign), lambda: shown.foreign_text(foreign)
        )
        return
    loaded = load(snapshot, Store(resolve_store_path(store)), trust)
    say_what_was_checked(loaded.verified)
    emit(output_format, lambda: shown.snapshot_json(loaded), lambda: shown.snapshot_text(loaded))


@click.command()
@store_option
@formats_option()
@trust_options
@click.pass_context
def log(ctx: click.Context, store: Path | None, output_format: str, trust: TrustOptions) -> None:
    """The timeline of snapshots in the store, oldest first.

    Each snapshot shows what changed since the one before it (compared from the
    attestations alone) and the change notes tied to it. With --key / --cert-identity
    every snapshot and note is verified first; one that fails is shown with its
    problem, never compared, and the exit is 1.
    """
    import sys

    from provenance.compare.timeline import timeline
    from provenance.render import report as render
    from provenance.store.objects import Store

    items = timeline(Store(resolve_store_path(store)).require(), trust)
    say_what_was_checked(None if not trust.asked else ())
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    click.echo(render.render_log(items, render.Format(output_format), colour=colour), nl=False)
    if trust.asked and any(item.problem for item in items):
        ctx.exit(1)


@click.command()
@store_option
@config_option
@click.pass_context
def fsck(ctx: click.Context, store: Path | None, config_path: Path) -> None:
    """Re-hash every object in the store. Exit 1 when one is corrupt.

    Loose objects, then each pack from front to back. Also removes what killed
    writers left behind: temp files and unindexed packs in the store and, when
    prov.toml is found, temp files in its attestations folder. Counts the objects
    no snapshot or note refers to (`prov gc` removes them).
    """
    from provenance.render.storecheck import fsck_text
    from provenance.store.objects import Store
    from provenance.verify.fsck import check_store

    configured = _optional_config(config_path)
    attestations = configured.attestations_dir if configured else None
    target = Store(
        resolve_store_path(store, configured.store_path if configured else None)
    ).require()
    check = check_store(target, attestations)
    click.echo(fsck_text(check), nl=False)
    if not check.ok:
        ctx.exit(1)


def _optional_config(config_path: Path) -> Config | None:
    if not config_path.is_file():
        return None
    from provenance import config
    from provenance.errors import ConfigError

    try:
        return config.load(config_path)
    except ConfigError:  # a broken prov.toml must not stop `prov fsck`
        return None
