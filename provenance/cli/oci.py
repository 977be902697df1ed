"""``prov push`` (attach an attestation to an image) and the image branch of ``prov verify``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

import click

from provenance.cli._options import text_or_json
from provenance.render.formats import Format

if TYPE_CHECKING:
    from provenance.verify.policy import TrustOptions

PLAIN_HTTP_HELP = "Talk plain http to a registry on 127.0.0.1 / localhost."


def plain_http_option(function: Any) -> Any:
    return click.option("--plain-http", is_flag=True, help=PLAIN_HTTP_HELP)(function)


@click.command()
@click.argument("attestation", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("image", metavar="oci://REGISTRY/REPOSITORY:TAG")
@plain_http_option
def push(attestation: Path, image: str, plain_http: bool) -> None:
    """Attach an attestation to a container image.

    The attestation becomes an OCI 1.1 referrer of the image (artifactType
    application/vnd.in-toto+json). Registries without the referrers API get the
    sha256-<digest> tag scheme instead. Credentials come from ~/.docker/config.json.
    """
    from provenance._internal.oci import connect
    from provenance._internal.oci.reference import parse
    from provenance.errors import UsageError
    from provenance.model import utc_now
    from provenance.publish.oci import push_attestation

    reference = parse(image)
    try:
        data = attestation.read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read {attestation}", cause=str(e)) from e
    import json

    first = data.strip().split(b"\n", 1)[0]
    try:
        json.loads(first)
    except (ValueError, RecursionError) as e:
        raise UsageError(
            f"{attestation} is not an attestation file (its first line is not JSON)",
            hint="push the *.intoto.jsonl or *.sigstore.json file that `prov snapshot` wrote",
        ) from e
    with connect(reference, os.environ, plain_http=plain_http) as client:
        result = push_attestation(client, reference, data, attestation.name, utc_now())
    how = (
        "listed by the registry's referrers API"
        if result.method == "referrers-api"
        else f"listed in the referrers tag {result.tag} (the registry has no referrers API)"
    )
    click.echo(f"attached {attestation.name} to {reference}")
    click.echo(f"  image:       {result.subject}")
    click.echo(f"  attestation: {result.manifest}, {how}")


def verify_image(
    ctx: click.Context,
    image: str,
    trust: TrustOptions,
    store: Path | None,
    output_format: str,
    plain_http: bool,
    expect_label: str | None,
) -> None:
    """Find the attestations attached to an image, fetch them, verify each. Exit 0 if all hold.

    Trust is the auditor's (``verify.policy.from_auditor``); see ``verify.oci``.
    """
    import json

    from provenance._internal.oci import connect
    from provenance._internal.oci.reference import parse
    from provenance.errors import VerificationError
    from provenance.publish.oci import fetch_attestations
    from provenance.store.objects import Store
    from provenance.verify.oci import verify_attached
    from provenance.verify.policy import from_auditor

    policy = from_auditor(trust)
    reference = parse(image)
    with connect(reference, os.environ, plain_http=plain_http) as client:
        found = fetch_attestations(client, reference)
    results = verify_attached(
        found.attestations,
        policy,
        subject=found.subject,
        where=f"oci://{reference.registry}/{reference.repository}",
        store=Store(store).require() if store else None,
        expect_label=expect_label,
    )
    verified = bool(results) and all(r["verified"] for r in results)
    fmt = text_or_json(output_format)
    if fmt is Format.JSON:
        click.echo(json.dumps(_document(reference, found, verified, results), indent=2))
    elif fmt is Format.TEXT:
        _print_text(reference, found.subject, found.method, results)
    else:
        assert_never(fmt)
    if not results:
        error = VerificationError(
            f"no attestation is attached to {reference} ({found.subject})",
            hint="attach one with `prov push ATTESTATION oci://...`",
        )
        click.echo(error.diagnostics(), err=True)
        ctx.exit(error.exit_code)
    if not verified:
        failed = sum(not r["verified"] for r in results)
        click.echo(
            f"error: {failed} of {len(results)} attestation(s) attached to {reference} "
            "failed verification",
            err=True,
        )
        ctx.exit(VerificationError.exit_code)


def _document(
    reference: object, found: Any, verified: bool, results: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "schema": "https://prov.dev/verify-oci-report/v1",
        "image": str(reference),
        "subject": found.subject,
        "found_through": found.method,
        "verified": verified,
        "attestations": [
            {**r, "report": r["report"].to_json() if r["report"] else None} for r in results
        ],
    }


def _print_text(
    reference: object, subject: str, method: str, results: list[dict[str, Any]]
) -> None:
    from provenance.render.escape import text

    where = "the referrers API" if method == "referrers-api" else "the referrers tag scheme"
    click.echo(f"image {reference} is {subject}")
    click.echo(f"  {len(results)} attestation(s) found through {where}")
    for entry in results:
        click.echo(f"\n{entry['filename']}  (manifest {entry['manifest']})")
        report = entry["report"]
        if report is not None:
            for step in report.steps:
                mark = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[step.status]
                click.echo(text(f"[{mark}] {step.number}. {step.name}: {step.detail}"))
        if entry["verified"]:
            snap = report.snapshot
            click.echo(f"verified: {snap.label} ({len(snap.captures)} captures)")
            if entry["expected_label"] is None:
                click.echo(
                    "  note: its name is not LABEL.intoto.jsonl: the signed label was not "
                    "checked (pass --expect-label)"
                )
            if entry["captures_image"]:
                names = ", ".join(entry["captures_image"])
                click.echo(f"  the snapshot captured this image: source {names}")
            else:
                click.echo("  note: the snapshot holds no capture of this image's digest")
        else:
            click.echo(text(f"FAILED: {entry['error']}"))
