"""``prov push``: attach an attestation to an image (``publish.image``)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from provenance.cli._options import plain_http_option


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
    from provenance.publish.image import push_file

    reference, result = push_file(attestation, image, os.environ, plain_http=plain_http)
    how = (
        "listed by the registry's referrers API"
        if result.method == "referrers-api"
        else f"listed in the referrers tag {result.tag} (the registry has no referrers API)"
    )
    click.echo(f"attached {attestation.name} to {reference}")
    click.echo(f"  image:       {result.subject}")
    click.echo(f"  attestation: {result.manifest}, {how}")
