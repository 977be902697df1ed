"""The optimised store and git paths give byte-identical results to the simple ones.

* An incremental re-snapshot (blobs found through the store's git-oid cache) records the same
  capture digest, data and blobs as a cold snapshot into an empty store, and reads from git only
  the blobs that changed.
* The cache is never trusted past the store: a deleted object or a damaged cache segment makes
  the blob be read and stored again.
* Batch writes (one pack, one fsync) store exactly what single writes (loose files) store.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3
import pytest

from provenance._internal.oidcache import OidCache
from provenance.capture import git as git_collector
from provenance.capture.base import CollectContext
from provenance.capture.git import GitCollector, GitOptions
from provenance.digest import WINDOW, Digest, blake3_file, blake3_path
from provenance.model import Capture
from provenance.store import objects as store_module
from provenance.store.gc import collect
from provenance.store.objects import SMALL_OBJECT, Store
from tests.conftest import GitRepo


def capture(repo: GitRepo, store: Store, ref: str = "HEAD") -> Capture:
    options = GitOptions(name="repo", kind="git", repo=str(repo.path), ref=ref)
    return GitCollector(options, CollectContext(store=store.init(), base_dir=repo.path)).collect()


def same_observation(a: Capture, b: Capture) -> None:
    assert a.digest == b.digest
    assert a.data == b.data
    assert a.blobs == b.blobs
    assert a.request == b.request


@pytest.fixture
def requested(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Records which oids each capture asked ``git cat-file`` for (the real function runs)."""
    calls: list[list[str]] = []
    real = git_collector._read_blobs

    def spy(repo: Path, store: Store, oids: list[str]) -> Any:
        calls.append(list(oids))
        return real(repo, store, oids)

    monkeypatch.setattr(git_collector, "_read_blobs", spy)
    return calls


