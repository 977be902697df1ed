"""The fast manifest merge of `prov diff` gives what the line-by-line merge gives.

``merge_manifests`` skips runs of identical bytes and parses only where the manifests differ;
``merge_entries`` parses every line. Both are run on the same manifests: random ones (keys that
are prefixes of one another, non-ASCII keys, long entries that outgrow the compared spans,
blank lines, a missing final newline) and, through `compare` on a real store, two listings with
more differing objects than are listed.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from provenance import __version__
from provenance.compare.diff import MAX_OBJECTS, compare, merge_entries, merge_manifests
from provenance.compare.evidence import Evidence, NoBlobs, StoreBlobs
from provenance.digest import Digest
from provenance.errors import IntegrityError
from provenance.model import BlobRef, Capture, Snapshot
from provenance.store.manifest import BLOB_NAME, MEDIA_TYPE, ManifestWriter, entry_line
from provenance.store.objects import Store

KEYS = st.text(alphabet=["a", "b", "/", "-", ".", "é", "ÿ", "😀", "0"], min_size=1, max_size=6)
ENTRY = st.fixed_dictionaries(
    {"size": st.integers(0, 10**12)},
    optional={
        "etag": st.text(max_size=8),
        "pad": st.integers(0, 3000).map(lambda n: "x" * n),  # spans beyond the first 4 KiB
        "checksums": st.dictionaries(st.sampled_from(["md5", "crc32c"]), st.text(max_size=4)),
    },
)


def _lines(entries: dict[str, dict[str, Any]]) -> list[bytes]:
    return [entry_line({"key": key, **entries[key]}) for key in sorted(entries)]


@st.composite
def manifest_pairs(draw: st.DrawFn) -> tuple[bytes, bytes]:
    a = draw(st.dictionaries(KEYS, ENTRY, max_size=60))
    b = dict(a)
    for key in draw(st.lists(st.sampled_from(sorted(a)), max_size=10) if a else st.just([])):
        b.pop(key, None)
    b.update(draw(st.dictionaries(KEYS, ENTRY, max_size=10)))  # new keys and rewritten ones
    sides = []
    for entries in (a, b):
        lines = _lines(entries)
        for _ in range(draw(st.integers(0, 2))):  # blank lines are not entries
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from([b"", b"  "])))
        data = b"\n".join(lines)
        if lines and draw(st.booleans()):
            data += b"\n"
        sides.append(data)
    return sides[0], sides[1]


@settings(max_examples=300, deadline=None)
@given(manifest_pairs())
def test_the_fast_merge_equals_the_line_by_line_merge(pair: tuple[bytes, bytes]) -> None:
    a, b = pair
    assert list(merge_manifests(a, b)) == list(merge_entries(a, b))
    assert list(merge_manifests(b, a)) == list(merge_entries(b, a))
    assert list(merge_manifests(a, a)) == []


def test_edges_of_the_fast_merge() -> None:
    one = entry_line({"key": "a", "size": 1})
    two = entry_line({"key": "a", "size": 2})
    cases = [
        (b"", b""),
        (b"", one),
        (one, b""),
        (one, one + b"\n"),  # the same entry, one final newline fewer
        (one + b"\n", two + b"\n"),
        (one + b"\n" + one, one),  # a key twice (not a valid manifest) is merged as it comes
    ]
    for a, b in cases:
        assert list(merge_manifests(a, b)) == list(merge_entries(a, b)), (a, b)
    assert list(merge_manifests(b"", one)) == [("added", None, {"key": "a", "size": 1})]


def _listing(store: Store, label: str, entries: list[dict[str, Any]]) -> Snapshot:
    writer = ManifestWriter(store)
    for entry in entries:
        writer.add(entry)
    info = writer.commit()
    request = {"url": "s3://bucket/data/", "anonymous": True, "versions": False, "content": False}
    data = {"protocol": "s3", "manifest": info.to_json(), "prefixes": []}
    blob = BlobRef(name=BLOB_NAME, digest=info.blob, size=info.blob_size, media_type=MEDIA_TYPE)
    capture = Capture(
        source="data",
        kind="listing",
        tool_version=__version__,
        started="2026-08-18T00:00:00Z",
        ended="2026-08-18T00:00:00Z",
        request=request,
        status="ok",
        establishes=("provider-asserted",),
        data=data,
        blobs=(blob,),
        digest=Capture.content_digest(
            "listing", request, data, [blob.model_dump(mode="json")], None
        ),
    )
    return Snapshot(label=label, created="2026-08-18T00:00:00Z", captures=(capture,))


def _entry(index: int, version: int) -> dict[str, Any]:
    etag = hashlib.md5(f"{index}@{version}".encode(), usedforsecurity=False).hexdigest()
    return {"key": f"c{index // 500:03d}/shard-{index:06d}", "size": index + version, "etag": etag}


@pytest.fixture
def two_listings(tmp_path: Path) -> tuple[Store, Snapshot, Snapshot]:
    """20,000 objects, then 1,500 of them rewritten, deleted or new: more than are listed."""
    store = Store(tmp_path / ".prov").init()
    count = 20_000
    before = [_entry(i, 0) for i in range(count)]
    after = []
    for i in range(count):
        if i % 40 == 1:  # deleted
            continue
        after.append(_entry(i, 1 if i % 40 == 0 else 0))  # rewritten
        if i % 40 == 3:  # a new key right after this one
            after.append({**_entry(i, 0), "key": _entry(i, 0)["key"] + ".new"})
    return store, _listing(store, "before", before), _listing(store, "after", after)


def test_compare_at_scale_lists_what_the_reference_merge_finds(
    two_listings: tuple[Store, Snapshot, Snapshot],
) -> None:
    store, before, after = two_listings
    blobs = StoreBlobs(store)
    diff = compare(Evidence(before, "a", 1, blobs), Evidence(after, "b", 1, blobs))
    (capture,) = diff.captures
    manifest_a, manifest_b = (
        store.read(Digest.parse(snapshot.captures[0].blobs[0].digest))
        for snapshot in (before, after)
    )
    reference = list(merge_entries(manifest_a, manifest_b))
    assert len(reference) == 1500
    assert len(capture.files) == MAX_OBJECTS
    listed = [
        (f.change, f.path, f.old_size, f.new_size, f.old_oid, f.new_oid) for f in capture.files
    ]
    expected = [
        (
            change,
            (new or old or {})["key"],
            (old or {}).get("size"),
            (new or {}).get("size"),
            (old or {}).get("etag"),
            (new or {}).get("etag"),
        )
        for change, old, new in reference[:MAX_OBJECTS]
    ]
    assert listed == expected
    kinds = [change for change, _, _ in reference]
    counts = (kinds.count("added"), kinds.count("removed"), kinds.count("changed"))
    assert counts == (500, 500, 500)
    assert capture.notices == (
        "1,500 objects differ (500 added, 500 removed, 500 changed); the first 1,000 by key are "
        "listed",
    )


def test_without_blobs_the_objects_are_not_compared(
    two_listings: tuple[Store, Snapshot, Snapshot],
) -> None:
    _, before, after = two_listings
    diff = compare(Evidence(before, "a", 1, NoBlobs()), Evidence(after, "b", 1, NoBlobs()))
    (capture,) = diff.captures
    assert capture.files == ()
    assert capture.notices == (
        "manifest.jsonl: not at hand, objects compared by the manifest root only",
    )


def test_a_corrupt_manifest_fails_the_diff(two_listings: tuple[Store, Snapshot, Snapshot]) -> None:
    store, before, after = two_listings
    path = store.object_path(Digest.parse(after.captures[0].blobs[0].digest))
    os.chmod(path, 0o644)
    data = bytearray(path.read_bytes())
    data[100] ^= 1
    path.write_bytes(bytes(data))
    blobs = StoreBlobs(store)
    with pytest.raises(IntegrityError, match="corrupt"):
        compare(Evidence(before, "a", 1, blobs), Evidence(after, "b", 1, blobs))
