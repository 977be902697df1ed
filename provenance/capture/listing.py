"""The listing collector: every object under an object-store prefix, as one Merkle manifest.

For each object it keeps the key (relative to the prefix), the size and what the provider
says of it (ETag, checksums, version id, last-modified). Entries stream into a manifest blob in
key order (see ``provenance.store.manifest``), so a listing of millions of objects never sits in
memory. A listing the backend does not return in order is re-listed through an external merge
sort. A refused listing (AccessDenied, NoSuchBucket) is evidence: a failed capture with the
provider's error code, not a crash.

With ``content = true`` every object's bytes are also read and hashed with blake3
(``provenance.capture.content``), in this process or on a Ray cluster (``ray_address``);
objects unchanged since this source's previous snapshot in the store keep their earlier hash.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import Field, field_validator

from provenance._internal import cancel, redact
from provenance._internal.extsort import sort_entries
from provenance._internal.objectstore import (
    PROTOCOLS,
    StoreSpec,
    iter_local,
    iter_s3,
    iter_walk,
    parse_location,
)
from provenance._internal.progress import advance
from provenance.capture.base import CollectContext, Collector, Recorder, SourceOptions
from provenance.capture.content import ShardFn, hash_shard
from provenance.digest import Digest
from provenance.errors import CollectorError, ProvError
from provenance.model import Capture, CaptureError, Snapshot
from provenance.store.manifest import (
    BLOB_NAME,
    MEDIA_TYPE,
    ManifestInfo,
    ManifestWriter,
    OutOfOrder,
)
from provenance.store.objects import Store

log = logging.getLogger(__name__)

CONTENT_BLOB_NAME = "content-manifest.jsonl"


class ListingOptions(SourceOptions):
    """An object-store prefix or folder: a manifest of every object, rolled up into a root."""

    url: str = Field(min_length=1, description="s3://, gs://, hf://, file:// or a local path")
    endpoint_url: str | None = Field(default=None, description="an S3-compatible endpoint")
    region: str | None = Field(default=None, description="S3: the bucket's region")
    anonymous: bool = Field(default=True, description="false: use the ecosystem's credentials")
    versions: bool = Field(default=False, description="S3: record each object's version id")
    content: bool = Field(default=False, description="re-hash every object's bytes (blake3)")
    ray_address: str | None = Field(
        default=None, description='hash on Ray: "auto", "ray://HOST:10001" or "local"'
    )
    shard_objects: int = Field(
        default=1000, ge=1, le=1_000_000, description="content mode: objects per hashing shard"
    )
    shard_bytes: int = Field(
        default=1 << 30, ge=1, description="content mode: bytes per hashing shard at most"
    )
    reuse: bool = Field(
        default=True, description="keep the hashes of objects unchanged since the last snapshot"
    )

    @field_validator("url")
    @classmethod
    def _known_scheme(cls, value: str) -> str:
        scheme, sep, _ = value.partition("://")
        if sep and scheme.lower() not in PROTOCOLS:
            raise ValueError(f"unsupported scheme {scheme!r}; use one of {', '.join(PROTOCOLS)}")
        return value


def _counted(entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The entries, counted for the progress line; a Ctrl-C ends a listing of millions."""
    number = 0
    for number, entry in enumerate(entries, 1):
        yield entry
        if not number % 1024:
            cancel.check()
            advance(1024, "objects")
    advance(number % 1024, "objects")


