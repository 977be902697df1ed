"""Content mode: re-hash every listed object's bytes with blake3, shard by shard.

The listing manifest is read in key order and cut into shards of objects to hash (at most
``shard_objects`` objects or ``shard_bytes`` bytes). Shards run on an executor: in this process
(``LocalExecutor``) or as Ray tasks (``RayExecutor``, ``ray.init(address=...)``). A bounded
window of shards is in flight; results are written in shard order, so the content manifest is
the same byte for byte whichever executor ran it and in whatever order shards finished. A shard
that fails (an exception, or a worker that died) is submitted again up to ``retries`` times;
each failed attempt is recorded.

Objects unchanged since a baseline manifest (same key and size, and the same version id or
ETag, or for plain files the same modification time) take their blake3 from the baseline
instead of being read again.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import blake3

from provenance._internal.objectstore import StoreSpec
from provenance.errors import CollectorError, ContentFailed, MissingDependencyError
from provenance.store.manifest import ManifestInfo, ManifestWriter, iter_entries
from provenance.store.objects import Store

log = logging.getLogger(__name__)

ShardItem = tuple[str, str | None]
"""An object to hash: its key and, when the listing has one, its version id."""
ShardResult = list[tuple[str, int]]
"""Per object, in order: the blake3 hex of its bytes and how many bytes were read."""
ShardFn = Callable[[StoreSpec, list[ShardItem]], ShardResult]
Progress = Callable[[int, int, int, int], None]
"""(objects done, objects in the listing, bytes hashed, shards done)."""

READ = 8 << 20


def hash_shard(spec: StoreSpec, items: list[ShardItem]) -> ShardResult:
    """Hash each object of one shard; runs wherever the executor puts it."""
    fs = None if spec.protocol == "file" else spec.filesystem()
    results: ShardResult = []
    for key, version in items:
        hasher = blake3.blake3()
        size = 0
        with spec.open(key, version, fs=fs) as handle:
            while chunk := handle.read(READ):
                hasher.update(chunk)
                size += len(chunk)
        results.append((hasher.hexdigest(), size))
    return results


class ShardFailed(Exception):
    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message


class Executor(Protocol):
    name: str
    parallelism: int

    def submit(self, spec: StoreSpec, items: list[ShardItem]) -> Any: ...

    def result(self, handle: Any) -> ShardResult:
        """The shard's result, or ShardFailed."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """Runs each shard in this process when its result is asked for."""

    name = "local"
    parallelism = 1

    def __init__(self, shard_fn: ShardFn = hash_shard) -> None:
        self._shard_fn = shard_fn

    def submit(self, spec: StoreSpec, items: list[ShardItem]) -> Any:
        return (spec, items)

    def result(self, handle: Any) -> ShardResult:
        spec, items = handle
        try:
            return self._shard_fn(spec, items)
        except OSError as e:
            raise ShardFailed(type(e).__name__, str(e)) from e

    def close(self) -> None:
        pass


class RayExecutor:
    """Runs shards as Ray tasks. Connects to ``address`` ("auto", "ray://host:10001", or
    "local" to start a cluster on this machine) unless Ray is already initialised."""

    name = "ray"

    def __init__(self, address: str, shard_fn: ShardFn = hash_shard) -> None:
        try:
            import ray as ray_module
        except ImportError as e:
            raise MissingDependencyError(
                "content hashing on a Ray cluster needs the ray package",
                hint="pip install 'prov[ray]', or leave ray_address unset to hash in-process",
            ) from e
        ray: Any = ray_module
        self._ray = ray
        self._owns = False
        if not ray.is_initialized():
            ray.init(
                address=None if address == "local" else address,
                logging_level=logging.WARNING,
                log_to_driver=False,
                include_dashboard=False,
            )
            self._owns = True
        # Retries are ours (max_retries=0): each failed attempt is recorded in the capture.
        self._remote = ray.remote(max_retries=0, retry_exceptions=False)(shard_fn)
        self.parallelism = max(1, int(ray.cluster_resources().get("CPU", 1)))

    def submit(self, spec: StoreSpec, items: list[ShardItem]) -> Any:
        return self._remote.remote(spec, items)

    def result(self, handle: Any) -> ShardResult:
        try:
            result: ShardResult = self._ray.get(handle)
        except self._ray.exceptions.RayError as e:
            cause = getattr(e, "cause", None)
            name = type(cause).__name__ if isinstance(cause, BaseException) else type(e).__name__
            raise ShardFailed(name, str(e).splitlines()[0] if str(e) else name) from e
        return result

    def close(self) -> None:
        if self._owns:
            self._ray.shutdown()


@dataclass
class ContentResult:
    manifest: ManifestInfo
    hashed: int = 0
    hashed_bytes: int = 0
    reused: int = 0
    reused_bytes: int = 0
    shards: int = 0
    attempts: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """What the capture's data keeps: nothing here depends on the executor or on retries."""
        return {
            "algorithm": "blake3",
            "manifest": self.manifest.to_json(),
            "hashed": self.hashed,
            "hashed_bytes": self.hashed_bytes,
            "reused": self.reused,
            "reused_bytes": self.reused_bytes,
        }


