"""The content-addressed store: every byte string prov keeps, addressed by its blake3.

Layout under the store root (``.prov`` by default)::

    objects/ab/cdef...     a loose object: the bytes whose blake3 hex is "abcdef..." (read-only)
    packs/<id>.pack, .idx  many small objects in one file, and its sorted index (see ``packs``)
    tmp/.tmp-<pid>-<id>    a write in progress; published by hard link, so never half-visible
    snapshots/<sha256>.json   the index of snapshots taken into this store (see ``SnapshotEntry``)
    lock                   writers hold it shared, ``prov gc`` exclusive

Objects are written once and never changed: a second write of the same bytes is a no-op, and two
processes writing the same object race harmlessly (an exclusive link, or a pack of their own).

Every object is durable before it is visible. One object at a time (an attestation, a manifest,
a large file) is a loose file, fsynced and linked. Many objects at once (a git capture of a
monorepo) go through a ``Batch``, which appends them to a pack: one fsync for the pack, one for
its index and one for the folder, however many objects it holds. Stores written before packs
existed (loose objects only) are read and extended as they are.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import mmap
import os
import threading
import weakref
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import blake3
from pydantic import BaseModel, ConfigDict, Field

from provenance._internal.files import (
    atomic_write,
    create_temp,
    fsync_directory,
    publish,
    sweep_temps,
)
from provenance._internal.progress import advance
from provenance.digest import Digest, blake3_path
from provenance.errors import IntegrityError, StoreError, UsageError
from provenance.store.packs import (
    PACK_LIMIT,
    BadIndex,
    PackIndex,
    PackWriter,
    open_regular,
    pack_in_flight,
)

DEFAULT_STORE = ".prov"
SMALL_OBJECT = 8 << 20
"""Objects up to this size are written from memory by a batch, into its pack; larger ones are
streamed into loose files."""
FILE_CHUNK = 4 << 20
"""Reads of large files: big enough for blake3's threads to share, small for constant memory."""
COMBINE_AFTER = 8
"""More packs than this: lookups go through one combined set of every pack's digests."""
WRITEBACK = 64 << 20
"""Start writing a large object to disk every this many bytes, so the final fsync waits less."""
_LOCKS: dict[str, list[int]] = {}  # store root -> [lock file descriptor, Store objects using it]
_LOCKS_GUARD = threading.Lock()


def _acquire_lock_file(key: str, path: Path) -> int | None:
    with _LOCKS_GUARD:
        held = _LOCKS.get(key)
        if held is not None:
            held[1] += 1
            return held[0]
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError:
                return None  # a read-only store: nothing will be written, nothing to guard
        except OSError:
            return None
        _LOCKS[key] = [fd, 1]
        return fd


def _release_lock_file(key: str) -> None:
    with _LOCKS_GUARD:
        held = _LOCKS.get(key)
        if held is not None:
            held[1] -= 1
            if held[1] == 0:
                del _LOCKS[key]
                os.close(held[0])  # the lock goes with the last descriptor


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


@dataclass(frozen=True)
class Location:
    """Where an object's bytes are: a loose file (offset 0, its whole length) or a pack range."""

    path: Path
    offset: int
    length: int
    packed: bool


@dataclass
class FsckReport:
    """What ``fsck`` found. Temp names are bare for tmp/, else relative to the store root.

    ``checked`` counts distinct objects (an object in two packs, or loose and packed, once);
    ``damaged`` names pack files that cannot be used (a bad index, a missing pack)."""

    checked: int = 0
    bytes: int = 0
    corrupt: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)
    removed_temp: list[str] = field(default_factory=list)
    in_flight: list[str] = field(default_factory=list)
    packs: int = 0
    duplicates: int = 0


