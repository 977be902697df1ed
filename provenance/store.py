"""The content-addressed store: every byte string prov keeps, addressed by its blake3.

Layout under the store root (``.prov`` by default)::

    objects/ab/cdef...     an object: the bytes whose blake3 hex is "abcdef..." (read-only)
    tmp/.tmp-<pid>-<id>    a write in progress; published by hard link, so never half-visible
    snapshots/<sha256>.json   the index of snapshots taken into this store (see ``SnapshotEntry``)

Objects are written once and never changed: a second write of the same bytes is a no-op, and two
processes writing the same object race harmlessly because publishing is an exclusive link.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import blake3
from pydantic import BaseModel, ConfigDict, Field

from provenance._internal.files import atomic_write, create_temp, publish, sweep_temps
from provenance.digest import CHUNK, Digest, blake3_file
from provenance.errors import IntegrityError, StoreError, UsageError

DEFAULT_STORE = ".prov"


class SnapshotEntry(BaseModel):
    """One line of the timeline: a snapshot taken into this store and where its attestation is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: str
    label: str
    created: str
    attestation: str = Field(description="blake3 address of the attestation file's bytes")
    path: str = Field(description="where the attestation file was written")
    signers: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    failed: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Written:
    digest: Digest
    size: int


@dataclass
class FsckReport:
    """What ``fsck`` found. Temp names are bare for tmp/, else relative to the store root."""

    checked: int = 0
    corrupt: list[str] = field(default_factory=list)
    removed_temp: list[str] = field(default_factory=list)
    in_flight: list[str] = field(default_factory=list)


def os_error(action: str, path: Path, e: OSError) -> StoreError:
    """The StoreError for a failed write: a full disk and a read-only store say so."""
    if e.errno == errno.ENOSPC or e.errno == errno.EFBIG or e.errno == errno.EDQUOT:
        return StoreError(
            f"could not {action} {path}: the disk is full",
            cause=str(e),
            hint="free space or point --store / PROV_STORE at a larger volume; "
            "nothing partial was kept, run `prov fsck` to confirm",
        )
    if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return StoreError(
            f"could not {action} {path}: permission denied",
            cause=str(e),
            hint="make the store writable, or choose another with --store / PROV_STORE",
        )
    return StoreError(f"could not {action} {path}", cause=str(e))


