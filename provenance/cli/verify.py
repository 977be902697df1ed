"""``prov verify``: the trust decision is the library's (``verify.policy``, ``verify.audit``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from provenance.cli._options import (
    emit,
    format_option,
    plain_http_option,
    trust_options,
    witness_options,
)

if TYPE_CHECKING:
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
    from provenance.render.verdicts import audit_text, image_text
    from provenance.verify.audit import audit
    from provenance.verify.observers import witness_step

    if attestation_arg is not None and attestation_arg.startswith("oci://"):
        from provenance.publish.image import verify_image

        image = verify_image(
            attestation_arg,
            trust,
            os.environ,
            plain_http=plain_http,
            store=store,
            expect_label=expect_label,
        )
        emit(output_format, image.to_json, lambda: image_text(image))
        error = image.error
    else:
        named = Path(attestation_arg) if attestation_arg is not None else None
        then = witness_step(witness_paths, require_witnesses, witness_policy)
        result = audit(
            named, trust, pack=pack_path, store=store, expect_label=expect_label, then=then
        )
        emit(output_format, result.to_json, lambda: audit_text(result))
        error = result.error
    if error is not None:
        click.echo(error.diagnostics(), err=True)
        ctx.exit(error.exit_code)
