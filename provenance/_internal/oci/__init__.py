"""OCI registries: image references, a distribution API client, attestations as referrers.

``reference`` parses image names, ``credentials`` reads docker's login file, ``client`` speaks the
distribution API (auth challenges included), ``attach`` pushes and fetches attestations. The
``oci`` collector (``provenance.capture.oci``) and ``prov push`` / ``prov verify oci://`` build
on these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from provenance._internal.oci import credentials
from provenance._internal.oci.client import RegistryClient
from provenance._internal.oci.reference import Reference

if TYPE_CHECKING:
    import httpx


def connect(
    image: Reference,
    env: Mapping[str, str],
    *,
    plain_http: bool = False,
    timeout: float = 30.0,
    http: httpx.Client | None = None,
) -> RegistryClient:
    """A client for the image's registry, logged in as docker would be (or anonymous)."""
    return RegistryClient(
        image.registry,
        api_host=image.api_host,
        credentials=credentials.lookup(image.registry, env),
        plain_http=plain_http,
        timeout=timeout,
        http=http,
    )
