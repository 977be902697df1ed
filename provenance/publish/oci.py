"""Attestations beside an image: push them as OCI 1.1 referrers, find and fetch them again.

An attestation file becomes an artifact manifest (``artifactType`` ``application/vnd.in-toto+json``,
an empty config, one layer holding the file's bytes) whose ``subject`` is the image's manifest.
A registry with the referrers API indexes it itself and says so with an ``OCI-Subject`` header;
for one without (CNCF distribution 2.x among them) the client keeps the list in an image index
tagged ``sha256-<hex of the subject digest>`` (distribution spec v1.1, "Referrers Tag Schema").
Finding tries the referrers API first and falls back to that tag.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from provenance._internal.oci.client import (
    OCI_INDEX,
    OCI_MANIFEST,
    RegistryClient,
    as_dict,
    as_list,
    sha256_digest,
)
from provenance._internal.oci.reference import Reference
from provenance.errors import RegistryError

ARTIFACT_TYPE = "application/vnd.in-toto+json"
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY_CONFIG = b"{}"
DSSE_MEDIA_TYPE = "application/vnd.dsse.envelope.v1+json"
SIGSTORE_BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
TITLE = "org.opencontainers.image.title"
CREATED = "org.opencontainers.image.created"

Method = Literal["referrers-api", "referrers-tag"]


def layer_media_type(filename: str) -> str:
    if filename.endswith(".sigstore.json") or filename.endswith(".sigstore"):
        return SIGSTORE_BUNDLE_MEDIA_TYPE
    return DSSE_MEDIA_TYPE


def referrers_tag(digest: str) -> str:
    algorithm, _, hex_digest = digest.partition(":")
    return f"{algorithm}-{hex_digest}"


def _json_bytes(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


@dataclass(frozen=True)
class PushResult:
    subject: str
    manifest: str
    method: Method
    tag: str | None


def push_attestation(
    client: RegistryClient, image: Reference, data: bytes, filename: str, created: str
) -> PushResult:
    """Attach ``data`` (an attestation file's bytes) to the image ``image`` names."""
    repository = image.repository
    subject = client.get_manifest(repository, image.reference)
    client.push_blob(repository, EMPTY_CONFIG)
    layer = client.push_blob(repository, data)
    annotations = {CREATED: created, TITLE: filename}
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": ARTIFACT_TYPE,
        "config": {
            "mediaType": EMPTY_MEDIA_TYPE,
            "digest": sha256_digest(EMPTY_CONFIG),
            "size": len(EMPTY_CONFIG),
            "data": "e30=",
        },
        "layers": [
            {
                "mediaType": layer_media_type(filename),
                "digest": layer,
                "size": len(data),
                "annotations": {TITLE: filename},
            }
        ],
        "subject": {
            "mediaType": subject.media_type or OCI_MANIFEST,
            "digest": subject.digest,
            "size": len(subject.data),
        },
        "annotations": annotations,
    }
    body = _json_bytes(manifest)
    pushed = client.put_manifest(repository, sha256_digest(body), body, OCI_MANIFEST)
    if pushed.subject_processed:
        return PushResult(subject.digest, pushed.digest, "referrers-api", None)
    tag = referrers_tag(subject.digest)
    listed = client.tag_index(repository, tag) or []
    if not any(d.get("digest") == pushed.digest for d in listed):
        listed.append(
            {
                "mediaType": OCI_MANIFEST,
                "digest": pushed.digest,
                "size": len(body),
                "artifactType": ARTIFACT_TYPE,
                "annotations": annotations,
            }
        )
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": listed}
    client.put_manifest(repository, tag, _json_bytes(index), OCI_INDEX)
    return PushResult(subject.digest, pushed.digest, "referrers-tag", tag)


@dataclass(frozen=True)
class Attached:
    """One attestation found beside an image: its bytes, or why they could not be had."""

    manifest: str
    filename: str
    media_type: str
    data: bytes | None
    error: str | None = None


@dataclass(frozen=True)
class Found:
    subject: str
    method: Method
    attestations: tuple[Attached, ...]


def fetch_attestations(client: RegistryClient, image: Reference) -> Found:
    """Every in-toto attestation attached to the image, each checked against its digests."""
    repository = image.repository
    subject = client.get_manifest(repository, image.reference)
    method: Method = "referrers-api"
    listed = client.referrers(repository, subject.digest, ARTIFACT_TYPE)
    if listed is None:
        method = "referrers-tag"
        listed = client.tag_index(repository, referrers_tag(subject.digest)) or []
    found = []
    for descriptor in listed:
        if descriptor.get("artifactType") != ARTIFACT_TYPE:
            continue  # the API may ignore the filter (no OCI-Filters-Applied): filter here too
        found.extend(_fetch_one(client, repository, subject.digest, descriptor["digest"]))
    return Found(subject.digest, method, tuple(found))


def _fetch_one(
    client: RegistryClient, repository: str, subject: str, digest: str
) -> list[Attached]:
    try:
        manifest = client.get_manifest(repository, digest, accept=(OCI_MANIFEST,)).json()
    except RegistryError as e:
        return [Attached(digest, digest, "", None, e.message)]
    named = manifest.get("subject")
    if not isinstance(named, dict) or named.get("digest") != subject:
        # A referrers list is only an index: the manifest itself must name this image.
        return [Attached(digest, digest, "", None, f"its subject is not {subject}")]
    attached = []
    for layer in as_list(manifest.get("layers")):
        if not isinstance(layer, dict) or not isinstance(layer.get("digest"), str):
            continue
        annotations = as_dict(layer.get("annotations"))
        filename = str(annotations.get(TITLE) or layer["digest"])
        media_type = str(layer.get("mediaType", ""))
        try:
            data = client.get_blob(repository, layer["digest"])
        except RegistryError as e:
            attached.append(Attached(digest, filename, media_type, None, e.message))
            continue
        if layer.get("size") != len(data):
            error = f"{len(data)} bytes, the manifest says {layer.get('size')}"
            attached.append(Attached(digest, filename, media_type, None, error))
            continue
        attached.append(Attached(digest, filename, media_type, data))
    return attached
