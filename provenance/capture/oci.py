"""The oci collector: a container image by tag or digest, through the OCI distribution API.

The manifest digest is the sha256 of the manifest bytes received (checked against a pinned digest
and the registry's ``Docker-Content-Digest``); the manifest and config bytes are kept in the
store. For an index, every platform's manifest digest is recorded and one platform's image is
described (config, layers, labels). Layers are listed, never downloaded: their digests are the
registry's word. A 401 / 403 / 404 is evidence: the capture fails with the status and challenge.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import Field, field_validator, model_validator

from provenance._internal import cancel
from provenance._internal.oci import connect
from provenance._internal.oci import reference as references
from provenance._internal.oci.client import INDEX_TYPES, Fetched, RegistryClient, as_dict, as_list
from provenance.capture.base import Collector, Recorder, SourceOptions
from provenance.errors import RegistryError, UsageError
from provenance.model import Capture, CaptureError

DEFAULT_PLATFORM = "linux/amd64"
LABEL_REVISION = "org.opencontainers.image.revision"
LABEL_SOURCE = "org.opencontainers.image.source"
LABEL_CREATED = "org.opencontainers.image.created"
_TRANSIENT = frozenset({"timeout", "connect", "reset"})


class OciOptions(SourceOptions):
    """A container image by digest: manifest(s), config, layers and labels."""

    image: str = Field(min_length=1, description="registry/repository:tag or ...@sha256:<hex>")
    platform: str | None = Field(
        default=None, description="for an index: the os/arch[/variant] to describe"
    )
    plain_http: bool = Field(default=False, description="http, for a registry on 127.0.0.1 only")
    git_source: str | None = Field(
        default=None, description="the git source whose commit the revision label should name"
    )

    @field_validator("image")
    @classmethod
    def _parses(cls, value: str) -> str:
        try:
            references.parse(value)
        except UsageError as e:  # a ValueError, so that validate_source names file and line
            raise ValueError(e.message) from e
        return value

    @model_validator(mode="after")
    def _plain_http_is_local(self) -> OciOptions:
        if self.plain_http and not references.parse(self.image).is_loopback:
            raise ValueError("plain_http is allowed only for a registry on 127.0.0.1 / localhost")
        return self


class OciCollector(Collector):
    kind = "oci"
    options_model = OciOptions
    options: OciOptions

    def collect(self) -> Capture:
        options = self.options
        image = references.parse(options.image)
        request: dict[str, Any] = {
            "image": options.image,  # the reference grammar leaves no room for credentials
            "platform": options.platform,
            "plain_http": options.plain_http,
            "git_source": options.git_source,
        }
        recorder = Recorder(self, request)
        base: dict[str, Any] = {
            "reference": str(image),
            "registry": image.registry,
            "repository": image.repository,
            "tag": image.tag,
            "requested_digest": image.digest,
        }
        attempts = self.context.retries + 1
        for attempt in range(1, attempts + 1):
            started = time.monotonic()
            recorder.blobs.clear()  # a failed or retried attempt keeps no half-observed image
            client = connect(
                image, self.context.env, plain_http=options.plain_http, timeout=self.timeout
            )
            try:
                with client:
                    data = self._observe(client, image, recorder)
                    base["credentials_used"] = client.credentials is not None
                return recorder.finish({**base, **data}, ("observed", "provider-asserted"))
            except RegistryError as error:
                recorder.attempts.append(
                    {
                        "attempt": attempt,
                        "error": error.kind,
                        "status": error.status,
                        "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
                    }
                )
                retry = error.kind in _TRANSIENT or (error.status or 0) in (429, 502, 503, 504)
                if retry and attempt < attempts:
                    cancel.sleep(min(0.2 * 2 ** (attempt - 1), 2.0))
                    continue
                recorder.blobs.clear()
                failed = {
                    **base,
                    "http_status": error.status,
                    "credentials_used": client.credentials is not None,
                }
                detail = {k: v for k, v in error.detail.items() if v is not None}
                return recorder.finish(
                    failed,
                    ("observed",) if error.status else (),
                    CaptureError(type=error.kind, message=error.message, detail=detail),
                )
        raise AssertionError("unreachable: the loop returns")

    def _observe(
        self, client: RegistryClient, image: references.Reference, recorder: Recorder
    ) -> dict[str, Any]:
        top = client.get_manifest(image.repository, image.reference)
        recorder.keep("manifest", top.data, top.media_type or None)
        document = top.json()
        media_type = top.media_type or str(document.get("mediaType", ""))
        data: dict[str, Any] = {
            "digest": top.digest,
            "registry_digest": top.registry_digest,
            "media_type": media_type,
            "size": len(top.data),
            "platforms": [],
            "platform": None,
        }
        manifest, manifest_doc = top, document
        if media_type in INDEX_TYPES or "manifests" in document:
            platforms = [_platform_entry(m) for m in as_list(document.get("manifests"))]
            data["platforms"] = platforms
            chosen = self._choose(platforms)
            data["platform"] = chosen["platform"]
            manifest = client.get_manifest(image.repository, chosen["digest"])
            recorder.keep("image-manifest", manifest.data, manifest.media_type or None)
            manifest_doc = manifest.json()
        data["image"], config = self._image(client, image.repository, manifest, manifest_doc)
        if config is not None:
            recorder.keep("config", config[0], data["image"]["config"]["media_type"])
        labels = config[1] if config else {}
        if data["platform"] is None and data["image"]["os"]:
            data["platform"] = _platform_name(data["image"])
        annotations = as_dict(manifest_doc.get("annotations")) or as_dict(
            document.get("annotations")
        )
        data["labels"] = labels
        data["annotations"] = annotations
        for key, label in (
            ("revision", LABEL_REVISION),
            ("source", LABEL_SOURCE),
            ("created", LABEL_CREATED),
        ):
            value = labels.get(label, data["annotations"].get(label))
            data[key] = value if isinstance(value, str) else None
        return data

    def _choose(self, platforms: list[dict[str, Any]]) -> dict[str, Any]:
        wanted = self.options.platform
        usable = [
            p
            for p in platforms
            if p["platform"] != "unknown/unknown" and isinstance(p["digest"], str)
        ]
        if wanted:
            for entry in usable:
                if entry["platform"] == wanted:
                    return entry
            names = ", ".join(p["platform"] for p in platforms) or "none"
            raise RegistryError(
                f"the index has no {wanted} image (it has: {names})",
                kind="platform-not-found",
                detail={"platforms": [p["platform"] for p in platforms]},
            )
        for entry in usable:
            if entry["platform"] == DEFAULT_PLATFORM:
                return entry
        if not usable:
            raise RegistryError("the index lists no image manifest", kind="protocol")
        return usable[0]

    def _image(
        self, client: RegistryClient, repository: str, manifest: Fetched, doc: dict[str, Any]
    ) -> tuple[dict[str, Any], tuple[bytes, dict[str, Any]] | None]:
        descriptor = as_dict(doc.get("config"))
        layers = [
            {
                "digest": layer.get("digest"),
                "size": layer.get("size"),
                "media_type": layer.get("mediaType"),
            }
            for layer in as_list(doc.get("layers"))
            if isinstance(layer, dict)
        ]
        image: dict[str, Any] = {
            "digest": manifest.digest,
            "media_type": manifest.media_type or doc.get("mediaType"),
            "artifact_type": doc.get("artifactType"),
            "config": {
                "digest": descriptor.get("digest"),
                "media_type": descriptor.get("mediaType"),
                "size": descriptor.get("size"),
            },
            "layers": layers,
            "os": None,
            "architecture": None,
            "variant": None,
            "created": None,
        }
        digest = descriptor.get("digest")
        if not isinstance(digest, str):
            return image, None
        raw = client.get_blob(repository, digest)
        if descriptor.get("size") != len(raw):
            raise RegistryError(
                f"config {digest} has {len(raw)} bytes, the manifest says {descriptor.get('size')}",
                kind="digest-mismatch",
            )
        config = Fetched(raw, str(descriptor.get("mediaType", "")), digest, None)
        try:
            parsed = config.json()
        except RegistryError:
            return image, (raw, {})  # an artifact's config need not be an image config
        for key in ("os", "architecture", "variant", "created"):
            if isinstance(parsed.get(key), str):
                image[key] = parsed[key]
        labels = as_dict(as_dict(parsed.get("config")).get("Labels"))
        return image, (raw, {str(k): str(v) for k, v in labels.items()})


def _platform_entry(value: Any) -> dict[str, Any]:
    descriptor = as_dict(value)
    platform = as_dict(descriptor.get("platform"))
    entry = {
        "os": platform.get("os"),
        "architecture": platform.get("architecture"),
        "variant": platform.get("variant"),
    }
    return {
        "platform": _platform_name(entry),
        "digest": descriptor.get("digest"),
        "media_type": descriptor.get("mediaType"),
        "size": descriptor.get("size"),
    }


def _platform_name(entry: dict[str, Any]) -> str:
    name = f"{entry.get('os') or 'unknown'}/{entry.get('architecture') or 'unknown'}"
    return f"{name}/{entry['variant']}" if entry.get("variant") else name
