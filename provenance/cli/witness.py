"""``prov recheck`` and ``prov witness``: the sources of a snapshot, asked again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from provenance.cli._options import (
    FILE,
    FOLDER,
    emit,
    format_option,
    output_option,
    resolve_store_path,
    signing_keys_option,
    store_option,
)

DRIFT_EXIT = 1


def _base_dir_option(function: Any) -> Any:
    return click.option(
        "--base-dir",
        type=FOLDER,
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


def _say(line: str) -> None:
    click.echo(line, err=True)


@click.command()
@click.argument("attestation")
@signing_keys_option("Sign the recheck: it becomes a snapshot linked to the one rechecked.")
@output_option(
    "With --key: the signed recheck's file [default: LABEL.recheck-TIME.intoto.jsonl "
    "beside ATTESTATION]."
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
    from provenance.cli._keys import load_signers
    from provenance.compare.again import recheck as ask_again
    from provenance.render.witnesses import render_recheck
    from provenance.store.objects import Store

    result = ask_again(
        attestation,
        Store(resolve_store_path(store)),
        base_dir=base_dir,
        concurrency=concurrency,
        signers=load_signers(key_paths),
        output=output,
        say=_say,
    )
    emit(output_format, result.to_json, lambda: render_recheck(result))
    if not result.same:
        ctx.exit(DRIFT_EXIT)


@click.command()
@click.argument("attestation")
@click.option(
    "--key",
    "key_path",
    required=True,
    type=FILE,
    help="The witness's own private key.",
)
@click.option(
    "--operator",
    help="Who runs this witness, signed into the statement [default: this host's name].",
)
@click.option("--region", help="Where it runs (a cloud region or any label), signed too.")
@output_option(
    "The witness statement's file [default: LABEL.witness.KEYID.intoto.jsonl beside ATTESTATION]."
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
    from provenance.cli._keys import load_signers
    from provenance.compare.again import witness as ask_again
    from provenance.render.witnesses import render_witness
    from provenance.store.objects import Store

    (signer,) = load_signers([key_path])
    run = ask_again(
        attestation,
        Store(resolve_store_path(store)),
        base_dir=base_dir,
        concurrency=concurrency,
        signer=signer,
        operator=operator,
        region=region,
        output=output,
        say=_say,
    )
    statement = Path(run.statement) if run.statement else None
    emit(output_format, run.to_json, lambda: render_witness(run.recheck, run.vantage, statement))
    if not run.recheck.same:
        ctx.exit(DRIFT_EXIT)