def unchanged(entry: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Whether ``old`` (a baseline content entry) still describes ``entry``'s bytes."""
    if "blake3" not in old or "content_size" in old or entry.get("size") != old.get("size"):
        return False
    tokens = [name for name in ("version_id", "etag") if name in entry]
    if not tokens and "last_modified" in entry:
        tokens = ["last_modified"]
    return bool(tokens) and all(entry.get(name) == old.get(name) for name in tokens)


def _join(
    entries: Iterator[dict[str, Any]], baseline: Iterator[dict[str, Any]] | None
) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Pair each listing entry with the baseline entry of the same key (both key-sorted)."""
    if baseline is None:
        for entry in entries:
            yield entry, None
        return
    old = next(baseline, None)
    for entry in entries:
        while old is not None and old["key"] < entry["key"]:
            old = next(baseline, None)
        yield entry, old if old is not None and old["key"] == entry["key"] else None


@dataclass
class _Window:
    number: int
    entries: list[dict[str, Any]]
    positions: list[int]
    items: list[ShardItem]
    handle: Any = None


def hash_listing(
    store: Store,
    spec: StoreSpec,
    listing: ManifestInfo,
    executor: Executor,
    *,
    baseline: ManifestInfo | None = None,
    shard_objects: int = 1000,
    shard_bytes: int = 1 << 30,
    retries: int = 3,
    progress: Progress | None = None,
) -> ContentResult:
    """Write the content manifest of ``listing``: every entry plus the blake3 of its bytes."""
    writer = ManifestWriter(store)
    result = ContentResult(manifest=listing)
    in_flight: deque[_Window] = deque()
    max_in_flight = 2 * executor.parallelism + 1
    done_objects = 0

    def drain() -> None:
        nonlocal done_objects
        window = in_flight.popleft()
        hashes = _with_retries(executor, spec, window, retries, result.attempts)
        for position, (digest, size) in zip(window.positions, hashes, strict=True):
            entry = window.entries[position]
            entry["blake3"] = digest
            if size != entry.get("size"):
                entry["content_size"] = size  # the object changed between listing and reading
            result.hashed += 1
            result.hashed_bytes += size
        for entry in window.entries:
            writer.add(entry)
        done_objects += len(window.entries)
        result.shards += 1
        log.info(
            "content: %d of %d objects, %d bytes hashed",
            done_objects,
            listing.count,
            result.hashed_bytes,
        )
        if progress:
            progress(done_objects, listing.count, result.hashed_bytes, result.shards)

    def close(window: _Window) -> None:
        if window.items:
            window.handle = executor.submit(spec, window.items)
        in_flight.append(window)
        while len(in_flight) > max_in_flight:
            drain()

    old_entries = iter_entries(store, baseline.blob) if baseline else None
    number = 0
    window = _Window(number, [], [], [])
    pending_bytes = 0
    try:
        for entry, old in _join(iter_entries(store, listing.blob), old_entries):
            if old is not None and unchanged(entry, old):
                entry["blake3"] = old["blake3"]
                result.reused += 1
                result.reused_bytes += int(entry.get("size", 0))
            else:
                window.positions.append(len(window.entries))
                window.items.append((entry["key"], entry.get("version_id")))
                pending_bytes += int(entry.get("size", 0))
            window.entries.append(entry)
            if (
                len(window.items) >= shard_objects
                or pending_bytes >= shard_bytes
                or len(window.entries) >= 10 * shard_objects
            ):
                close(window)
                number += 1
                window, pending_bytes = _Window(number, [], [], []), 0
        if window.entries:
            close(window)
        while in_flight:
            drain()
    except BaseException:
        writer.abort()
        raise
    result.manifest = writer.commit()
    return result


def _with_retries(
    executor: Executor,
    spec: StoreSpec,
    window: _Window,
    retries: int,
    attempts: list[dict[str, Any]],
) -> ShardResult:
    if not window.items:
        return []
    handle = window.handle
    for attempt in range(1, retries + 2):
        try:
            hashes = executor.result(handle)
        except ShardFailed as e:
            attempts.append(
                {
                    "shard": window.number,
                    "attempt": attempt,
                    "executor": executor.name,
                    "error": e.error_type,
                    "message": e.message[:500],
                    "first_key": window.items[0][0],
                }
            )
            log.warning("content: shard %d attempt %d failed: %s", window.number, attempt, e)
            if attempt > retries:
                raise ContentFailed(
                    f"hashing shard {window.number} (from {window.items[0][0]!r}) failed "
                    f"{attempt} times: {e.message}",
                    attempts=attempts,
                ) from e
            handle = executor.submit(spec, window.items)
            continue
        if len(hashes) != len(window.items):
            raise CollectorError(
                f"shard {window.number} returned {len(hashes)} hashes "
                f"for {len(window.items)} objects"
            )
        return hashes
    raise AssertionError("unreachable")