def _open_regular(path: Path) -> BinaryIO:
    """Open an object for reading; anything but a regular file is an OSError.

    A FIFO or a device where an object should be would block ``open`` or never end a read
    (``verify --store`` and ``fsck`` hung on one): it is opened without blocking, looked at,
    and refused.
    """
    fd = open_regular(path)
    try:
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _require_regular(path: Path) -> None:
    with _open_regular(path):
        pass


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

    def __init__(self, store: Store, *, threads: bool = False) -> None:
        self._store = store
        # Several threads pay off only for large inputs (put_file); small writes stay serial.
        self._hasher = blake3.blake3(max_threads=blake3.blake3.AUTO if threads else 1)
        self._size = 0
        self._flushed = 0
        try:
            self._temp, fd = create_temp(store.tmp_dir)
        except OSError as e:
            raise os_error("write to the store at", store.root, e) from e
        self._file: BinaryIO = os.fdopen(fd, "wb")

    def write(self, chunk: bytes | bytearray | memoryview) -> None:
        try:
            self._file.write(chunk)
        except OSError as e:
            self.abort()
            raise os_error("write to the store at", self._store.root, e) from e
        self._hasher.update(chunk)
        self._size += len(chunk)
        if self._size - self._flushed >= WRITEBACK:
            # Hand the written range to the kernel's writeback now (DONTNEED starts it without
            # waiting), so the disk works while we keep reading and hashing.
            self._file.flush()
            with contextlib.suppress(OSError, AttributeError):
                os.posix_fadvise(
                    self._file.fileno(),
                    self._flushed,
                    self._size - self._flushed,
                    os.POSIX_FADV_DONTNEED,
                )
            self._flushed = self._size

    @property
    def size(self) -> int:
        return self._size

    def commit(self) -> Written:
        digest = Digest("blake3", self._hasher.hexdigest())
        final = self._store.object_path(digest)
        try:
            if self._store.has_hex(digest.hex):
                # Already stored: these bytes were never promised to anyone, skip the fsync.
                self._temp.unlink()
                self._file.close()
                return Written(digest, self._size)
            self._file.flush()
            os.fsync(self._file.fileno())
            os.fchmod(self._file.fileno(), 0o444)
            if not final.parent.is_dir():
                final.parent.mkdir(exist_ok=True)
                fsync_directory(self._store.objects_dir)
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
        self.packs_dir = self.root / "packs"
        self.tmp_dir = self.root / "tmp"
        self.snapshots_dir = self.root / "snapshots"
        self.cache_dir = self.root / "cache"
        self._objects_prefix = str(self.objects_dir) + os.sep
        self._indexes: dict[str, PackIndex] = {}
        self._index_list: tuple[PackIndex, ...] = ()  # the values of _indexes, for lock-free reads
        self._scanned = False
        self._scan_lock = threading.Lock()
        self._lock_key: str | None = None
        self._combined: tuple[int, set[bytes]] | None = None  # (indexes, every packed digest)

    # -- set-up ----------------------------------------------------------------------------

    def init(self) -> Store:
        """Create the store's directories if needed and hold its lock shared; returns self.

        Writers call this: the shared lock keeps ``prov gc`` out until the process ends, so an
        object found present (and not written again) is still there when a snapshot refers to it.
        """
        try:
            for directory in (self.objects_dir, self.packs_dir, self.tmp_dir, self.snapshots_dir):
                directory.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise os_error("create the store at", self.root, e) from e
        self._hold_shared()
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

    # -- the writers' lock -------------------------------------------------------------------

    def _lock_fd(self) -> int | None:
        """This process's descriptor of the store's lock file, shared by every Store object of
        the same root and closed when the last of them is gone."""
        if self._lock_key is None:
            key = os.path.realpath(self.root)
            fd = _acquire_lock_file(key, self.root / "lock")
            if fd is None:
                return None
            self._lock_key = key
            weakref.finalize(self, _release_lock_file, key)
        return _LOCKS[self._lock_key][0]

    def _hold_shared(self) -> None:
        fd = self._lock_fd()
        if fd is not None:
            with contextlib.suppress(OSError):  # blocks while a `prov gc` runs
                fcntl.flock(fd, fcntl.LOCK_SH)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the store's lock alone (``prov gc``): no writer is running, none starts."""
        fd = self._lock_fd()
        if fd is None:
            raise StoreError(
                f"could not lock the store at {self.root}",
                hint="the store must be writable to be collected",
            )
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as e:
            fcntl.flock(fd, fcntl.LOCK_SH)  # a conversion may have dropped ours
            raise StoreError(
                f"another prov process is writing into the store at {self.root}",
                hint="run it again once the snapshot (or note) in progress has finished",
            ) from e
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_SH)

    # -- objects ---------------------------------------------------------------------------

    def object_path(self, digest: Digest) -> Path:
        """Where the object is (or would be) as a loose file; see ``locate`` for packed ones."""
        if digest.algorithm != "blake3":
            raise ValueError(f"the store is keyed by blake3, not {digest.algorithm}")
        return self.objects_dir / digest.hex[:2] / digest.hex[2:]

    def writer(self, *, threads: bool = False) -> BlobWriter:
        return BlobWriter(self, threads=threads)

    def batch(self, *, workers: int = 1) -> Batch:
        """A batch writer for many objects; use as a context manager (see ``Batch``)."""
        return Batch(self, workers=workers)

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
        """Copy a file into the store in constant memory, hashing exactly the bytes written."""
        buffer = bytearray(FILE_CHUNK)
        view = memoryview(buffer)
        try:
            handle = open(path, "rb", buffering=0)  # noqa: SIM115 (closed below)
        except OSError as e:
            raise os_error("read", path, e) from e
        with handle, self.writer(threads=True) as writer:
            while count := handle.readinto(buffer):
                writer.write(view[:count])
            return writer.commit()

    def put_files(self, paths: Iterable[Path], *, workers: int = 1) -> list[Written]:
        """Store many files at once (see ``Batch``); results in the order of ``paths``."""
        with self.batch(workers=workers) as batch:
            return batch.put_files(paths)

    # -- finding objects -------------------------------------------------------------------

    def indexes(self, *, refresh: bool = False) -> list[PackIndex]:
        """The pack indexes, mapped; ``refresh`` looks for packs published since."""
        with self._scan_lock:
            if refresh or not self._scanned:
                try:
                    names = sorted(os.listdir(self.packs_dir))
                except OSError:
                    names = []
                for name in names:
                    if name.endswith(".idx") and name[:-4] not in self._indexes:
                        try:
                            self._indexes[name[:-4]] = PackIndex(self.packs_dir / name)
                        except (OSError, BadIndex):
                            continue  # fsck names it; its objects are not offered
                self._index_list = tuple(self._indexes.values())
                self._scanned = True
            return list(self._index_list)

    def register(self, index_path: Path) -> None:
        """A pack this process just published: visible to its lookups without a rescan."""
        with self._scan_lock:
            if index_path.stem not in self._indexes:
                with contextlib.suppress(OSError, BadIndex):
                    self._indexes[index_path.stem] = PackIndex(index_path)
                    self._index_list = tuple(self._indexes.values())

    def forget_indexes(self) -> None:
        """Unmap every index (after ``gc`` replaced the packs); the next lookup scans again."""
        with self._scan_lock:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()
            self._index_list = ()
            self._scanned = False
            self._combined = None

    def _find(self, raw: bytes, *, refresh: bool = True) -> tuple[PackIndex, int] | None:
        for index in self.indexes():
            position = index.find(raw)
            if position is not None:
                return index, position
        if refresh:
            known = set(self._indexes)
            for index in self.indexes(refresh=True):
                if index.name not in known:
                    position = index.find(raw)
                    if position is not None:
                        return index, position
        return None

    def has(self, digest: Digest) -> bool:
        if digest.algorithm != "blake3":
            return False
        if self.has_hex(digest.hex):
            return True
        return self._find(bytes.fromhex(digest.hex)) is not None  # a pack published since

    def has_hex(self, hexdigest: str) -> bool:
        """``has`` for a blake3 hex string, for loops over many objects: the packs known to
        this store object (a set lookup once warm), then one stat."""
        if self.packed_hex(bytes.fromhex(hexdigest)):
            return True
        return os.path.isfile(f"{self._objects_prefix}{hexdigest[:2]}{os.sep}{hexdigest[2:]}")

    def packed_hex(self, raw: bytes) -> bool:
        """Whether a pack known to this store object holds the object (``raw``: its digest).

        With many packs (a store snapshotted often between two ``gc``), one combined set of
        every pack's digests answers, built once, instead of a search per pack."""
        indexes = self._index_list if self._scanned else self.indexes()
        if len(indexes) <= COMBINE_AFTER:
            return any(raw in index for index in indexes)
        combined = self._combined
        if combined is None or combined[0] != len(indexes):
            digests: set[bytes] = set()
            for index in indexes:
                digests.update(index.digest_set())
            combined = self._combined = (len(indexes), digests)
        return raw in combined[1]

    def locate(self, digest: Digest) -> Location:
        """Where an object's bytes are, or IntegrityError when it is not in the store."""
        found = self._find(bytes.fromhex(digest.hex), refresh=False)
        if found is None:
            path = self.object_path(digest)
            if path.is_file():
                return Location(path, 0, path.stat().st_size, packed=False)
            found = self._find(bytes.fromhex(digest.hex))
        if found is None:
            raise self._unreadable(digest, FileNotFoundError(str(self.object_path(digest))))
        index, position = found
        offset, length = index.entry(position)
        return Location(index.pack_path, offset, length, packed=True)

    def _unreadable(self, digest: Digest, error: OSError) -> IntegrityError:
        if isinstance(error, FileNotFoundError):
            return IntegrityError(
                f"object {digest} is missing from the store at {self.root}",
                hint="the store is incomplete; take the blob from an evidence pack or re-snapshot",
            )
        # A directory or an unreadable file where the object should be.
        return IntegrityError(
            f"object {digest} cannot be read from the store at {self.root}",
            cause=str(error),
            hint="run `prov fsck` to check the store",
        )

    def _packed(self, digest: Digest) -> bytes | None:
        """A packed object's bytes, checked against its address; None when it is not packed."""
        found = self._find(bytes.fromhex(digest.hex), refresh=False)
        if found is None and not self.object_path(digest).exists():
            found = self._find(bytes.fromhex(digest.hex))
        if found is None:
            return None
        index, position = found
        try:
            data = index.read(position)
        except FileNotFoundError as e:
            # `prov gc` replaced the pack since we looked (it repacks before it removes): look
            # again, once.
            self.forget_indexes()
            again = self._find(bytes.fromhex(digest.hex))
            if again is None:
                if self.object_path(digest).exists():
                    return None  # now a loose file
                raise self._unreadable(digest, e) from e
            try:
                data = again[0].read(again[1])
            except OSError as e2:
                raise self._unreadable(digest, e2) from e2
        except OSError as e:
            raise self._unreadable(digest, e) from e
        _check(digest, data)
        return data

    def open(self, digest: Digest) -> BinaryIO:
        if digest.algorithm == "blake3":
            data = self._packed(digest)
            if data is not None:
                return io.BytesIO(data)
        path = self.object_path(digest)
        try:
            return _open_regular(path)
        except OSError as e:
            raise self._unreadable(digest, e) from e

    def read(self, digest: Digest) -> bytes:
        """Read an object and check that its bytes still hash to its address."""
        with self.open(digest) as handle:
            data = handle.read()
        _check(digest, data)
        return data

    @contextlib.contextmanager
    def mapped(self, digest: Digest) -> Iterator[mmap.mmap | bytes]:
        """An object mapped read-only, checked against its address before it is handed out.

        For one pass over a large object (a manifest of millions of lines) without copying it
        into this process: the pages are the page cache's, and blake3 hashes the mapping on
        every core. Objects are never modified in place, so the mapping cannot shrink under us.
        A packed object (small by construction) is handed out as checked bytes.
        """
        packed = self._packed(digest)
        if packed is not None:
            yield packed
            return
        with self.open(digest) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:  # an empty file cannot be mapped
                view: mmap.mmap | bytes = b""
            else:
                view = mmap.mmap(handle.fileno(), size, prot=mmap.PROT_READ)
        try:
            hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
            hasher.update(view)
            actual = Digest("blake3", hasher.hexdigest())
            if actual != digest:
                raise IntegrityError(
                    f"object {digest} is corrupt: its bytes hash to {actual}",
                    hint="run `prov fsck` to list every corrupt object",
                )
            yield view
        finally:
            if isinstance(view, mmap.mmap):
                view.close()

    def check(self, digest: Digest) -> int:
        """Re-hash one object in bounded memory; return its size or raise IntegrityError."""
        packed = self._packed(digest)
        if packed is not None:
            return len(packed)
        try:
            path = self.object_path(digest)
            _require_regular(path)
            actual, size = blake3_path(path)
        except OSError as e:
            raise self._unreadable(digest, e) from e
        if actual != digest:
            raise IntegrityError(f"object {digest} is corrupt: its bytes hash to {actual}")
        return size

    def iter_objects(self) -> Iterator[Path]:
        """Every loose file under objects/, in a stable order (names are checked by ``fsck``)."""
        if not self.objects_dir.is_dir():
            return
        for fan in sorted(self.objects_dir.iterdir()):
            yield from sorted(fan.iterdir())

    def digests(self) -> Iterator[tuple[str, int]]:
        """(blake3 hex, size) of every object, loose then packed, each once."""
        seen: set[str] = set()
        for path in self.iter_objects():
            name = path.parent.name + path.name
            if name not in seen:
                seen.add(name)
                with contextlib.suppress(OSError):
                    yield name, path.stat().st_size
        for index in self.indexes(refresh=True):
            for raw, _, length in index.entries():
                name = raw.hex()
                if name not in seen:
                    seen.add(name)
                    yield name, length

    def fsck(self) -> FsckReport:
        """Re-hash every object (loose ones, then each pack front to back); remove temp files
        whose writer is gone and packs that a killed writer never indexed."""
        report = FsckReport()
        seen: set[str] = set()
        for path in self.iter_objects():
            name = path.parent.name + path.name
            try:
                digest = Digest("blake3", name)
            except ValueError:
                report.corrupt.append(name)
                continue
            try:
                _require_regular(path)
                actual, size = blake3_path(path)
            except OSError:  # a directory, a FIFO or an unreadable file where an object should be
                report.corrupt.append(name)
                continue
            if actual != digest:
                report.corrupt.append(name)
                continue
            seen.add(name)
            report.bytes += size
            advance(size)  # for the progress line of `prov fsck`
        self._fsck_packs(report, seen)
        report.checked = len(seen) + len(report.corrupt)
        # Objects are staged in tmp/ and packs/; index entries next to themselves in snapshots/.
        folders = (
            (self.tmp_dir, ""),
            (self.packs_dir, "packs/"),
            (self.snapshots_dir, "snapshots/"),
        )
        for directory, prefix in folders:
            removed, in_flight = sweep_temps(directory)
            report.removed_temp += [prefix + name for name in removed]
            report.in_flight += [prefix + name for name in in_flight]
        return report

    def _fsck_packs(self, report: FsckReport, seen: set[str]) -> None:
        try:
            names = sorted(os.listdir(self.packs_dir))
        except OSError:
            return
        for name in names:
            if name.endswith(".pack") and name[:-5] + ".idx" not in names:
                self._orphan(self.packs_dir / name, report)
        for name in names:
            if not name.endswith(".idx"):
                continue
            try:
                index = PackIndex(self.packs_dir / name)
            except (OSError, BadIndex):
                report.damaged.append(f"packs/{name}: not a readable pack index")
                continue
            try:
                report.packs += 1
                if not index.verify_checksum():
                    report.damaged.append(f"packs/{name}: its checksum does not match its bytes")
                    continue
                try:
                    pack = index.pack()
                except OSError as e:
                    report.damaged.append(f"packs/{index.name}.pack: unreadable ({e})")
                    continue
                with contextlib.suppress(OSError, AttributeError):
                    pack.madvise(mmap.MADV_SEQUENTIAL)
                view = memoryview(pack)
                for raw, offset, length in sorted(index.entries(), key=lambda e: e[1]):
                    hexdigest = raw.hex()
                    if (
                        offset + length > len(pack)
                        or blake3.blake3(view[offset : offset + length]).digest() != raw
                    ):
                        report.corrupt.append(hexdigest)
                        continue
                    if hexdigest in seen:
                        report.duplicates += 1
                        continue
                    seen.add(hexdigest)
                    report.bytes += length
                    advance(length)
                view.release()
            finally:
                index.close()

    def _orphan(self, pack: Path, report: FsckReport) -> None:
        """A pack without an index: a writer's in progress, or a killed writer's (removed)."""
        if pack_in_flight(pack) or pack.with_suffix(".idx").exists():
            report.in_flight.append(f"packs/{pack.name}")
            return
        try:
            pack.unlink()
        except FileNotFoundError:
            return
        except OSError:
            report.in_flight.append(f"packs/{pack.name}")
            return
        report.removed_temp.append(f"packs/{pack.name}")

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


