"""``prov verify``: the trust decision is the library's (``verify.policy``, ``verify.audit``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, assert_never

import click

from provenance.cli._options import format_option, text_or_json, trust_options, witness_options
from provenance.cli.oci import plain_http_option
from provenance.render.formats import Format

if TYPE_CHECKING:
    from provenance.verify.audit import Audit
    from provenance.verify.policy import TrustOptions


@click.command()
@click.argument("attestation_arg", required=False, metavar="ATTESTATION | oci://IMAGE")
@trust_options
@click.option(
    "--store",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="PROV_STORE",
    help="Also check every referenced blob in this store [env PROV_STORE].",
)
@click.option(
    "--pack",
    "pack_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="An evidence pack: its attestation and blobs (no store, no network).",
)
@click.option(
    "--expect-label",
    metavar="LABEL",
    help="The label the attestation must be signed for [default: from its file name, "
    "LABEL.intoto.jsonl, LABEL.evidence.tar; for oci://, from each attached file's name].",
)
@witness_options
@format_option
@plain_http_option
@click.pass_context
def verify(
    ctx: click.Context,
    attestation_arg: str | None,
    trust: TrustOptions,
    store: Path | None,
    pack_path: Path | None,
    expect_label: str | None,
    output_format: str,
    plain_http: bool,
    witness_paths: tuple[Path, ...],
    require_witnesses: int | None,
    witness_policy: Path | None,
) -> None:
    """Verify an attestation offline, step by step. Exit 0 verified, 1 not.

    ATTESTATION is a DSSE file (*.intoto.jsonl; trust: --key), a Sigstore bundle
    (*.sigstore.json; trust: --cert-identity + --cert-oidc-issuer, or --repository), a
    signed note or diff, or an evidence pack (with --pack, or given directly). Trust
    comes from these options only: a pack's own keys, identity and roots count only with
    --trust-pack, which prints each. With oci://REGISTRY/REPOSITORY:TAG, every
    attestation attached to that image (OCI referrers) is fetched and verified.
    """
    from provenance.verify.audit import audit
    from provenance.verify.observers import witness_step

    if attestation_arg is not None and attestation_arg.startswith("oci://"):
        from provenance.cli.oci import verify_image

        verify_image(ctx, attestation_arg, trust, store, output_format, plain_http, expect_label)
        return

    named = Path(attestation_arg) if attestation_arg is not None else None
    then = witness_step(witness_paths, require_witnesses, witness_policy)
    result = audit(named, trust, pack=pack_path, store=store, expect_label=expect_label, then=then)
    _print(result, text_or_json(output_format))
    if result.error is not None:
        click.echo(result.error.diagnostics(), err=True)
        ctx.exit(result.error.exit_code)


def _print(result: Audit, fmt: Literal[Format.TEXT, Format.JSON]) -> None:
    from provenance.render.escape import text

    report = result.report
    if fmt is Format.JSON:
        import json

        document = report.to_json()
        document["trusted_from_pack"] = list(result.trusted)
        document["trust_notes"] = result.notes
        click.echo(json.dumps(document, indent=2))
        return
    if fmt is not Format.TEXT:
        assert_never(fmt)
    for line in result.trusted:
        click.echo(f"trusted from the pack (--trust-pack): {text(line)}")
    for note in result.notes:
        click.echo(f"note: {text(note)}")
    for step in report.steps:
        mark = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[step.status]
        click.echo(text(f"[{mark}] {step.number}. {step.name}: {step.detail}"))
    if report.observers is not None:
        from provenance.render.witnesses import observer_lines

        click.echo("evidence per capture:")
        click.echo("\n".join(observer_lines(report.observers)))
    if result.error is None:
        click.echo(_verified_line(report))


def _verified_line(report: Any) -> str:
    snap, checked = report.snapshot, report.checked
    if snap is not None:
        return f"verified: {snap.label} ({len(snap.captures)} captures, created {snap.created})"
    about = ", ".join(label for label, _ in checked.about)
    return f"verified: a signed {checked.kind} about {about}"
