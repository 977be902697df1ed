"""The content store: addressing, atomicity, immutability, concurrency and fsck."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import blake3
import pytest

from provenance.digest import Digest
from provenance.errors import IntegrityError
from provenance.store.objects import Store


def test_objects_are_addressed_by_blake3_and_read_only(tmp_path: Path) -> None:
    store = Store(tmp_path / ".prov").init()
    written = store.put_bytes(b"hello prov")
    assert written.digest == Digest("blake3", blake3.blake3(b"hello prov").hexdigest())
    path = store.object_path(written.digest)
    assert path.parent.name == written.digest.hex[:2]
    assert path.read_bytes() == b"hello prov"
    assert not stat.S_IMODE(path.stat().st_mode) & 0o222  # immutable once written
    assert store.read(written.digest) == b"hello prov"


def test_second_write_of_the_same_bytes_is_a_no_op(tmp_path: Path) -> None:
    store = Store(tmp_path).init()
    first = store.put_bytes(b"x" * 1000)
    mtime = store.object_path(first.digest).stat().st_mtime_ns
    second = store.put_chunks([b"x" * 500, b"x" * 500])
    assert first == second
    assert store.object_path(first.digest).stat().st_mtime_ns == mtime
    assert list(store.tmp_dir.iterdir()) == []


def test_streaming_write_matches_one_shot_hash(tmp_path: Path) -> None:
    store = Store(tmp_path).init()
    chunks = [os.urandom(65536) for _ in range(40)]
    written = store.put_chunks(iter(chunks))
    assert written.size == 40 * 65536
    assert written.digest.hex == blake3.blake3(b"".join(chunks)).hexdigest()


def test_an_aborted_write_leaves_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path).init()

    def chunks():  # type: ignore[no-untyped-def]
        yield b"partial"
        raise RuntimeError("source died")

    with pytest.raises(RuntimeError):
        store.put_chunks(chunks())
    assert list(store.tmp_dir.iterdir()) == []
    assert list(store.iter_objects()) == []


def _write_same(root: str) -> str:
    store = Store(root)
    return str(store.put_bytes(b"shared object" * 10000).digest)


def test_processes_writing_the_same_object_agree(tmp_path: Path) -> None:
    store = Store(tmp_path).init()
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        digests = pool.map(_write_same, [str(tmp_path)] * 8)
    assert len(set(digests)) == 1
    assert store.fsck().corrupt == []
    assert list(store.tmp_dir.iterdir()) == []


def test_fsck_finds_corruption_and_removes_stale_temp_files(tmp_path: Path) -> None:
    store = Store(tmp_path).init()
    good = store.put_bytes(b"good")
    bad = store.put_bytes(b"will be flipped")
    path = store.object_path(bad.digest)
    path.chmod(0o644)
    path.write_bytes(b"Will be flipped")
    stale = store.tmp_dir / ".tmp-999999999-deadbeef"  # a writer that no longer exists
    stale.write_bytes(b"half an object")
    report = store.fsck()
    assert report.checked == 2
    assert report.corrupt == [bad.digest.hex]
    assert report.removed_temp == [stale.name]
    assert not stale.exists()
    assert store.read(good.digest) == b"good"
    with pytest.raises(IntegrityError, match="corrupt"):
        store.read(bad.digest)


def test_fsck_leaves_a_live_writers_temp_file_alone(tmp_path: Path) -> None:
    store = Store(tmp_path).init()
    writer = store.writer()
    writer.write(b"in flight")
    # Another live process's temp file (our parent's pid stands in for a concurrent writer).
    live = store.tmp_dir / f".tmp-{os.getppid()}-cafe"
    live.write_bytes(b"x")
    report = store.fsck()
    assert live.name in report.in_flight
    writer.commit()


def test_a_fifo_in_place_of_an_object_is_an_integrity_error_not_a_hang(tmp_path: Path) -> None:
    store = Store(tmp_path / "s").init()
    written = store.put_bytes(b"some bytes that a FIFO will replace")
    path = store.object_path(written.digest)
    os.chmod(path.parent, 0o755)
    path.unlink()
    os.mkfifo(path)
    for read in (store.check, store.read, store.open):
        with pytest.raises(IntegrityError, match="cannot be read"):
            read(written.digest)
    assert store.fsck().corrupt == [written.digest.hex]
