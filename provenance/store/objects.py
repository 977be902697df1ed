"""The content-addressed store: every byte string prov keeps, addressed by its blake3.

Layout under the store root (``.prov`` by default)::

    objects/ab/cdef...     an object: the bytes whose blake3 hex is "abcdef..." (read-only)
    tmp/.tmp-<pid>-<id>    a write in progress; published by hard link, so never half-visible
    snapshots/<sha256>.json   the index of snapshots taken into this store (see ``SnapshotEntry``)

Objects are written once and never changed: a second write of the same bytes is a no-op, and two
processes writing the same object race harmlessly because publishing is an exclusive link.

Every object is durable before it is published. Writing many objects at once (a git capture of a
monorepo) goes through a ``Batch``: the same per-object guarantees, with the bytes of hundreds of
objects made durable by one ``syncfs`` before they are linked (elsewhere, fsyncs issued from
several threads so the journal commits them in groups), and each directory fsynced once.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import stat
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

import blake3
from pydantic import BaseModel, ConfigDict, Field

from provenance._internal.files import (
    atomic_write,
    create_temp,
    fsync_directory,
    publish,
    sweep_temps,
    temp_name,
)
from provenance.digest import Digest, blake3_bytes, blake3_path
from provenance.errors import IntegrityError, StoreError, UsageError

DEFAULT_STORE = ".prov"
SMALL_OBJECT = 8 << 20
"""Objects up to this size are written from memory by a batch; larger ones are streamed."""
FILE_CHUNK = 4 << 20
"""Reads of large files: big enough for blake3's threads to share, small for constant memory."""
WRITEBACK = 64 << 20
"""Start writing a large object to disk every this many bytes, so the final fsync waits less."""
_O_TMPFILE = getattr(os, "O_TMPFILE", 0)
_PROC_FD: int | None = None  # /proc/self/fd, opened once: the directory unnamed files link from


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


