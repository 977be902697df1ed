"""``prov verify``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import assert_never

import click

from provenance.cli._options import Format, format_option


@click.command()
@click.argument("attestation", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--key",
    "key_paths",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="A trusted public key (repeat for several).",
)
@click.option(
    "--threshold",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="How many distinct trusted keys must have signed.",
)
@click.option(
    "--store",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="PROV_STORE",
    help="Also check every referenced blob in this store [env PROV_STORE].",
)
@click.option(
    "--expect-label",
    metavar="LABEL",
    help="The label the attestation must be signed for [default: from its file name, "
    "LABEL.intoto.jsonl].",
)
@format_option
@click.pass_context
def verify(
    ctx: click.Context,
    attestation: Path,
    key_paths: tuple[Path, ...],
    threshold: int,
    store: Path | None,
    expect_label: str | None,
    output_format: str,
) -> None:
    """Verify an attestation offline, step by step. Exit 0 verified, 1 not."""
    from provenance.attest import keys
    from provenance.errors import UsageError, VerificationError
    from provenance.store import Store
    from provenance.verify import Report, label_from_filename
    from provenance.verify import verify as run

    if not key_paths:
        raise UsageError(
            "no trusted keys: pass --key PUB for each signer you trust",
            hint="an empty policy would trust anything, so prov refuses it",
        )
    trusted = [keys.load_verifier(path) for path in key_paths]
    blob_store = Store(store).require() if store else None
    try:
        report: Report = run(
            attestation,
            trusted,
            threshold=threshold,
            store=blob_store,
            expect_label=expect_label or label_from_filename(attestation),
        )
        error = None
    except VerificationError as e:
        if not isinstance(e.report, Report):
            raise
        report, error = e.report, e
    fmt = Format(output_format)
    if fmt is Format.JSON:
        click.echo(json.dumps(report.to_json(), indent=2))
    elif fmt is Format.TEXT:
        for step in report.steps:
            mark = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[step.status]
            click.echo(f"[{mark}] {step.number}. {step.name}: {step.detail}")
        if report.snapshot is not None and error is None:
            snap = report.snapshot
            click.echo(
                f"verified: {snap.label} ({len(snap.captures)} captures, created {snap.created})"
            )
    else:
        assert_never(fmt)
    if error is not None:
        click.echo(error.diagnostics(), err=True)
        ctx.exit(error.exit_code)
