"""Garbage collection: drop the objects nothing refers to, and repack the rest.

``collect`` is given the set of live objects (``provenance.verify.reachable`` finds them from the
snapshot and note indexes) and runs under the store's exclusive lock, so no writer is between
writing an object and recording a reference to it. Live packed objects, and live loose objects
small enough to pack (but the ones named in ``keep_loose``), are copied into new packs, each
re-hashed on the way; the new packs are durable and indexed before any old file goes. A crash at
any point leaves every live object in place (in an old pack, a new one, or both).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import blake3

from provenance._internal.files import fsync_directory
from provenance.errors import IntegrityError
from provenance.store.objects import SMALL_OBJECT, Store, os_error
from provenance.store.packs import PACK_LIMIT, PackIndex, PackWriter


@dataclass
class GcReport:
    """What ``collect`` did (or, with ``dry_run``, would do)."""

    objects: int = 0
    live: int = 0
    removed: int = 0
    removed_bytes: int = 0
    disk_before: int = 0
    disk_after: int = 0
    packs_before: int = 0
    packs_after: int = 0
    repacked: int = 0
    unreferenced: list[str] = field(default_factory=list)

    @property
    def freed(self) -> int:
        return max(0, self.disk_before - self.disk_after)


def _disk(path: Path) -> int:
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return 0


def _loose(store: Store) -> list[tuple[str, Path, int]]:
    found = []
    for path in store.iter_objects():
        name = path.parent.name + path.name
        with contextlib.suppress(OSError):
            found.append((name, path, path.stat().st_size))
    return found


def collect(
    store: Store, live: set[str], *, keep_loose: Iterable[str] = (), dry_run: bool = False
) -> GcReport:
    """Remove every object not in ``live`` (blake3 hex digests); repack the live ones.

    The caller holds ``store.exclusive()``. Raises IntegrityError, having removed nothing, when
    a live object is corrupt (``prov fsck`` names it).
    """
    report = GcReport()
    keep = set(keep_loose)
    indexes = store.indexes(refresh=True)
    loose = _loose(store)
    report.packs_before = len(indexes)
    seen: set[str] = set()
    for index in indexes:
        report.disk_before += _disk(index.path) + _disk(index.pack_path)
        for raw, _, length in index.entries():
            name = raw.hex()
            if name not in seen:
                seen.add(name)
                if name not in live:
                    report.removed += 1
                    report.removed_bytes += length
                    report.unreferenced.append(name)
    moving: list[tuple[str, Path]] = []
    dropping: list[Path] = []
    for name, path, size in loose:
        report.disk_before += _disk(path)
        if name in live:
            if name not in keep and size <= SMALL_OBJECT:
                moving.append((name, path))
        else:
            dropping.append(path)
            if name not in seen:
                report.removed += 1
                report.removed_bytes += size
                report.unreferenced.append(name)
        seen.add(name)
    report.objects = len(seen)
    report.live = report.objects - report.removed
    if dry_run:
        report.disk_after = report.disk_before
        report.packs_after = report.packs_before
        return report
    tidy = report.removed == 0 and not moving and len(indexes) <= 1
    if tidy:
        report.disk_after = report.disk_before
        report.packs_after = report.packs_before
        return report
    try:
        new_packs = _repack(store, indexes, moving, live, report)
    except OSError as e:
        raise os_error("repack the store at", store.root, e) from e
    for index in indexes:  # index first: a reader never finds an index without its pack
        for path in (index.path, index.pack_path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        index.close()
    fans = set()
    for path in [*dropping, *(path for _, path in moving)]:
        with contextlib.suppress(FileNotFoundError):
            path.chmod(0o644)
            path.unlink()
            fans.add(path.parent)
    for directory in [*sorted(fans), store.packs_dir]:
        with contextlib.suppress(OSError):
            fsync_directory(directory)
    for directory in sorted(fans):
        with contextlib.suppress(OSError):
            directory.rmdir()  # only when empty
    store.forget_indexes()
    report.packs_after = len(new_packs)
    for index_path in new_packs:
        report.disk_after += _disk(index_path) + _disk(index_path.with_suffix(".pack"))
    for _, path, _ in _loose(store):
        report.disk_after += _disk(path)
    return report


def _repack(
    store: Store,
    indexes: list[PackIndex],
    moving: list[tuple[str, Path]],
    live: set[str],
    report: GcReport,
) -> list[Path]:
    """Copy every live packed object and every small live loose one into new packs."""
    store.packs_dir.mkdir(exist_ok=True)
    published: list[Path] = []
    written: set[bytes] = set()
    writer: PackWriter | None = None

    def add(raw: bytes, data: bytes) -> None:
        nonlocal writer
        if blake3.blake3(data).digest() != raw:
            raise IntegrityError(
                f"object blake3:{raw.hex()} is corrupt; nothing was collected",
                hint="run `prov fsck` to list every corrupt object",
            )
        if raw in written:
            return
        written.add(raw)
        if writer is None:
            writer = PackWriter(store.packs_dir)
        writer.add(raw, data)
        report.repacked += 1
        if writer.size >= PACK_LIMIT:
            published.append(writer.publish())
            writer = None

    try:
        for index in indexes:
            pack = index.pack()
            for raw, offset, length in sorted(index.entries(), key=lambda e: e[1]):
                if raw.hex() in live:
                    add(raw, pack[offset : offset + length])
        for name, path in moving:
            add(bytes.fromhex(name), path.read_bytes())
        if writer is not None:
            published.append(writer.publish())
            writer = None
    except BaseException:
        if writer is not None:
            writer.abort()
        for index_path in published:  # the old packs stay: nothing was lost
            for path in (index_path, index_path.with_suffix(".pack")):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        raise
    return published
