"""Pack files: many small objects in one file, found through a sorted index beside it.

Layout under ``packs/`` in the store::

    <id>.pack   b"PROVPACK" then the objects' bytes, back to back, in the order written
    <id>.idx    b"PROVIDX1", the entry count n (u64), a fan-out table (256 u32: how many
                digests start with a byte <= i), the n digests sorted (32 bytes each), their
                offsets in the pack (n u64) and lengths (n u32), then the blake3 of all of it

A writer appends to a locked temp file in ``packs/``, fsyncs it, links it as ``<id>.pack``,
writes and fsyncs the index, links it as ``<id>.idx``, then fsyncs the folder: one fsync per
pack, plus its index and the folder, however many objects it holds. Objects are visible once
their index is, and an index is written only after its pack is durable, so a crash leaves at
most a pack without an index (objects nothing refers to yet) that ``fsck`` and ``gc`` remove.
Readers map the index and search it (fan-out, then binary search); every object read is
re-hashed against its address by the store, so a damaged index can hide an object but never
hand out wrong bytes.
"""

from __future__ import annotations

import array
import contextlib
import errno
import fcntl
import mmap
import os
import stat
import struct
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import blake3

from provenance._internal.files import create_temp, fsync_directory

PACK_MAGIC = b"PROVPACK"
INDEX_MAGIC = b"PROVIDX1"
_HEAD = struct.Struct("<8sQ256I")
_DIGESTS = _HEAD.size  # where the sorted digests start
_TRAILER = 32
FLUSH = 4 << 20
"""Bytes gathered (as references, not copies) before one writev(2) to the pack."""
_IOV_MAX = 1024  # buffers per writev(2): Linux's IOV_MAX
PACK_LIMIT = 1 << 30
"""A pack is closed (published) once it holds this many bytes; the next object starts another."""


class BadIndex(ValueError):
    """An index file that is not one, or whose checksum does not match its bytes."""