class BlobWriter:
    """Streams bytes into a temp file while hashing them; ``commit`` publishes the object."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._hasher = blake3.blake3()
        self._size = 0
        try:
            self._temp, fd = create_temp(store.tmp_dir)
        except OSError as e:
            raise os_error("write to the store at", store.root, e) from e
        self._file: BinaryIO = os.fdopen(fd, "wb")

    def write(self, chunk: bytes) -> None:
        try:
            self._file.write(chunk)
        except OSError as e:
            self.abort()
            raise os_error("write to the store at", self._store.root, e) from e
        self._hasher.update(chunk)
        self._size += len(chunk)

    @property
    def size(self) -> int:
        return self._size

    def commit(self) -> Written:
        digest = Digest("blake3", self._hasher.hexdigest())
        final = self._store.object_path(digest)
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            os.fchmod(self._file.fileno(), 0o444)
            if final.exists():
                self._temp.unlink()
            else:
                final.parent.mkdir(exist_ok=True)
                publish(self._temp, final, overwrite=False)
            self._file.close()  # the lock goes with it, once the temp file is gone
        except OSError as e:
            self.abort()
            raise os_error("write to the store at", self._store.root, e) from e
        return Written(digest, self._size)

    def abort(self) -> None:
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(FileNotFoundError):
            self._temp.unlink()

    def __enter__(self) -> BlobWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self.abort()


class Store:
    """A content-addressed store rooted at a directory."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.objects_dir = self.root / "objects"
        self.tmp_dir = self.root / "tmp"
        self.snapshots_dir = self.root / "snapshots"

    # -- set-up ----------------------------------------------------------------------------

    def init(self) -> Store:
        """Create the store's directories if needed; returns self."""
        try:
            for directory in (self.objects_dir, self.tmp_dir, self.snapshots_dir):
                directory.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise os_error("create the store at", self.root, e) from e
        return self

    def exists(self) -> bool:
        return self.objects_dir.is_dir()

    def require(self) -> Store:
        if not self.exists():
            raise UsageError(
                f"no prov store at {self.root}",
                hint="run `prov snapshot` first, or pass --store / set PROV_STORE",
            )
        return self

    # -- objects ---------------------------------------------------------------------------

    def object_path(self, digest: Digest) -> Path:
        if digest.algorithm != "blake3":
            raise ValueError(f"the store is keyed by blake3, not {digest.algorithm}")
        return self.objects_dir / digest.hex[:2] / digest.hex[2:]

    def writer(self) -> BlobWriter:
        return BlobWriter(self)

    def put_bytes(self, data: bytes) -> Written:
        with self.writer() as writer:
            writer.write(data)
            return writer.commit()

    def put_chunks(self, chunks: Iterable[bytes]) -> Written:
        with self.writer() as writer:
            for chunk in chunks:
                writer.write(chunk)
            return writer.commit()

    def put_file(self, path: Path) -> Written:
        with path.open("rb") as handle:
            return self.put_chunks(iter(lambda: handle.read(CHUNK), b""))

    def has(self, digest: Digest) -> bool:
        return self.object_path(digest).is_file()

    def open(self, digest: Digest) -> BinaryIO:
        path = self.object_path(digest)
        try:
            return path.open("rb")
        except FileNotFoundError as e:
            raise IntegrityError(
                f"object {digest} is missing from the store at {self.root}",
                hint="the store is incomplete; take the blob from an evidence pack or re-snapshot",
            ) from e
        except OSError as e:  # a directory or an unreadable file where the object should be
            raise IntegrityError(
                f"object {digest} cannot be read from the store at {self.root}",
                cause=str(e),
                hint="run `prov fsck` to check the store",
            ) from e

    def read(self, digest: Digest) -> bytes:
        """Read an object and check that its bytes still hash to its address."""
        with self.open(digest) as handle:
            data = handle.read()
        actual = Digest("blake3", blake3.blake3(data).hexdigest())
        if actual != digest:
            raise IntegrityError(
                f"object {digest} is corrupt: its bytes hash to {actual}",
                hint="run `prov fsck` to list every corrupt object",
            )
        return data

    def check(self, digest: Digest) -> int:
        """Re-hash one object in constant memory; return its size or raise IntegrityError."""
        with self.open(digest) as handle:
            actual, size = blake3_file(handle)
        if actual != digest:
            raise IntegrityError(f"object {digest} is corrupt: its bytes hash to {actual}")
        return size

    def iter_objects(self) -> Iterator[Path]:
        """Every file under objects/, in a stable order (names are checked by ``fsck``)."""
        if not self.objects_dir.is_dir():
            return
        for fan in sorted(self.objects_dir.iterdir()):
            yield from sorted(fan.iterdir())

    def fsck(self) -> FsckReport:
        """Re-hash every object; remove temp files whose writer is gone."""
        report = FsckReport()
        for path in self.iter_objects():
            report.checked += 1
            name = path.parent.name + path.name
            try:
                digest = Digest("blake3", name)
            except ValueError:
                report.corrupt.append(name)
                continue
            with path.open("rb") as handle:
                actual, _ = blake3_file(handle)
            if actual != digest:
                report.corrupt.append(name)
        # Objects are staged in tmp/; index entries next to themselves in snapshots/.
        for directory, prefix in ((self.tmp_dir, ""), (self.snapshots_dir, "snapshots/")):
            removed, in_flight = sweep_temps(directory)
            report.removed_temp += [prefix + name for name in removed]
            report.in_flight += [prefix + name for name in in_flight]
        return report

    # -- the snapshot index ----------------------------------------------------------------

    def add_snapshot(self, entry: SnapshotEntry) -> None:
        data = entry.model_dump_json(indent=2).encode()
        try:
            atomic_write(self.snapshots_dir / f"{entry.sha256}.json", data, overwrite=True)
        except OSError as e:
            raise os_error("write the snapshot index in", self.snapshots_dir, e) from e

    def snapshots(self) -> list[SnapshotEntry]:
        """The index, oldest first."""
        entries = []
        paths = sorted(self.snapshots_dir.glob("*.json")) if self.snapshots_dir.is_dir() else []
        for path in paths:
            try:
                entries.append(SnapshotEntry.model_validate_json(path.read_bytes()))
            except (OSError, ValueError) as e:
                raise StoreError(
                    f"the snapshot index entry {path} is unreadable", cause=str(e)
                ) from e
        return sorted(entries, key=lambda entry: (entry.created, entry.sha256))
