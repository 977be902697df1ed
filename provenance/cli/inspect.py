"""``prov show``, ``prov log`` and ``prov fsck``: reading what is stored."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, assert_never, get_args

import click

from provenance.cli._options import (
    config_option,
    format_option,
    formats_option,
    resolve_store_path,
    say_what_was_checked,
    store_option,
    text_or_json,
    trust_options,
)
from provenance.render.formats import Format

if TYPE_CHECKING:
    from provenance.config import Config
    from provenance.verify.policy import TrustOptions
    from provenance.verify.resolve import Foreign, Loaded


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
    from provenance.store.objects import Store
    from provenance.verify.resolve import foreign_statement, load

    foreign = foreign_statement(snapshot, trust)
    if foreign is not None:
        _show_foreign(foreign, text_or_json(output_format))
        return
    loaded = load(snapshot, Store(resolve_store_path(store)), trust)
    say_what_was_checked(loaded.verified)
    fmt = text_or_json(output_format)
    if fmt is Format.JSON:
        snap = loaded.snapshot
        document = {
            "schema": "https://prov.dev/show/v1",
            "origin": loaded.origin,
            "sha256": snap.sha256().hex,
            "verified_by": list(loaded.verified) if loaded.verified is not None else None,
            "snapshot": snap.model_dump(mode="json"),
        }
        import json

        click.echo(json.dumps(document, indent=2))
        return
    if fmt is not Format.TEXT:
        assert_never(fmt)
    _show_text(loaded)


def _show_text(loaded: Loaded) -> None:
    from provenance.model import Establishes
    from provenance.render.escape import text
    from provenance.render.sections import list_items

    snap = loaded.snapshot
    click.echo(f"snapshot {snap.label}  sha256:{snap.sha256().hex}")
    click.echo(f"  created {snap.created} by prov {snap.tool.version}; from {loaded.origin}")
    if loaded.verified is None:
        click.echo(f"  {loaded.signatures} signature(s), not checked here (pass --key PUB)")
    else:
        click.echo(text(f"  verified: signed by {', '.join(loaded.verified)}"))
    every = get_args(Establishes)
    for capture in snap.captures:
        click.echo(f"\n{capture.source} [{capture.kind}]: {capture.status}  {capture.digest}")
        click.echo(f"  captured {capture.started} .. {capture.ended}")
        missing = [e for e in every if e not in capture.establishes]
        click.echo(
            f"  establishes: {', '.join(capture.establishes) or 'nothing'}"
            f"; not established: {', '.join(missing) or 'none'}"
        )
        if capture.error:
            click.echo(text(f"  error: {capture.error.type}: {capture.error.message}"))
        for key, value in capture.data.items():
            click.echo(text(f"  {key}: {_manifest_line(value) or _summary(value)}"))
            if isinstance(value, list) and value:
                for item in list_items(value):
                    click.echo(f"      {item}")
        if capture.blobs:
            total = sum(b.size for b in capture.blobs)
            click.echo(f"  blobs: {len(capture.blobs)} ({total:,} bytes) in the store")
    if snap.cross_checks:
        click.echo("\ncross-checks:")
        for key, check in sorted(snap.cross_checks.items()):
            click.echo(text(f"  {key}: {check.result.upper()}: {check.detail}"))


def _manifest_line(value: Any) -> str | None:
    """A manifest's signed summary: entries, bytes, Merkle root (the list is in its blob)."""
    if not isinstance(value, dict) or value.get("format") != "prov-manifest/v1":
        return None
    count, size = value.get("count"), value.get("bytes")
    if not isinstance(count, int) or not isinstance(size, int):
        return None
    return (
        f"{count:,} entries, {size:,} bytes, Merkle root {value.get('root')} "
        f"(the list: {value.get('blob')}; `prov prove` proves one entry)"
    )


def _show_foreign(foreign: Foreign, fmt: Literal[Format.TEXT, Format.JSON]) -> None:
    """An in-toto statement that is not a prov snapshot: what it is about and what it claims."""
    from provenance.render.escape import text

    if fmt is Format.JSON:
        import json

        document = {
            "schema": "https://prov.dev/show-statement/v1",
            "origin": foreign.origin,
            "predicateType": foreign.predicate_type,
            "subject": foreign.subjects,
            "signatures": foreign.signatures,
            "verified_signers": list(foreign.verified) if foreign.verified is not None else None,
        }
        click.echo(json.dumps(document, indent=2))
        return
    if fmt is not Format.TEXT:
        assert_never(fmt)
    click.echo(text(f"in-toto statement (not a prov snapshot) from {foreign.origin}"))
    click.echo(text(f"  predicateType {foreign.predicate_type}"))
    for subject in foreign.subjects:
        digest = subject.get("digest")
        digests: dict[str, Any] = digest if isinstance(digest, dict) else {}
        named = "  ".join(f"{alg}:{value}" for alg, value in sorted(digests.items()))
        name = subject.get("name") or subject.get("uri") or "?"
        click.echo(text(f"  subject {name}  {named or 'no digest'}"))
    if foreign.verified is None:
        click.echo(f"  {foreign.signatures} signature(s), not checked here (run `prov verify`)")
    else:
        click.echo(text(f"  signature verified: {', '.join(foreign.verified)}"))


def _summary(value: Any) -> str:
    if isinstance(value, list):
        return f"{len(value):,} item(s):" if value else "[] (none)"
    if isinstance(value, dict):
        return f"{{{len(value)} field(s)}}"
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return str(value)


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