class ListingCollector(Collector):
    kind = "listing"
    options_model = ListingOptions
    options: ListingOptions

    def __init__(
        self, options: SourceOptions, context: CollectContext, *, shard_fn: ShardFn = hash_shard
    ) -> None:
        super().__init__(options, context)
        self.shard_fn = shard_fn

    def spec(self) -> StoreSpec:
        options = self.options
        return dataclasses.replace(
            parse_location(options.url, self.context.base_dir),
            anonymous=options.anonymous,
            endpoint_url=options.endpoint_url,
            region=options.region,
            versions=options.versions,
            timeout=self.timeout,
            retries=self.context.retries,
        )

    def collect(self) -> Capture:
        options = self.options
        spec = self.spec()
        request: dict[str, Any] = {
            "url": redact.url(options.url),
            "endpoint_url": redact.url(options.endpoint_url) if options.endpoint_url else None,
            "anonymous": options.anonymous,
            "versions": options.versions,
            "content": options.content,
        }
        recorder = Recorder(self, request)
        data: dict[str, Any] = {"protocol": spec.protocol}
        try:
            info, writer = self._list(spec)
        except _Refused as refused:
            data["objects_listed"] = refused.listed
            return recorder.finish(data, error=refused.error)
        recorder.add_blob(BLOB_NAME, info.blob, info.blob_size, MEDIA_TYPE)
        data["manifest"] = info.to_json()
        data["prefixes"] = [p.__dict__ for p in writer.prefixes]
        data["prefixes_truncated"] = writer.prefixes_truncated
        establishes: tuple[Any, ...] = ("provider-asserted",)
        if options.content:
            from provenance.errors import ContentFailed

            try:
                data["content"] = self._content(spec, info, recorder)
            except ContentFailed as failed:
                recorder.attempts.extend(failed.attempts)
                error = CaptureError(type="content-read", message=failed.message[:500])
                return recorder.finish(data, establishes=establishes, error=error)
            establishes = ("observed", "provider-asserted")
        return recorder.finish(data, establishes=establishes)

    # -- the listing ---------------------------------------------------------------------------

    def _entries(self, spec: StoreSpec) -> Any:
        if spec.protocol == "file":
            return iter_local(spec.root)
        fs = spec.filesystem()
        if spec.protocol == "s3":
            return iter_s3(fs, spec)
        return iter_walk(fs, spec)

    def _list(self, spec: StoreSpec) -> tuple[ManifestInfo, ManifestWriter]:
        """One pass over the listing into a manifest (a second, sorted, if it came unsorted)."""
        writer = ManifestWriter(self.context.store)
        listed = 0
        try:
            try:
                for entry in _counted(self._entries(spec)):
                    writer.add(entry)
                    listed += 1
            except OutOfOrder as e:
                # Some S3-compatible stores do not list in byte order: list again, sorted.
                log.warning("%s: %s; listing again through an external sort", spec.root, e)
                writer.abort()
                writer, listed = ManifestWriter(self.context.store), 0
                for entry in sort_entries(_counted(self._entries(spec))):
                    writer.add(entry)
                    listed += 1
        except OutOfOrder as e:
            writer.abort()
            raise CollectorError(
                f"source {self.options.name!r}: the listing holds a key twice", cause=str(e)
            ) from e
        except ProvError:
            writer.abort()
            raise
        except Exception as e:
            writer.abort()
            error = capture_error(e, spec)
            if error is None:
                raise CollectorError(
                    f"source {self.options.name!r}: cannot list {redact.url(self.options.url)}",
                    cause=f"{type(e).__name__}: {e}",
                    hint="check the URL, the endpoint and the credentials (anonymous = false "
                    "uses the provider's usual credential chain)",
                ) from e
            raise _Refused(error, listed) from e
        return writer.commit(), writer

    # -- content mode --------------------------------------------------------------------------

    def _content(self, spec: StoreSpec, listing: ManifestInfo, recorder: Recorder) -> Any:
        from provenance.capture.content import Executor, LocalExecutor, RayExecutor, hash_listing

        options = self.options
        store = self.context.store
        baseline = None
        if options.reuse:
            baseline = find_baseline(store, options.name, recorder.request)
        executor: Executor = (
            RayExecutor(options.ray_address, self.shard_fn)
            if options.ray_address
            else LocalExecutor(self.shard_fn)
        )
        try:
            result = hash_listing(
                store,
                spec,
                listing,
                executor,
                baseline=baseline[0] if baseline else None,
                shard_objects=options.shard_objects,
                shard_bytes=options.shard_bytes,
                retries=self.context.retries,
            )
        finally:
            executor.close()
        recorder.attempts.extend(result.attempts)
        recorder.add_blob(
            CONTENT_BLOB_NAME, result.manifest.blob, result.manifest.blob_size, MEDIA_TYPE
        )
        data = result.to_json()
        data["baseline"] = (
            {"snapshot_sha256": baseline[1], "root": baseline[0].root} if baseline else None
        )
        return data


class _Refused(Exception):
    def __init__(self, error: CaptureError, listed: int) -> None:
        super().__init__(error.message)
        self.error = error
        self.listed = listed


def capture_error(e: BaseException, spec: StoreSpec) -> CaptureError | None:
    """The remote side's refusal or failure as evidence; None for a local misconfiguration."""
    response = None
    for candidate in (e, e.__cause__, e.__context__):
        response = getattr(candidate, "response", None)
        if isinstance(response, dict) and isinstance(response.get("Error"), dict):
            break
        response = None
    if response is not None:
        error, meta = response["Error"], response.get("ResponseMetadata") or {}
        code, message = error.get("Code"), error.get("Message")
        detail: dict[str, Any] = {
            "status": meta.get("HTTPStatusCode"),
            "code": code,
            "message": message,
            "request_id": meta.get("RequestId") or None,
            "host_id": meta.get("HostId") or None,
        }
        return CaptureError(
            type="http-status",
            message=f"{code}: {message}" if message else str(code),
            detail={k: v for k, v in detail.items() if v is not None},
        )
    names = {type(c).__name__ for c in (e, e.__cause__, e.__context__) if c is not None}
    text = f"{type(e).__name__}: {e}"[:500]
    if any("Timeout" in name for name in names) or isinstance(e, TimeoutError):
        return CaptureError(type="timeout", message=text)
    if any("Connect" in name for name in names) or isinstance(e, ConnectionError):
        return CaptureError(type="connect", message=text)
    if isinstance(e, FileNotFoundError):
        return CaptureError(type="not-found", message=text)
    if isinstance(e, PermissionError):
        return CaptureError(type="permission", message=text)
    if any("Credential" in name for name in names):
        return None
    if isinstance(e, OSError):
        return CaptureError(type="protocol", message=text)
    return None


def find_baseline(
    store: Store, source: str, request: dict[str, Any]
) -> tuple[ManifestInfo, str] | None:
    """The content manifest of ``source`` in the newest snapshot of the store that holds one
    for the same request, checked: the attestation's bytes hash to their address, its subject
    matches its snapshot, and the manifest blob hashes to its address. Signatures are not
    checked here (no keys); ``prov verify`` checks them."""
    from provenance.attest import dsse
    from provenance.attest import statement as statements
    from provenance.attest.statement import check_subject

    for entry in reversed(store.snapshots()):
        if source not in entry.sources or source in entry.failed:
            continue
        try:
            document = store.read(Digest.parse(entry.attestation))
            parsed = statements.parse(dsse.parse(document.strip()).payload)
            check_subject(parsed)
            snapshot = Snapshot.model_validate(parsed.predicate)
            capture = snapshot.capture(source)
        except (ProvError, ValueError, KeyError) as e:
            log.info("baseline: skipping snapshot %s: %s", entry.label, e)
            continue
        if capture.kind != "listing" or capture.status != "ok" or capture.request != request:
            continue
        try:
            info = ManifestInfo.from_capture(capture, content=True)
            if store.check(Digest.parse(info.blob)) != info.blob_size:
                continue
        except ProvError:
            continue
        return info, entry.sha256
    return None