def _open_regular(path: Path) -> BinaryIO:
    """Open an object for reading; anything but a regular file is an OSError.

    A FIFO or a device where an object should be would block ``open`` or never end a read
    (``verify --store`` and ``fsck`` hung on one): it is opened without blocking, looked at,
    and refused.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
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
            if final.exists():
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
        self.tmp_dir = self.root / "tmp"
        self.snapshots_dir = self.root / "snapshots"
        self.cache_dir = self.root / "cache"
        self._objects_prefix = str(self.objects_dir) + os.sep
        self._unnamed: bool | None = None  # O_TMPFILE + link works here (probed on first use)

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

    def writer(self, *, threads: bool = False) -> BlobWriter:
        return BlobWriter(self, threads=threads)

    def batch(self, *, workers: int = 16) -> Batch:
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

    def put_files(self, paths: Iterable[Path], *, workers: int = 16) -> list[Written]:
        """Store many files at once (see ``Batch``); results in the order of ``paths``."""
        with self.batch(workers=workers) as batch:
            return batch.put_files(paths)

    def has(self, digest: Digest) -> bool:
        return self.has_hex(digest.hex) if digest.algorithm == "blake3" else False

    def has_hex(self, hexdigest: str) -> bool:
        """``has`` for a blake3 hex string: a single stat, for loops over many objects."""
        return os.path.isfile(f"{self._objects_prefix}{hexdigest[:2]}{os.sep}{hexdigest[2:]}")

    def _unnamed_files(self) -> bool:
        """Whether objects can be written as unnamed files (O_TMPFILE) and linked by fd.

        Probed once: it needs Linux, a filesystem that supports O_TMPFILE and a mounted /proc.
        """
        if self._unnamed is None:
            self._unnamed = False
            if _O_TMPFILE:
                probe = temp_name(self.tmp_dir)
                try:
                    fd = os.open(self.tmp_dir, _O_TMPFILE | os.O_WRONLY, 0o444)
                    try:
                        os.link(str(fd), probe, src_dir_fd=self._proc_fd())
                        self._unnamed = True
                    finally:
                        os.close(fd)
                except OSError:
                    pass
                finally:
                    with contextlib.suppress(OSError):
                        probe.unlink()
        return self._unnamed

    @staticmethod
    def _proc_fd() -> int:
        global _PROC_FD
        if _PROC_FD is None:
            _PROC_FD = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
        return _PROC_FD

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

    def open(self, digest: Digest) -> BinaryIO:
        path = self.object_path(digest)
        try:
            return _open_regular(path)
        except OSError as e:
            raise self._unreadable(digest, e) from e

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

    @contextlib.contextmanager
    def mapped(self, digest: Digest) -> Iterator[mmap.mmap | bytes]:
        """An object mapped read-only, checked against its address before it is handed out.

        For one pass over a large object (a manifest of millions of lines) without copying it
        into this process: the pages are the page cache's, and blake3 hashes the mapping on
        every core. Objects are never modified in place, so the mapping cannot shrink under us.
        """
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
            try:
                _require_regular(path)
                actual, _ = blake3_path(path)
            except OSError:  # a directory, a FIFO or an unreadable file where an object should be
                report.corrupt.append(name)
                continue
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


class Batch:
    """Writes many objects concurrently with the guarantees of a single write.

    Each object is written to an unnamed file (``O_TMPFILE``; a temp file under ``tmp/`` where
    the filesystem lacks it), made durable, then published by an exclusive link: an object never
    appears before its bytes are on disk, and a crash leaves no half-written object. What a batch
    changes: on Linux, unnamed files are written without a flush each and staged; every few
    hundred objects one ``syncfs`` makes all their bytes durable at once, then they are linked
    (elsewhere each object is fsynced, from ``workers`` threads, so the journal commits the
    fsyncs in groups). Each directory that received objects is fsynced once, in ``close``. Until
    ``close`` returns a crash may drop some new directory entries (never expose partial bytes);
    callers record references to the objects only after it, as a snapshot does.
    """

    def __init__(self, store: Store, *, workers: int = 16) -> None:
        self._store = store
        self._pool = ThreadPoolExecutor(max(1, workers), thread_name_prefix="prov-store")
        self._window = 8 * max(1, workers)
        self._pending: deque[tuple[Future[None], int]] = deque()
        self._pending_bytes = 0
        self._queued: set[str] = set()
        self._lock = threading.Lock()
        self._fans: set[str] = set()
        self._touched: set[str] = set()
        self._new_fan = False
        self._closed = False
        # Unnamed files written and not yet durable: (fd, final path, fan directory).
        self._staged: list[tuple[int, str, str]] = []
        self._stage = _syncfs() if store._unnamed_files() else None
        self._stage_limit = _stage_limit()

    def put_bytes(self, data: bytes) -> Written:
        """Hash ``data`` now and queue its write; durable when the batch closes."""
        digest = blake3_bytes(data)
        if self._claim(digest.hex):
            future = self._pool.submit(self._write, data, digest.hex)
            self._pending.append((future, len(data)))
            self._pending_bytes += len(data)
            # Bound memory and open files: wait for the oldest writes once too much is queued.
            while self._pending and (
                len(self._pending) > self._window or self._pending_bytes > SMALL_OBJECT
            ):
                done, size = self._pending.popleft()
                self._pending_bytes -= size
                done.result()
                self._flush_if_full()
        return Written(digest, len(data))

    def put_files(self, paths: Iterable[Path]) -> list[Written]:
        """Read, hash and write files in the batch's threads; results in input order."""
        results: list[Written] = []
        futures: deque[Future[Written]] = deque()
        for path in paths:
            futures.append(self._pool.submit(self._put_path, path))
            if len(futures) > self._window:
                results.append(futures.popleft().result())
                self._flush_if_full()
        for future in futures:
            results.append(future.result())
            self._flush_if_full()
        return results

    def _put_path(self, path: Path) -> Written:
        try:
            with open(path, "rb", buffering=0) as handle:
                if os.fstat(handle.fileno()).st_size > SMALL_OBJECT:
                    return self._store.put_file(path)
                data = handle.readall()
        except OSError as e:
            raise os_error("read", path, e) from e
        digest = blake3_bytes(data)
        if self._claim(digest.hex):
            self._write(data, digest.hex)
        return Written(digest, len(data))

    def _claim(self, hexdigest: str) -> bool:
        """True when this call should write the object: not stored, not queued already."""
        with self._lock:
            if hexdigest in self._queued:
                return False
            self._queued.add(hexdigest)
        return not self._store.has_hex(hexdigest)

    def _fan(self, hexdigest: str) -> str:
        fan = self._store._objects_prefix + hexdigest[:2]
        if fan not in self._fans:
            try:
                os.mkdir(fan)
                self._new_fan = True
            except FileExistsError:
                pass
            except OSError as e:
                raise os_error("write to the store at", self._store.root, e) from e
            with self._lock:
                self._fans.add(fan)
        return fan

    def _write(self, data: bytes, hexdigest: str) -> None:
        store = self._store
        fan = self._fan(hexdigest)
        final = f"{fan}{os.sep}{hexdigest[2:]}"
        try:
            if self._stage is not None:
                fd = os.open(fan, _O_TMPFILE | os.O_WRONLY, 0o444)
                try:
                    _write_all(fd, data)
                except BaseException:
                    os.close(fd)  # an unnamed file vanishes with its last descriptor
                    raise
                with self._lock:
                    self._staged.append((fd, final, fan))
                return
            if store._unnamed_files():
                fd = os.open(fan, _O_TMPFILE | os.O_WRONLY, 0o444)
                try:
                    _write_all(fd, data)
                    os.fsync(fd)
                    try:
                        # linkat(AT_SYMLINK_FOLLOW) on /proc/self/fd/N names the unnamed file.
                        os.link(str(fd), final, src_dir_fd=store._proc_fd())
                    except FileExistsError:
                        return
                finally:
                    os.close(fd)
            else:
                temp, fd = create_temp(store.tmp_dir, 0o444)
                try:  # the fd holds the temp file's lock until it is published or removed
                    _write_all(fd, data)
                    os.fsync(fd)
                    if not publish(temp, Path(final), overwrite=False, sync_directory=False):
                        return
                except BaseException:
                    with contextlib.suppress(FileNotFoundError):
                        temp.unlink()
                    raise
                finally:
                    os.close(fd)
        except OSError as e:
            raise os_error("write to the store at", store.root, e) from e
        with self._lock:
            self._touched.add(fan)

    def _flush_if_full(self) -> None:
        if len(self._staged) >= self._stage_limit:
            self._flush()

    def _flush(self) -> None:
        """Make the staged files' bytes durable with one syncfs, then link them into place."""
        with self._lock:
            staged, self._staged = self._staged, []
        if not staged:
            return
        assert self._stage is not None
        try:
            if self._stage(staged[0][0]) != 0:
                code = _errno()
                raise OSError(code, os.strerror(code))
            proc = self._store._proc_fd()

            def link(item: tuple[int, str, str]) -> str:
                fd, final, fan = item
                # linkat(AT_SYMLINK_FOLLOW) on /proc/self/fd/N names the unnamed file.
                with contextlib.suppress(FileExistsError):
                    os.link(str(fd), final, src_dir_fd=proc)
                return fan

            fans = set(self._pool.map(link, staged))
            with self._lock:
                self._touched |= fans
        except OSError as e:
            raise os_error("write to the store at", self._store.root, e) from e
        finally:
            for fd, _, _ in staged:
                os.close(fd)

    def _discard_staged(self) -> None:
        with self._lock:
            staged, self._staged = self._staged, []
        for fd, _, _ in staged:
            os.close(fd)

    def close(self) -> None:
        """Wait for every write, then fsync each directory that changed. Raises the first error."""
        if self._closed:
            return
        self._closed = True
        try:
            for future, _ in self._pending:
                future.result()
            self._flush()
            directories = sorted(self._touched)
            if self._new_fan:
                directories.append(str(self._store.objects_dir))
            try:
                list(self._pool.map(lambda d: fsync_directory(Path(d)), directories))
            except OSError as e:
                raise os_error("write to the store at", self._store.root, e) from e
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._discard_staged()  # after an error: nothing half-done is ever linked

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
            self._closed = True
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._discard_staged()


_SYNCFS: Any = None


def _syncfs() -> Callable[[int], int] | None:
    """libc's ``syncfs(2)``: every dirty page of one filesystem written and committed, in one
    call. None where there is none (not Linux, no C library found)."""
    global _SYNCFS
    if _SYNCFS is None:
        _SYNCFS = False
        try:
            import ctypes

            function = ctypes.CDLL(None, use_errno=True).syncfs
        except (OSError, AttributeError):
            pass
        else:
            function.argtypes = [ctypes.c_int]
            function.restype = ctypes.c_int
            _SYNCFS = function
    return _SYNCFS or None


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()


def _stage_limit() -> int:
    """Objects staged per syncfs: many, but within a quarter of the open-file limit (each staged
    object holds a descriptor until it is linked)."""
    try:
        import resource
    except ImportError:  # not a Unix
        return 256
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY or soft < 0:
        soft = 1 << 16
    return max(16, min(1024, (soft - 256) // 4))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