@pytest.fixture
def repo(make_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_repo("mono")
    for index in range(60):
        repo.write(f"src/pkg{index % 4}/mod{index}.py", f"# module {index}\nvalue = {index}\n")
    repo.write("same/a.txt", "duplicate content\n")
    repo.write("same/b.txt", "duplicate content\n")
    repo.write("empty", b"")
    repo.write("data/blob.bin", bytes(range(256)) * 64)
    repo.write("data/large.bin", os.urandom(SMALL_OBJECT + 12345))  # streamed, not batched
    script = repo.write("run.sh", "#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    (repo.path / "link").symlink_to("run.sh")
    repo.commit("base")
    return repo


def change(repo: GitRepo, tag: str) -> None:
    repo.write("src/pkg0/mod0.py", f"# changed {tag}\n")
    repo.write("src/pkg1/mod5.py", f"# changed too {tag}\n")
    repo.write(f"new/{tag}.txt", f"added {tag}\n")
    (repo.path / "src/pkg2/mod10.py").unlink(missing_ok=True)
    repo.commit(f"change {tag}")


def test_resnapshot_equals_cold_snapshot(
    repo: GitRepo, tmp_path: Path, requested: list[list[str]]
) -> None:
    warm = Store(tmp_path / "warm")
    first = capture(repo, warm)
    assert len(requested[-1]) == len({b.digest for b in first.blobs})  # every distinct blob

    change(repo, "one")
    again = capture(repo, warm)
    cold = capture(repo, Store(tmp_path / "cold"))
    same_observation(again, cold)

    # Only the new contents were read from git; everything else came from the cache.
    files = {f["path"]: f["oid"] for f in cold.data["files"]}  # type: ignore[union-attr,index]
    new = {files["src/pkg0/mod0.py"], files["src/pkg1/mod5.py"], files["new/one.txt"]}
    assert set(requested[1]) == new
    for blob in again.blobs:
        assert len(warm.read(Digest.parse(blob.digest))) == blob.size  # present, hashes right


def test_unchanged_commit_reads_nothing_and_matches(
    repo: GitRepo, tmp_path: Path, requested: list[list[str]]
) -> None:
    store = Store(tmp_path / "store")
    first = capture(repo, store)
    second = capture(repo, store)
    same_observation(first, second)
    assert len(requested) == 1  # the second capture never started git cat-file


def test_a_deleted_object_is_read_again_not_trusted(
    repo: GitRepo, tmp_path: Path, requested: list[list[str]]
) -> None:
    store = Store(tmp_path / "store")
    first = capture(repo, store)
    victim = next(b for b in first.blobs if b.name == "data/blob.bin")
    # gc drops it (nothing refers to it here); the packed objects move to a new pack.
    live = {name for name, _ in store.digests()} - {Digest.parse(victim.digest).hex}
    with store.exclusive():
        report = collect(store, live)
    assert report.removed == 1 and not store.has(Digest.parse(victim.digest))

    second = capture(repo, Store(tmp_path / "store"))
    same_observation(first, second)
    assert len(requested[-1]) == 1  # just that blob
    assert store.check(Digest.parse(victim.digest)) == victim.size


def test_a_damaged_cache_segment_is_ignored(repo: GitRepo, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    first = capture(repo, store)
    segments = list((store.cache_dir / "git-oids").glob("*.seg"))
    assert segments
    for segment in segments:
        # Point every entry at another object that exists: a cache that trusted this would
        # record wrong digests. The segment's name no longer matches its bytes, so it is dropped.
        lines = segment.read_text().splitlines()
        other = lines[0].split(" ")[1]
        segment.write_text("".join(f"{line.split(' ')[0]} {other} 1\n" for line in lines))
    assert len(OidCache(store.cache_dir).load()) == 0
    second = capture(repo, store)
    same_observation(first, second)


def test_segments_are_merged(repo: GitRepo, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    for index in range(12):
        change(repo, f"r{index}")
        capture(repo, store)
    segments = list((store.cache_dir / "git-oids").glob("*.seg"))
    assert 1 <= len(segments) <= 8
    cold = capture(repo, Store(tmp_path / "cold"))
    same_observation(capture(repo, store), cold)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("limit", [1 << 30, 3000])
def test_batch_writes_equal_single_writes(
    tmp_path: Path, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch packs what single writes leave loose: the same objects, the same bytes. With a
    3,000-byte pack limit the batch publishes several packs as it goes."""
    contents = [os.urandom(n) for n in (0, 1, 100, 4096, 70_000)] + [b"same"] * 3
    contents += [os.urandom(n % 300) for n in range(40)]
    single = Store(tmp_path / "single").init()
    expected = [single.put_bytes(data) for data in contents]

    batched = Store(tmp_path / "batched").init()
    monkeypatch.setattr(store_module, "PACK_LIMIT", limit)
    fds = _open_fds()
    with batched.batch(workers=4) as batch:
        written = [batch.put_bytes(data) for data in contents]
        if limit > 70_000:  # nothing published before the batch closes
            assert not any(Store(batched.root).has(w.digest) for w in written)
    assert written == expected
    assert list(batched.iter_objects()) == []  # all packed
    packs = len(batched.indexes(refresh=True))
    assert (packs > 2) if limit == 3000 else (packs == 1)
    assert _open_fds() == fds + packs  # one per mapped index, none for the packs
    for data, item in zip(contents, written, strict=True):
        assert batched.read(item.digest) == data
        location = batched.locate(item.digest)
        assert location.packed and location.length == len(data)
        assert not stat.S_IMODE(location.path.stat().st_mode) & 0o222
    assert sorted(batched.digests()) == sorted(single.digests())
    assert list(batched.tmp_dir.iterdir()) == []
    assert [p.name for p in batched.packs_dir.iterdir() if p.name.startswith(".tmp")] == []
    report = batched.fsck()
    assert report.corrupt == [] and report.checked == len({w.digest for w in written})


def test_put_files_equals_put_file(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    paths = []
    for index, size in enumerate([0, 10, 5000, SMALL_OBJECT + 1, 10]):
        path = folder / f"f{index}"
        path.write_bytes(os.urandom(size) if index != 4 else (folder / "f1").read_bytes())
        paths.append(path)
    one_by_one = [Store(tmp_path / "a").init().put_file(p) for p in paths]
    together = Store(tmp_path / "b").init().put_files(paths, workers=3)
    assert together == one_by_one
    assert Store(tmp_path / "c").init().put_files(paths) == one_by_one  # in the caller's thread
    for path, item in zip(paths, together, strict=True):
        assert item.digest.hex == blake3.blake3(path.read_bytes()).hexdigest()


def test_a_failed_batch_write_raises(tmp_path: Path) -> None:
    store = Store(tmp_path / "store").init()
    with pytest.raises(Exception, match="read"), store.batch() as batch:
        batch.put_files([tmp_path / "missing"])


def test_a_batch_left_by_an_error_publishes_nothing_and_closes_every_file(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "store").init()
    fds = _open_fds()
    with pytest.raises(RuntimeError), store.batch() as batch:
        written = [batch.put_bytes(os.urandom(100)) for _ in range(5)]
        raise RuntimeError("the caller failed")
    assert _open_fds() == fds
    assert not any(store.has(item.digest) for item in written)
    assert list(store.packs_dir.iterdir()) == []


@pytest.mark.parametrize("size", [0, 1, 1 << 20, WINDOW - 1, WINDOW, WINDOW + 1, 2 * WINDOW + 7])
def test_blake3_path_equals_streaming_hash(tmp_path: Path, size: int) -> None:
    path = tmp_path / "f"
    path.write_bytes(os.urandom(size))
    with path.open("rb") as handle:
        assert blake3_path(path) == blake3_file(handle)


@pytest.mark.parametrize(
    "path",
    [
        "a.txt",
        'quo"te\\back',
        "tab\there\nnl\x01\x1f\x7f",
        "é/日本/😀.py",
        "\u2028\u2029",
        "x" * 300,
    ],
)
def test_manifest_lines_written_the_fast_way_are_canonical(path: str) -> None:
    from provenance._internal import canonical

    entry = {"key": path, "mode": "100644", "type": "blob", "oid": "ab" * 20}
    entry.update({"blake3": "cd" * 32, "size": 2**40 + 3})
    assert git_collector._line(entry) == canonical.dumps(entry)
    lone = {**entry, "key": "bad\udcff.txt"}  # a non-UTF-8 name, as git may hold
    assert git_collector._line(lone) is None


@pytest.mark.parametrize("readers", [2, 3])
def test_several_cat_file_readers_store_what_one_does(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, readers: int
) -> None:
    one = capture(repo, Store(tmp_path / "one"))
    monkeypatch.setattr(git_collector, "READERS", readers)
    monkeypatch.setattr(git_collector, "READERS_FROM", 2)
    monkeypatch.setattr(git_collector.os, "cpu_count", lambda: 2)
    several = Store(tmp_path / "several")
    same_observation(one, capture(repo, several))
    assert sorted(several.digests()) == sorted(Store(tmp_path / "one").digests())
    assert len(several.indexes(refresh=True)) == 1  # one batch, one pack, whoever read