def _check(digest: Digest, data: bytes | bytearray | memoryview) -> None:
    actual = blake3.blake3(data).hexdigest()
    if actual != digest.hex:
        raise IntegrityError(
            f"object {digest} is corrupt: its bytes hash to blake3:{actual}",
            hint="run `prov fsck` to list every corrupt object",
        )


class Batch:
    """Writes many objects with the guarantees of a single write, into one pack.

    Objects up to ``SMALL_OBJECT`` are appended to a pack of this batch's own (concurrent
    batches never share one); larger ones become loose files. ``close`` makes the pack durable
    with one fsync, then writes its index and fsyncs the folder: until it returns, none of the
    batch's packed objects is visible, and a crash leaves none of them half-written. Callers
    record references to the objects only after it, as a snapshot does. A pack that reaches
    ``PACK_LIMIT`` bytes is published and another begun.
    """

    def __init__(self, store: Store, *, workers: int = 1) -> None:
        self._store = store
        self._workers = max(1, workers)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._queued: set[bytes] = set()
        self._pack: PackWriter | None = None
        self._closed = False
        try:  # fan folders of loose objects: where there is none, no stat is needed
            self._fans: set[str] | None = set(os.listdir(store.objects_dir))
        except OSError:
            self._fans = None

    def put_bytes(self, data: bytes) -> Written:
        """Hash ``data`` now and queue its write; durable when the batch closes."""
        if len(data) > SMALL_OBJECT:
            return self._store.put_bytes(data)
        raw = blake3.blake3(data).digest()
        hexdigest = raw.hex()
        if self._claim(raw, hexdigest):
            self._append(raw, data)
        return Written(Digest("blake3", hexdigest), len(data))

    def put_files(self, paths: Iterable[Path]) -> list[Written]:
        """Read, hash and write files in the batch's threads; results in input order.

        Files go to the threads 64 at a time: one task per file costs more than a small read.
        With one worker (the default) the calling thread reads them: appending to a pack waits
        on no fsync, so threads only contend for the GIL (100,000 small files: 0.8 s for 50,000
        in one thread, 2.3-3.6 s in sixteen, on 2 cores).
        """
        if self._workers == 1:
            return [self._put_path(path) for path in paths]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="prov-store")
        results: list[Written] = []
        futures: deque[Future[list[Written]]] = deque()
        chunk: list[Path] = []
        for path in paths:
            chunk.append(path)
            if len(chunk) == 64:
                futures.append(self._pool.submit(self._put_paths, chunk))
                chunk = []
                if len(futures) > 2 * self._workers:
                    results.extend(futures.popleft().result())
        if chunk:
            futures.append(self._pool.submit(self._put_paths, chunk))
        for future in futures:
            results.extend(future.result())
        return results

    def _put_paths(self, paths: list[Path]) -> list[Written]:
        return [self._put_path(path) for path in paths]

    def _put_path(self, path: Path) -> Written:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)  # plain calls: files by the thousand
            try:
                size = os.fstat(fd).st_size
                if size > SMALL_OBJECT:
                    return self._store.put_file(path)
                data = os.read(fd, size + 1)  # one read, for a file that did not grow
                if len(data) > size:  # it grew while we looked: the rest too
                    parts = [data]
                    while chunk := os.read(fd, 1 << 20):
                        parts.append(chunk)
                    data = b"".join(parts)
            finally:
                os.close(fd)
        except OSError as e:
            raise os_error("read", path, e) from e
        return self.put_bytes(data)

    def _claim(self, raw: bytes, hexdigest: str) -> bool:
        """True when this call should write the object: not stored, not queued already."""
        with self._lock:
            if raw in self._queued:
                return False
            self._queued.add(raw)
        store = self._store
        if store.packed_hex(raw):
            return False
        if self._fans is not None and hexdigest[:2] not in self._fans:
            return True  # no such fan folder when the batch began (a loose write since: a copy)
        return not os.path.isfile(f"{store._objects_prefix}{hexdigest[:2]}{os.sep}{hexdigest[2:]}")

    def _append(self, raw: bytes, data: bytes) -> None:
        store = self._store
        with self._lock:
            if self._closed:
                raise StoreError("the batch is closed")
            try:
                if self._pack is None:
                    store.packs_dir.mkdir(exist_ok=True)  # a store from before packs
                    self._pack = PackWriter(store.packs_dir)
                self._pack.add(raw, data)
                if self._pack.size >= PACK_LIMIT:
                    pack, self._pack = self._pack, None
                    try:
                        store.register(pack.publish())
                    except BaseException:
                        pack.abort()
                        raise
            except OSError as e:
                raise os_error("write to the store at", store.root, e) from e

    def close(self) -> None:
        """Publish the pack: durable first, then visible. Raises the first error."""
        if self._closed:
            return
        try:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            with self._lock:
                self._closed = True
                pack, self._pack = self._pack, None
            if pack is not None:
                try:
                    self._store.register(pack.publish())
                except OSError as e:
                    pack.abort()
                    raise os_error("write to the store at", self._store.root, e) from e
        finally:
            self._discard()

    def _discard(self) -> None:
        with self._lock:
            self._closed = True
            pack, self._pack = self._pack, None
        if pack is not None:
            pack.abort()  # after an error: nothing half-done becomes visible

    def __enter__(self) -> Batch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
            self._discard()
