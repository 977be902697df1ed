"""Manifests: the Merkle root, inclusion proofs, streaming reads, diffs, the external sort."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import blake3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provenance._internal.extsort import sort_entries
from provenance.digest import Digest
from provenance.errors import IntegrityError, VerificationError
from provenance.store.manifest import (
    EMPTY_ROOT,
    InclusionProof,
    OutOfOrder,
    diff_entries,
    entry_line,
    iter_entries,
    prove,
    verify_proof,
    write_manifest,
)
from provenance.store.objects import Store


def reference_root(lines: list[bytes]) -> bytes:
    """RFC 9162 2.1.1 MTH, written recursively as the RFC states it."""
    if not lines:
        return blake3.blake3(b"").digest()
    if len(lines) == 1:
        return blake3.blake3(b"\x00" + lines[0]).digest()
    k = 1
    while k * 2 < len(lines):
        k *= 2
    left, right = reference_root(lines[:k]), reference_root(lines[k:])
    return blake3.blake3(b"\x01" + left + right).digest()


def entries(n: int, *, seed: int = 0) -> list[dict[str, object]]:
    rng = random.Random(seed)
    return [
        {
            "key": f"c{i % 7:02d}/part-{i:06d}.parquet",
            "size": rng.randrange(1 << 20),
            "etag": f'"{i:x}"',
        }
        for i in range(n)
    ]


def sorted_entries(n: int, seed: int = 0) -> list[dict[str, object]]:
    return sorted(entries(n, seed=seed), key=lambda e: str(e["key"]))


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / ".prov").init()


def test_root_matches_the_rfc_definition_for_every_size(store: Store) -> None:
    for n in [*range(0, 20), 31, 32, 33, 100]:
        items = sorted_entries(n)
        info = write_manifest(store, items)
        assert info.root == reference_root([entry_line(e) for e in items]).hex()
        assert info.count == n
        assert info.bytes == sum(int(str(e["size"])) for e in items)
    assert write_manifest(store, []).root == EMPTY_ROOT.hex()


def test_manifest_blob_is_canonical_jsonl_in_key_order(store: Store) -> None:
    items = sorted_entries(50)
    info = write_manifest(store, items)
    lines = store.read(Digest.parse(info.blob)).decode().splitlines()
    assert lines == [entry_line(e).decode() for e in items]
    assert list(iter_entries(store, info.blob)) == items
    # the same entries give the same blob and root; one changed byte changes the root
    again = write_manifest(store, [dict(e) for e in items])
    assert (again.root, again.blob) == (info.root, info.blob)
    items[25] = {**items[25], "size": int(str(items[25]["size"])) + 1}
    assert write_manifest(store, items).root != info.root


def test_writer_refuses_unsorted_and_duplicate_keys(store: Store) -> None:
    with pytest.raises(OutOfOrder):
        write_manifest(store, [{"key": "b", "size": 1}, {"key": "a", "size": 1}])
    with pytest.raises(OutOfOrder):
        write_manifest(store, [{"key": "a", "size": 1}, {"key": "a", "size": 1}])
    assert not list(store.tmp_dir.iterdir()), "an aborted manifest leaves no temp file"


def test_key_order_is_utf8_byte_order(store: Store) -> None:
    keys = ["a/b", "a-c", "a", "é", "z", "\u4e2d", "😀", "A"]
    ordered = sorted(keys, key=lambda k: k.encode("utf-8"))
    assert ordered == sorted(keys)  # Python's str order is UTF-8 byte order
    write_manifest(store, [{"key": k, "size": 0} for k in ordered])


def test_a_corrupt_manifest_blob_is_reported(store: Store) -> None:
    info = write_manifest(store, sorted_entries(10))
    path = store.object_path(Digest.parse(info.blob))
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b'"size":', b'"size":1', 1))
    with pytest.raises(IntegrityError):
        list(iter_entries(store, info.blob))


def test_proofs_for_every_leaf_of_small_trees(store: Store) -> None:
    for n in [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33]:
        items = sorted_entries(n, seed=n)
        info = write_manifest(store, items)
        for index, item in enumerate(items):
            proof = prove(store, info, str(item["key"]))
            assert proof.index == index
            assert verify_proof(proof, info.root, n) == item
            assert len(proof.path) <= max(1, (n - 1).bit_length())


@settings(max_examples=40, deadline=None)
@given(n=st.integers(min_value=1, max_value=300), data=st.data())
def test_proofs_hold_for_any_size_and_leaf(
    tmp_path_factory: pytest.TempPathFactory, n: int, data: st.DataObject
) -> None:
    store = Store(tmp_path_factory.mktemp("s")).init()
    items = sorted_entries(n, seed=n)
    info = write_manifest(store, items)
    index = data.draw(st.integers(min_value=0, max_value=n - 1))
    proof = prove(store, info, str(items[index]["key"]))
    assert verify_proof(InclusionProof.from_json(proof.to_json()), info.root, n) == items[index]


def test_tampered_proofs_are_rejected(store: Store) -> None:
    items = sorted_entries(37)
    info = write_manifest(store, items)
    proof = prove(store, info, str(items[20]["key"]))
    other = write_manifest(store, sorted_entries(37, seed=99))
    forged_entry = {**items[20], "size": 1}
    cases = {
        "another root": (proof, other.root),
        "changed entry": (
            dataclasses.replace(proof, line=entry_line(forged_entry)),
            info.root,
        ),
        "wrong index": (dataclasses.replace(proof, index=21), info.root),
        "wrong count": (dataclasses.replace(proof, count=40), info.root),
        "short path": (dataclasses.replace(proof, path=proof.path[:-1]), info.root),
        "long path": (dataclasses.replace(proof, path=(*proof.path, proof.path[0])), info.root),
        "flipped sibling": (
            dataclasses.replace(proof, path=("00" * 32, *proof.path[1:])),
            info.root,
        ),
        "other key": (dataclasses.replace(proof, key=str(items[21]["key"])), info.root),
        "index out of range": (dataclasses.replace(proof, index=37), info.root),
    }
    for name, (bad, root) in cases.items():
        with pytest.raises(VerificationError):
            verify_proof(bad, root, 37)
            pytest.fail(name)
    assert verify_proof(proof, info.root, 37) == items[20]


def test_prove_an_absent_key_raises(store: Store) -> None:
    info = write_manifest(store, sorted_entries(10))
    with pytest.raises(KeyError):
        prove(store, info, "c99/nothing")


def test_diff_counts_and_bytes_per_prefix(store: Store) -> None:
    """Acceptance 4: 1% of objects changed, some added, some removed."""
    rng = random.Random(7)
    before = [
        {"key": f"cell{i % 10}/shard-{i:05d}", "size": rng.randrange(1, 1000), "etag": f'"e{i}"'}
        for i in range(5000)
    ]
    before.sort(key=lambda e: str(e["key"]))
    after = []
    expected = {"changed": 0, "changed_bytes": 0, "removed": 0, "removed_bytes": 0}
    per_prefix_removed: dict[str, int] = {}
    changed_keys: list[str] = []
    for index, entry in enumerate(before):
        if index % 100 == 3:  # 1% changed: new etag, new size
            new = {**entry, "etag": f'"x{index}"', "size": int(str(entry["size"])) + 5}
            after.append(new)
            expected["changed"] += 1
            expected["changed_bytes"] += int(str(new["size"]))
            changed_keys.append(str(entry["key"]))
        elif index % 250 == 11:  # 0.4% removed
            expected["removed"] += 1
            expected["removed_bytes"] += int(str(entry["size"]))
            prefix = str(entry["key"]).split("/")[0]
            per_prefix_removed[prefix] = per_prefix_removed.get(prefix, 0) + 1
        elif index % 500 == 17:  # only last_modified moved: touched, not changed
            after.append({**entry, "last_modified": "2026-09-14T00:00:00Z"})
        else:
            after.append(entry)
    added = [{"key": f"cell{i}/zz-new-{i}", "size": 100 + i} for i in range(12)]
    added += [{"key": "newcell/a", "size": 7}]
    after = sorted(after + added, key=lambda e: str(e["key"]))
    a, b = write_manifest(store, before), write_manifest(store, after)

    result = diff_entries(
        iter_entries(store, a.blob),
        iter_entries(store, b.blob),
        a_root=a.root,
        b_root=b.root,
        limit=5,
    )
    totals = result.totals
    assert totals.changed == expected["changed"] == 50
    assert totals.changed_bytes == expected["changed_bytes"]
    assert totals.changed_delta == 5 * 50
    assert totals.removed == expected["removed"]
    assert totals.removed_bytes == expected["removed_bytes"]
    assert totals.added == 13
    assert totals.added_bytes == sum(100 + i for i in range(12)) + 7
    assert totals.touched == 10
    assert result.unchanged == 5000 - 50 - expected["removed"] - 10
    assert result.prefixes["newcell"].added == 1
    for prefix, count in per_prefix_removed.items():
        assert result.prefixes[prefix].removed == count
    assert sum(p.changed for p in result.prefixes.values()) == 50
    assert [before_["key"] for before_, _ in result.first_changed] == changed_keys[:5]
    assert len(result.first_added) == 5 and len(result.first_removed) == 5
    document = result.to_json()
    assert document["totals"]["changed"] == 50 and not document["same_root"]


def test_diff_of_equal_manifests_is_empty(store: Store) -> None:
    items = sorted_entries(100)
    a = write_manifest(store, items)
    result = diff_entries(iter_entries(store, a.blob), iter_entries(store, a.blob))
    assert not result.has_changes and result.unchanged == 100


def test_external_sort_spills_and_merges(tmp_path: Path) -> None:
    items = entries(2500, seed=3)
    random.Random(1).shuffle(items)
    out = list(sort_entries(iter(items), run_size=300, directory=tmp_path))
    assert [e["key"] for e in out] == sorted(str(e["key"]) for e in items)
    assert out == sorted(items, key=lambda e: str(e["key"]))
    assert not list(tmp_path.iterdir()), "runs are removed after the merge"


def test_prefix_totals_keep_top_level_objects_together(store: Store) -> None:
    from provenance.store.manifest import ManifestWriter

    writer = ManifestWriter(store)
    for key, size in [("a/x", 1), ("b", 2), ("c/y", 3), ("c/z", 4), ("d", 5)]:
        writer.add({"key": key, "size": size})
    writer.commit()
    assert [(p.prefix, p.count, p.bytes) for p in writer.prefixes] == [
        ("", 2, 7),
        ("a", 1, 1),
        ("c", 2, 7),
    ]