def open_regular(path: Path) -> int:
    """A read-only descriptor of a regular file; a FIFO or a device is an OSError, not a hang."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def _map(path: Path, minimum: int) -> mmap.mmap:
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size < minimum:
            raise OSError(errno.EINVAL, "truncated", str(path))
        return mmap.mmap(fd, size, prot=mmap.PROT_READ)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def index_bytes(entries: dict[bytes, tuple[int, int]]) -> bytes:
    """The index of ``entries`` (raw digest -> (offset, length)), checksum included."""
    keys = sorted(entries)
    fanout = [0] * 256
    for key in keys:
        fanout[key[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    count = len(keys)
    body = bytearray(_HEAD.pack(INDEX_MAGIC, count, *fanout))
    body += b"".join(keys)
    offsets = array.array("Q", [entries[k][0] for k in keys])
    lengths = array.array("I", [entries[k][1] for k in keys])
    if offsets.itemsize != 8 or lengths.itemsize != 4:  # not the usual C types: say it plainly
        body += struct.pack(f"<{count}Q", *offsets)
        body += struct.pack(f"<{count}I", *lengths)
    else:
        if sys.byteorder != "little":
            offsets.byteswap()
            lengths.byteswap()
        body += offsets.tobytes()
        body += lengths.tobytes()
    body += blake3.blake3(body).digest()
    return bytes(body)


class PackIndex:
    """One mapped index and its pack. ``find`` costs a fan-out read and a binary search;
    after many lookups ``__contains__`` switches to a set of the digests (built once). The
    mapping holds one descriptor per index (Python's mmap keeps its own)."""

    SET_AFTER = 256

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pack_path = path.with_suffix(".pack")
        self.name = path.stem
        try:
            self._map = _map(path, _HEAD.size + _TRAILER)
        except OSError as e:
            if e.errno == errno.EINVAL:
                raise BadIndex(f"{path} is not a pack index: {e.strerror}") from e
            raise
        size = len(self._map)
        magic, count, *fanout = _HEAD.unpack_from(self._map, 0)
        if magic != INDEX_MAGIC or size != _HEAD.size + count * 44 + _TRAILER:
            raise BadIndex(f"{path} is not a prov pack index")
        if fanout[255] != count:
            raise BadIndex(f"{path}: its fan-out table does not add up")
        self.count: int = count
        self._fanout: tuple[int, ...] = tuple(fanout)
        self._offsets = _DIGESTS + 32 * count
        self._lengths = self._offsets + 8 * count
        self._pack: mmap.mmap | None = None
        self._lookups = 0
        self._set: set[bytes] | None = None

    def verify_checksum(self) -> bool:
        end = len(self._map) - _TRAILER
        return blake3.blake3(memoryview(self._map)[:end]).digest() == self._map[end:]

    def find(self, raw: bytes) -> int | None:
        """The position of ``raw`` (a 32-byte digest) in the index, or None."""
        first = raw[0]
        low = self._fanout[first - 1] if first else 0
        high = self._fanout[first]
        data = self._map
        while low < high:
            middle = (low + high) // 2
            start = _DIGESTS + 32 * middle
            probe = data[start : start + 32]
            if probe < raw:
                low = middle + 1
            elif probe > raw:
                high = middle
            else:
                return middle
        return None

    def __contains__(self, raw: bytes) -> bool:
        if self._set is None:
            self._lookups += 1
            if self._lookups <= self.SET_AFTER:
                return self.find(raw) is not None
            self._set = self.digest_set()
        return raw in self._set

    def digest_set(self) -> set[bytes]:
        """Every digest of the index, as a set (about 100 bytes of memory per object)."""
        if self._set is None:
            column = self._map[_DIGESTS : _DIGESTS + 32 * self.count]
            self._set = {column[i : i + 32] for i in range(0, len(column), 32)}
        return self._set

    def entry(self, position: int) -> tuple[int, int]:
        """(offset, length) of the entry at ``position``."""
        (offset,) = struct.unpack_from("<Q", self._map, self._offsets + 8 * position)
        (length,) = struct.unpack_from("<I", self._map, self._lengths + 4 * position)
        return offset, length

    def digest(self, position: int) -> bytes:
        start = _DIGESTS + 32 * position
        return self._map[start : start + 32]

    def entries(self) -> Iterator[tuple[bytes, int, int]]:
        """(digest, offset, length) of every entry, in digest order."""
        count = self.count
        offsets = struct.unpack_from(f"<{count}Q", self._map, self._offsets)
        lengths = struct.unpack_from(f"<{count}I", self._map, self._lengths)
        for position in range(count):
            yield self.digest(position), offsets[position], lengths[position]

    def pack(self) -> mmap.mmap:
        """The pack, mapped, for a pass over all of it (``fsck``, ``gc``); ``close`` unmaps it.
        Packs are never changed in place, only removed whole, and a removed file stays mapped
        until it is unmapped."""
        if self._pack is None:
            self._pack = _map(self.pack_path, len(PACK_MAGIC))
        return self._pack

    def read(self, position: int) -> bytes:
        """One object's bytes: one open and one pread (a mapping would hold a descriptor)."""
        offset, length = self.entry(position)
        if self._pack is not None:
            data = self._pack[offset : offset + length]
        else:
            fd = open_regular(self.pack_path)
            try:
                data = os.pread(fd, length, offset)
            finally:
                os.close(fd)
        if len(data) != length:
            raise OSError(f"{self.pack_path} ends before the object at offset {offset}")
        return data

    def close(self) -> None:
        self._map.close()
        if self._pack is not None:
            self._pack.close()
            self._pack = None


class PackWriter:
    """Appends objects to a new pack; ``publish`` makes them durable, then visible."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._temp, self._fd = create_temp(directory, 0o444)
        self._pending: list[bytes] = [PACK_MAGIC]  # written by one writev(2), not copied first
        self._pending_size = len(PACK_MAGIC)
        self.size = len(PACK_MAGIC)
        self._entries: dict[bytes, tuple[int, int]] = {}
        self._published: list[Path] = []

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, raw: bytes, data: bytes) -> None:
        if raw in self._entries:
            return
        size = len(data)
        self._entries[raw] = (self.size, size)
        self._pending.append(data)
        self._pending_size += size
        self.size += size
        if self._pending_size >= FLUSH:
            self._flush()

    def _flush(self) -> None:
        pending, self._pending, self._pending_size = self._pending, [], 0
        for start in range(0, len(pending), _IOV_MAX):
            group = pending[start : start + _IOV_MAX]
            written = os.writev(self._fd, group)
            if written < sum(map(len, group)):  # a short write: the rest the plain way
                _write_all(self._fd, b"".join(group)[written:])

    def publish(self) -> Path:
        """fsync the pack, link it, write and fsync its index, link that, fsync the folder.

        Returns the index path. The temp file's lock (held by our descriptor) covers the linked
        pack too (same inode) until the index is in place: ``fsck`` leaves such a pack alone.
        """
        self._flush()
        os.fsync(self._fd)
        name = uuid.uuid4().hex
        pack = self.directory / f"{name}.pack"
        os.link(self._temp, pack)
        self._published.append(pack)
        self._temp.unlink()
        index_temp, index_fd = create_temp(self.directory, 0o444)
        try:
            _write_all(index_fd, index_bytes(self._entries))
            os.fsync(index_fd)
            index = self.directory / f"{name}.idx"
            os.link(index_temp, index)
            self._published.append(index)
        finally:
            os.close(index_fd)
            with contextlib.suppress(FileNotFoundError):
                index_temp.unlink()
        fsync_directory(self.directory)
        self._published.clear()
        os.close(self._fd)
        self._fd = -1
        return index

    def abort(self) -> None:
        """Remove what was written (a failed batch): nothing becomes visible."""
        for path in reversed(self._published):
            with contextlib.suppress(OSError):
                path.unlink()
        with contextlib.suppress(FileNotFoundError):
            self._temp.unlink()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def pack_in_flight(pack: Path) -> bool:
    """Does a live writer still hold ``pack`` (linked, its index not yet written)?"""
    try:
        fd = os.open(pack, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False
