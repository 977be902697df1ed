"""``prov push`` and ``prov verify oci://...`` as calls: reach the registry, then push or verify.

Pushing checks the file is an attestation first (its first line is JSON); verifying fetches
every attachment (``oci.fetch_attestations``) and leaves the verdict to ``verify.oci``, under
the auditor's trust.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from provenance._internal.oci import connect
from provenance._internal.oci.reference import Reference, parse
from provenance.errors import UsageError
from provenance.model import utc_now
from provenance.publish.oci import PushResult, fetch_attestations, push_attestation
from provenance.verify.oci import ImageAudit, audit_image
from provenance.verify.policy import TrustOptions, from_auditor

__all__ = ["push_file", "verify_image"]


def push_file(
    attestation: Path, image: str, env: Mapping[str, str], *, plain_http: bool = False
) -> tuple[Reference, PushResult]:
    """Attach an attestation file to the image ``oci://...`` names."""
    reference = parse(image)
    try:
        data = attestation.read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read {attestation}", cause=str(e)) from e
    first = data.strip().split(b"\n", 1)[0]
    try:
        json.loads(first)
    except (ValueError, RecursionError) as e:
        raise UsageError(
            f"{attestation} is not an attestation file (its first line is not JSON)",
            hint="push the *.intoto.jsonl or *.sigstore.json file that `prov snapshot` wrote",
        ) from e
    with connect(reference, env, plain_http=plain_http) as client:
        result = push_attestation(client, reference, data, attestation.name, utc_now())
    return reference, result


def verify_image(
    image: str,
    trust: TrustOptions,
    env: Mapping[str, str],
    *,
    plain_http: bool = False,
    store: Path | None = None,
    expect_label: str | None = None,
) -> ImageAudit:
    """Fetch the attestations attached to an image and verify each (``verify.oci``)."""
    policy = from_auditor(trust)  # before the network: no trust is a usage error, not a fetch
    reference = parse(image)
    with connect(reference, env, plain_http=plain_http) as client:
        found = fetch_attestations(client, reference)
    return audit_image(
        str(reference),
        found.subject,
        found.method,
        found.attestations,
        policy,
        where=f"oci://{reference.registry}/{reference.repository}",
        store=store,
        expect_label=expect_label,
    )
