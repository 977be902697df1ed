"""Packs: the same store seen through packs and through loose files; old stores; gc; fsck."""

from __future__ import annotations

import os
import random
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import blake3
import pytest
from click.testing import Result

from provenance.digest import Digest
from provenance.errors import IntegrityError, StoreError
from provenance.store import packs as pack_module
from provenance.store.gc import collect
from provenance.store.objects import SMALL_OBJECT, Store
from provenance.store.packs import PackIndex, index_bytes
from tests.conftest import ROOT, GitRepo

Prov = Callable[..., Result]
OLD_STORE = ROOT / "tests" / "fixtures" / "old-store"


def _contents(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(rng.choice((0, 1, 31, 700, 5000, 70_000))) for _ in range(count)]


def test_packed_and_loose_stores_answer_alike(tmp_path: Path) -> None:
    contents = _contents(1, 300) + [b"twice"] * 2
    loose = Store(tmp_path / "loose").init()
    for data in contents:
        loose.put_bytes(data)
    packed = Store(tmp_path / "packed").init()
    with packed.batch() as batch:
        for data in contents:
            batch.put_bytes(data)
    assert list(packed.iter_objects()) == []
    assert sorted(loose.digests()) == sorted(packed.digests())
    absent = Digest("blake3", blake3.blake3(b"never stored").hexdigest())
    for data in [*contents, b"never stored"]:
        digest = Digest("blake3", blake3.blake3(data).hexdigest())
        assert loose.has(digest) == packed.has(digest) == (digest != absent)
        if digest == absent:
            for store in (loose, packed):
                with pytest.raises(IntegrityError, match="is missing"):
                    store.read(digest)
            continue
        assert loose.read(digest) == packed.read(digest) == data
        assert loose.check(digest) == packed.check(digest) == len(data)
        with loose.mapped(digest) as a, packed.mapped(digest) as b:
            assert bytes(a) == bytes(b) == data
        with loose.open(digest) as a, packed.open(digest) as b:
            assert a.read() == b.read()
    reports = loose.fsck(), packed.fsck()
    assert [(r.checked, r.bytes, r.corrupt) for r in reports] == [
        (len(set(contents)), sum(map(len, set(contents))), [])
    ] * 2


def test_a_pack_is_written_with_three_fsyncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store").init()
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    with store.batch() as batch:
        for data in _contents(2, 2000):
            batch.put_bytes(data)
    assert len(calls) == 3  # the pack, its index, the packs folder
    assert len(store.indexes(refresh=True)) == 1


def test_the_index_is_sorted_with_a_fanout_and_a_checksum(tmp_path: Path) -> None:
    entries = {blake3.blake3(bytes([n])).digest(): (8 + n, n) for n in range(200)}
    path = tmp_path / "x.idx"
    path.write_bytes(index_bytes(entries))
    index = PackIndex(path)
    assert index.verify_checksum()
    assert [raw for raw, _, _ in index.entries()] == sorted(entries)
    for raw, (offset, length) in entries.items():
        position = index.find(raw)
        assert position is not None and index.entry(position) == (offset, length)
        assert raw in index
    assert index.find(b"\xff" * 32) is None and index.find(b"\x00" * 32) is None
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    assert not PackIndex(path).verify_checksum()
    path.write_bytes(bytes(data[:-40]))
    with pytest.raises(pack_module.BadIndex):
        PackIndex(path)


