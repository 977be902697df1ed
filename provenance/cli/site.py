"""``prov site``: a static provenance site for a run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from provenance.cli._options import (
    claims_option,
    output_option,
    packing_trust_options,
    resolve_store_path,
    store_option,
)

if TYPE_CHECKING:
    from provenance.verify.policy import TrustOptions


@click.command()
@click.argument("inputs", nargs=-1, type=click.Path(path_type=Path), metavar="[FOLDER | FILE]...")
@output_option(
    "The site folder to write (replaced only if it is a site prov built).",
    required=True,
    folder=True,
)
@claims_option("A claims file, checked at every verified milestone.")
@click.option("--title", default="Provenance", show_default=True, help="The site's title.")
@packing_trust_options
@click.option(
    "--show-failed",
    is_flag=True,
    help="Publish milestones that fail verification, marked failed in red (exit 1), "
    "instead of refusing to build.",
)
@click.option(
    "--no-packs",
    is_flag=True,
    help="Do not write an evidence pack for each milestone read from the store.",
)
@store_option
@click.pass_context
def site(
    ctx: click.Context,
    inputs: tuple[Path, ...],
    output: Path,
    claims_path: Path | None,
    title: str,
    trust: TrustOptions,
    show_failed: bool,
    no_packs: bool,
    store: Path | None,
) -> None:
    """Write a static provenance site: timeline, claims, diffs, plots, downloads.

    Built from the store's snapshots, or from the FOLDERs / FILEs named (attestations
    and evidence packs). Every milestone is verified with the trust you pass (--key,
    or --cert-identity/--cert-oidc-issuer or --repository), never with keys found in
    the evidence. A milestone that fails verification stops the build (exit 1,
    nothing written) unless --show-failed. The site needs no network and no script:
    open index.html, or publish the folder on any static host.
    """
    from provenance.render.site import build_site
    from provenance.store.objects import Store

    blob_store = Store(resolve_store_path(store))
    built = build_site(
        output,
        inputs,
        blob_store if blob_store.exists() else None,
        trust,
        title=title,
        claims_path=claims_path,
        show_failed=show_failed,
        packs=not no_packs,
    )
    milestones = built.site.milestones
    click.echo(f"wrote {output / 'index.html'}: {len(milestones)} milestone(s)")
    for milestone in milestones:
        verdict = "verified" if milestone.verification.verified else "FAILED verification"
        claims = milestone.claims
        held = (
            f", claims {claims.holds} hold / {claims.fails} fail / {claims.gaps} gap"
            if claims
            else ""
        )
        click.echo(f"  {milestone.label}: {verdict}{held}")
    if built.failed:
        click.echo(
            f"{len(built.failed)} milestone(s) failed verification and are marked so on the site",
            err=True,
        )
        ctx.exit(1)
