"""``prov recheck`` and ``prov witness``: the sources of a snapshot, asked again."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

import click

from provenance.cli._options import (
    format_option,
    resolve_store_path,
    store_option,
    text_or_json,
)
from provenance.render.formats import Format

if TYPE_CHECKING:
    from provenance.capture.recheck import Recollected
    from provenance.compare.evidence import BlobSource
    from provenance.compare.recheck import SourceCheck
    from provenance.model import Snapshot
    from provenance.store.objects import Store

DRIFT_EXIT = 1


def _base_dir_option(function: Any) -> Any:
    return click.option(
        "--base-dir",
        type=click.Path(path_type=Path, file_okay=False),
        default=Path("."),
        show_default=True,
        help="Folder that local repository paths in the snapshot are relative to.",
    )(function)


def _concurrency_option(function: Any) -> Any:
    return click.option(
        "--concurrency",
        type=click.IntRange(1, 64),
        default=6,
        show_default=True,
        help="Sources asked at once.",
    )(function)


def _run(
    stack: ExitStack,
    reference: str,
    store_path: Path | None,
    base_dir: Path,
    concurrency: int,
    keep: bool,
) -> tuple[Snapshot, list[Recollected], list[SourceCheck], Store | None, str]:
    """Load the snapshot, ask every source again, classify each: what both commands share."""
    import os
    import tempfile

    from provenance.capture.base import CollectContext
    from provenance.capture.recheck import recollect
    from provenance.compare.evidence import StoreBlobs
    from provenance.compare.recheck import classify
    from provenance.model import utc_now
    from provenance.store.objects import Store
    from provenance.verify.resolve import load

    configured = Store(resolve_store_path(store_path))
    loaded = load(reference, configured if configured.exists() else None)
    snapshot = loaded.snapshot
    # Blobs go to the store when the result is kept (signed) or a store is there already;
    # otherwise to a temporary one, so that a recheck writes nothing an auditor did not ask for.
    if keep or configured.exists():
        target: Store | None = configured
        collect_into = configured
    else:
        target = None
        collect_into = Store(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "store")
    collect_into.init()
    context = CollectContext(
        store=collect_into,
        base_dir=base_dir,
        env=dict(os.environ),
        progress=lambda line: click.echo(line, err=True),
    )
    checked = utc_now()
    click.echo(
        f"{loaded.origin}: {loaded.signatures} signature(s), not checked here: this compares "
        "content (`prov verify` checks who signed)",
        err=True,
    )
    click.echo(
        f"asking the {len(snapshot.captures)} source(s) of {snapshot.label} again...", err=True
    )
    items = recollect(
        snapshot, context, concurrency=concurrency, progress=lambda s: click.echo(s, err=True)
    )
    attested: BlobSource = StoreBlobs(loaded.store or configured)
    observed: BlobSource = StoreBlobs(collect_into)
    checks = [classify(item, attested, observed) for item in items]
    return snapshot, items, checks, target, checked


def _default_output(reference: str, name: str) -> Path:
    given = Path(reference)
    folder = given.parent if given.is_file() else Path("attestations")
    return folder / name


@click.command()
@click.argument("attestation")
@click.option(
    "--key",
    "key_paths",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Sign the recheck: it becomes a snapshot linked to the one rechecked.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="With --key: the signed recheck's file [default: LABEL.recheck-TIME.intoto.jsonl "
    "beside ATTESTATION].",
)
@store_option
@_base_dir_option
@_concurrency_option
@format_option
@click.pass_context
def recheck(
    ctx: click.Context,
    attestation: str,
    key_paths: tuple[Path, ...],
    output: Path | None,
    store: Path | None,
    base_dir: Path,
    concurrency: int,
    output_format: str,
) -> None:
    """Ask the sources of a snapshot again: is what was attested still served?

    ATTESTATION is an attestation file, an evidence pack, or a label / id in the
    store. Every source it records is captured again exactly as recorded (kind,
    request, paths, revision; no prov.toml) and reported as same, changed (with
    the diff; volatile fields apart), gone (404, a ref or revision that no longer
    exists) or failed now. Signatures are not checked here: run `prov verify`.

    Exit 0 when every source is the same, 1 when something drifted.
    """
    from provenance.attest.signing import DsseAttester
    from provenance.capture.snapshot import record
    from provenance.cli._keys import load_signers
    from provenance.compare.recheck import recheck_label, recheck_snapshot, report
    from provenance.errors import UsageError
    from provenance.render.witnesses import render_recheck

    signers = load_signers(key_paths)
    with ExitStack() as stack:
        snapshot, items, checks, target, checked = _run(
            stack, attestation, store, base_dir, concurrency, keep=bool(signers)
        )
        written = None
        signed = None
        if signers:
            assert target is not None
            label = recheck_label(snapshot.label)
            signed = recheck_snapshot(snapshot, items, checks, label)
            path = output or _default_output(attestation, f"{label}.intoto.jsonl")
            if path.exists():
                raise UsageError(f"{path} already exists", hint="choose another -o path")
            path.parent.mkdir(parents=True, exist_ok=True)
            record(signed, target, DsseAttester(signers), path)
            written = str(path)
        result = report(snapshot, checks, checked, signed, written)
    fmt = text_or_json(output_format)
    if fmt is Format.JSON:
        import json

        click.echo(json.dumps(result.to_json(), indent=2))
    elif fmt is Format.TEXT:
        click.echo(render_recheck(result), nl=False)
    else:
        assert_never(fmt)
    if not result.same:
        ctx.exit(DRIFT_EXIT)


@click.command()
@click.argument("attestation")
@click.option(
    "--key",
    "key_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The witness's own private key.",
)
@click.option(
    "--operator",
    help="Who runs this witness, signed into the statement [default: this host's name].",
)
@click.option("--region", help="Where it runs (a cloud region or any label), signed too.")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The witness statement's file [default: LABEL.witness.KEYID.intoto.jsonl beside "
    "ATTESTATION].",
)
@store_option
@_base_dir_option
@_concurrency_option
@format_option
@click.pass_context
def witness(
    ctx: click.Context,
    attestation: str,
    key_path: Path,
    operator: str | None,
    region: str | None,
    output: Path | None,
    store: Path | None,
    base_dir: Path,
    concurrency: int,
    output_format: str,
) -> None:
    """Re-capture a snapshot's sources independently and co-sign what matches.

    Every source is asked again from here. For each capture whose content is the
    same (the same digest, or the same content apart from volatile fields), the
    witness statement says so: what was seen, from where (operator, region, the
    address a source reported) and when, signed with --key over the snapshot's own
    subject. Captures that differ are listed here and not signed for.

    Exit 0 when every capture was witnessed, 1 when some (or all) differed.
    """
    import socket

    from provenance.attest.signing import DsseAttester
    from provenance.cli._keys import load_signers
    from provenance.compare import witness as witnesses
    from provenance.compare.recheck import report
    from provenance.render.witnesses import render_witness

    (signer,) = load_signers([key_path])
    with ExitStack() as stack:
        snapshot, items, checks, target, checked = _run(
            stack, attestation, store, base_dir, concurrency, keep=False
        )
        where = witnesses.vantage(operator or socket.gethostname(), region, items)
        matched = [c for c in checks if c.outcome == "same"]
        path = None
        if matched:
            statement = witnesses.build(snapshot, items, checks, where)
            name = f"{snapshot.label}.witness.{signer.keyid[:16]}.intoto.jsonl"
            path = output or _default_output(attestation, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            witnesses.record(statement, DsseAttester([signer]), path, target)
        result = report(snapshot, checks, checked)
    fmt = text_or_json(output_format)
    if fmt is Format.JSON:
        import json

        run = witnesses.WitnessRun(
            vantage=where,
            statement=str(path) if path else None,
            witnessed=[c.source for c in matched],
            recheck=result,
        )
        click.echo(json.dumps(run.to_json(), indent=2))
    elif fmt is Format.TEXT:
        click.echo(render_witness(result, where, path), nl=False)
    else:
        assert_never(fmt)
    if not result.same:
        ctx.exit(DRIFT_EXIT)


def witness_options(function: Any) -> Any:
    """``prov verify``'s options for counting observers."""
    function = click.option(
        "--witness-policy",
        type=click.Path(path_type=Path, dir_okay=False),
        help="A witness policy (keys, groups, quorum; see docs/evidence.md) that every "
        "capture must meet.",
    )(function)
    function = click.option(
        "--require-witnesses",
        type=click.IntRange(min=1),
        metavar="N",
        help="Fail unless every capture was witnessed by N distinct trusted keys besides "
        "the publisher's.",
    )(function)
    return click.option(
        "--witness",
        "witness_paths",
        multiple=True,
        type=click.Path(path_type=Path, dir_okay=False),
        help="A witness statement to count (repeat) [default: LABEL.witness.*.intoto.jsonl "
        "beside ATTESTATION].",
    )(function)


def count_witnesses(
    report: Any,
    trusted: Any,
    attestation: Path,
    paths: tuple[Path, ...],
    required: int | None,
    policy_path: Path | None,
) -> None:
    """Count observers when witness statements exist or a requirement was given."""
    from provenance.verify.observers import beside, observe
    from provenance.verify.witness_policy import load

    snapshot = report.snapshot
    found = list(paths) or beside(attestation, snapshot.label)
    policy = load(policy_path) if policy_path else None
    observe(report, trusted, found, required=required, policy=policy)