def test_concurrent_batches_each_write_their_own_pack(tmp_path: Path) -> None:
    root = tmp_path / "store"
    Store(root).init()
    shared = _contents(3, 100)
    errors: list[BaseException] = []

    def write(seed: int) -> None:
        try:
            store = Store(root).init()
            with store.batch() as batch:
                for data in shared + _contents(seed, 50):
                    batch.put_bytes(data)
        except BaseException as e:  # pragma: no cover (reported below)
            errors.append(e)

    threads = [threading.Thread(target=write, args=(10 + n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    store = Store(root)
    assert 1 <= len(store.indexes(refresh=True)) <= 8
    report = store.fsck()
    expected = {blake3.blake3(d).hexdigest() for n in range(8) for d in _contents(10 + n, 50)}
    expected |= {blake3.blake3(d).hexdigest() for d in shared}
    assert report.corrupt == [] and report.checked == len(expected)
    assert {name for name, _ in store.digests()} == expected


def test_a_failed_write_on_a_full_disk_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store").init()

    def full(fd: int, buffers: list[bytes]) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pack_module.os, "writev", full)
    with pytest.raises(StoreError, match="the disk is full"), store.batch() as batch:
        for data in _contents(4, 200):
            batch.put_bytes(data)
    assert list(store.packs_dir.iterdir()) == []
    assert store.fsck().checked == 0


def test_fsck_finds_a_flipped_byte_in_a_pack_and_removes_an_unindexed_pack(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "store").init()
    contents = _contents(5, 50)
    with store.batch() as batch:
        written = [batch.put_bytes(data) for data in contents]
    victim = max(written, key=lambda w: w.size)
    location = store.locate(victim.digest)
    location.path.chmod(0o644)
    with location.path.open("r+b") as handle:
        handle.seek(location.offset + 3)
        byte = handle.read(1)
        handle.seek(location.offset + 3)
        handle.write(bytes([byte[0] ^ 0x20]))
    orphan = store.packs_dir / "0123abcd.pack"  # a killed writer's pack, never indexed
    orphan.write_bytes(pack_module.PACK_MAGIC + b"x" * 10)
    report = Store(store.root).fsck()
    assert report.corrupt == [victim.digest.hex]
    assert report.removed_temp == ["packs/0123abcd.pack"] and not orphan.exists()
    with pytest.raises(IntegrityError, match="is corrupt"):
        Store(store.root).read(victim.digest)


def test_gc_keeps_what_is_live_repacks_it_and_reports_what_it_freed(tmp_path: Path) -> None:
    store = Store(tmp_path / "store").init()
    keep, drop = _contents(6, 100), _contents(7, 100)
    for contents in (keep, drop):
        with store.batch() as batch:
            for data in contents:
                batch.put_bytes(data)
    big = store.put_bytes(os.urandom(SMALL_OBJECT + 1))  # stays loose
    small = store.put_bytes(b"a small loose object")  # moves into the new pack
    unreferenced_loose = store.put_bytes(b"nobody refers to this")
    live = {blake3.blake3(d).hexdigest() for d in keep} | {big.digest.hex, small.digest.hex}
    dropped = {blake3.blake3(d).hexdigest() for d in drop} - live
    with store.exclusive():
        report = collect(store, live)
    assert report.removed == len(dropped) + 1
    assert report.removed_bytes == sum(len(d) for d in set(drop)) + unreferenced_loose.size
    assert report.packs_before == 2 and report.packs_after == 1
    assert report.disk_after < report.disk_before and report.freed > 0
    fresh = Store(store.root)
    assert {name for name, _ in fresh.digests()} == live
    assert [p.name for p in fresh.iter_objects()] == [big.digest.hex[2:]]
    for data in keep:
        assert fresh.read(Digest("blake3", blake3.blake3(data).hexdigest())) == data
    assert fresh.fsck().corrupt == []
    with store.exclusive():  # nothing left to do: nothing changes
        again = collect(fresh, live)
    assert again.removed == 0 and again.packs_after == 1


def test_gc_refuses_while_another_process_writes(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = tmp_path / "store"
    Store(root).init()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys,time; from provenance.store.objects import Store; "
         f"s = Store({str(root)!r}).init(); print('ready', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"ready\n"
        busy = pytest.raises(StoreError, match="another prov process is writing")
        with busy, Store(root).exclusive():
            pass
    finally:
        holder.kill()
        holder.communicate()
    with Store(root).exclusive():
        pass


def test_gc_on_a_corrupt_live_object_removes_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "store").init()
    with store.batch() as batch:
        written = [batch.put_bytes(data) for data in _contents(8, 20)]
    location = store.locate(written[0].digest)
    location.path.chmod(0o644)
    with location.path.open("r+b") as handle:
        handle.seek(location.offset)
        data = handle.read(location.length)
        handle.seek(location.offset)
        handle.write(bytes(b ^ 1 for b in data))
    before = sorted(p.name for p in store.packs_dir.iterdir())
    with store.exclusive(), pytest.raises(IntegrityError, match="nothing was collected"):
        collect(store, {w.digest.hex for w in written[:5]})
    assert sorted(p.name for p in store.packs_dir.iterdir()) == before


# -- through the command line: an old store, a git capture over many files ---------------------


def _old_project(tmp_path: Path, project: Path, prov: Prov) -> Path:
    store = project / ".prov"
    shutil.copytree(OLD_STORE / "store", store)
    shutil.copy(OLD_STORE / "old-1.intoto.jsonl", project / "old-1.intoto.jsonl")
    assert prov("keygen", "alice").exit_code == 0
    return store


def test_an_old_layout_store_is_read_verified_extended_and_collected(
    tmp_path: Path, project: Path, prov: Prov
) -> None:
    store = _old_project(tmp_path, project, prov)
    old_key = str(OLD_STORE / "keys" / "old.pub")
    result = prov("verify", "old-1.intoto.jsonl", "--key", old_key, "--store", str(store))
    assert result.exit_code == 0, result.output
    assert prov("fsck").exit_code == 0
    assert "old-1" in prov("log").output

    repo = GitRepo(tmp_path / "repo")
    for index in range(1500):  # above the manifest threshold: a constant-size statement
        repo.write(f"src/m{index % 30}/f{index}.txt", f"file {index}\n")
    repo.write("train.py", 'print("hello")\n')  # the same blob as in old-1: found loose
    repo.commit()
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "code"\nkind = "git"\nrepo = "{repo.path}"\n'
    )
    result = prov("snapshot", "--label", "new-1", "--key", "keys/alice.key")
    assert result.exit_code == 0, result.output
    assert Store(store).indexes(refresh=True), "the new blobs went into a pack"
    assert sum(1 for _ in Store(store).iter_objects()) == 4 + 2  # old + attestation, manifest

    Store(store).put_bytes(b"junk")  # an unreferenced object, as an interrupted run leaves
    fsck = prov("fsck")
    assert fsck.exit_code == 0, fsck.output
    assert "1 object(s), 4 bytes, referenced by no snapshot or note" in fsck.output
    before = sorted(p.name for p in store.rglob("*"))
    result = prov("gc", "--dry-run")
    assert "would remove 1 unreferenced object(s), 4 bytes" in result.output, result.output
    assert sorted(p.name for p in store.rglob("*")) == before
    result = prov("gc")
    assert result.exit_code == 0, result.output
    assert "removed 1 unreferenced object(s), 4 bytes" in result.output, result.output
    assert "2 snapshot(s)" in result.output
    new = ("attestations/new-1.intoto.jsonl", "keys/alice.pub")
    for label, key in (("old-1.intoto.jsonl", old_key), new):
        result = prov("verify", label, "--key", key, "--store", str(store))
        assert result.exit_code == 0, result.output
    assert "unreferenced" not in prov("fsck").output


def test_gc_keeps_what_a_witness_statement_refers_to(tmp_path: Path) -> None:
    from provenance.attest import dsse, keys
    from provenance.attest import statement as statements
    from provenance.verify.reachable import reachable

    store = Store(tmp_path / "store").init()
    with store.batch() as batch:
        kept, dropped = batch.put_bytes(b"seen by a witness"), batch.put_bytes(b"seen by none")
    predicate = {"witnessed": [{"source": "code", "blob": str(kept.digest)}]}
    subject = [{"name": "prov-snapshot:m1", "digest": {"sha256": "ab" * 32}}]
    payload = statements.wrap(subject, "https://prov.dev/witness/v1", predicate)
    private, _ = keys.generate(tmp_path, "w")
    envelope = dsse.sign(statements.PAYLOAD_TYPE, payload, [keys.load_signer(private)])
    attestation = store.put_bytes(envelope.to_json())
    (store.root / "witnesses").mkdir()
    (store.root / "witnesses" / "x.json").write_text(
        f'{{"id": "x", "attestation": "{attestation.digest}"}}'
    )
    found = reachable(store)
    assert found.live == {kept.digest.hex, attestation.digest.hex}
    with store.exclusive():
        report = collect(store, found.live, keep_loose=found.attestations)
    assert report.removed == 1 and not Store(store.root).has(dropped.digest)
    assert Store(store.root).read(kept.digest) == b"seen by a witness"
    assert store.object_path(attestation.digest).is_file()  # attestations stay loose files
    (store.root / "witnesses" / "y.json").write_text('{"attestation": "blake3:' + "0" * 64 + '"}')
    with pytest.raises(IntegrityError, match="nothing can be collected"):
        reachable(Store(store.root))


def test_many_packs_are_looked_up_through_one_combined_set(tmp_path: Path) -> None:
    store = Store(tmp_path / "store").init()
    batches = [_contents(100 + n, 30) for n in range(12)]
    for contents in batches:
        with store.batch() as batch:
            for data in contents:
                batch.put_bytes(data)
    fresh = Store(store.root)
    assert len(fresh.indexes()) == 12
    for contents in batches:
        for data in contents:
            assert fresh.has_hex(blake3.blake3(data).hexdigest())
    assert fresh._combined is not None and fresh._combined[0] == 12
    assert not fresh.has_hex(blake3.blake3(b"absent").hexdigest())
    with fresh.batch() as batch:  # a 13th pack: the combined set follows
        written = batch.put_bytes(b"the thirteenth")
    assert fresh.has_hex(written.digest.hex) and fresh._combined[0] == 13


def test_a_reader_that_looked_before_gc_repacked_finds_the_object_again(tmp_path: Path) -> None:
    store = Store(tmp_path / "store").init()
    for seed in (20, 21):
        with store.batch() as batch:
            written = [batch.put_bytes(data) for data in _contents(seed, 10)]
    reader = Store(store.root)
    assert reader.has(written[0].digest)  # its indexes are mapped now
    with store.exclusive():
        collect(Store(store.root), {name for name, _ in Store(store.root).digests()})
    assert len(Store(store.root).indexes()) == 1
    assert reader.read(written[0].digest) == _contents(21, 10)[0]


def test_prov_fsck_names_a_damaged_index_and_exits_1(
    tmp_path: Path, project: Path, prov: Prov
) -> None:
    store = Store(project / ".prov").init()
    with store.batch() as batch:
        for data in _contents(30, 40):
            batch.put_bytes(data)
    result = prov("fsck")
    assert result.exit_code == 0, result.output
    assert "checked 40 object(s)" in result.output and "(1 pack(s))" in result.output
    assert "40 object(s)" in result.output and "`prov gc` removes them" in result.output
    (index,) = store.packs_dir.glob("*.idx")
    index.chmod(0o644)
    data = bytearray(index.read_bytes())
    data[2000] ^= 0x01  # a digest: the checksum no longer matches
    index.write_bytes(bytes(data))
    result = prov("fsck")
    assert result.exit_code == 1, result.output
    assert f"DAMAGED: packs/{index.name}: its checksum does not match its bytes" in result.output
