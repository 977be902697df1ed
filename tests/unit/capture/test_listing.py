"""The listing collector on file:// and fsspec (memory://) prefixes, content mode in-process,
and reuse of hashes from the previous snapshot through a real prov.toml snapshot."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import blake3
import pytest

from provenance import config as config_module
from provenance._internal.objectstore import iter_local
from provenance.attest.signing import DsseAttester
from provenance.capture import snapshot as snapshots
from provenance.capture.base import CollectContext, validate_source
from provenance.capture.listing import ListingCollector, ListingOptions
from provenance.config import SourceSpec
from provenance.digest import Digest
from provenance.errors import ConfigError
from provenance.model import Capture
from provenance.store.manifest import (
    ManifestInfo,
    diff_manifests,
    entry_line,
    iter_entries,
    prove,
    verify_proof,
)
from provenance.store.objects import Store


def make_tree(root: Path, files: dict[str, bytes]) -> None:
    for key, data in files.items():
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, ns=(1_787_000_000_123_456_789, 1_787_000_000_123_456_789))


def collect(store: Store, base: Path, **options: Any) -> Capture:
    opts = ListingOptions(name=options.pop("name", "store"), kind="listing", **options)
    return ListingCollector(opts, CollectContext(store=store, base_dir=base)).collect()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / ".prov").init()


FILES = {
    "a-c": b"dash",
    "a/b": b"nested",
    "a/b0/x": b"deeper",
    "a.txt": b"dot",
    "c07q3/part-00000.jsonl": b'{"text": "hello"}\n',
    "c07q3/part-00001.jsonl": b'{"text": "world"}\n',
    "\u00e9t\u00e9/f": b"accents",
    "Z": b"upper",
}


def test_local_listing_walks_in_utf8_byte_order(tmp_path: Path, store: Store) -> None:
    make_tree(tmp_path / "data", FILES)
    os.symlink(tmp_path / "data" / "Z", tmp_path / "data" / "link-to-Z")
    (tmp_path / "data" / "empty-dir").mkdir()
    keys = [entry["key"] for entry in iter_local(str(tmp_path / "data"))]
    assert keys == sorted(FILES, key=lambda k: k.encode("utf-8"))
    # "a-c" < "a.txt" < "a/b" in bytes ('-' 0x2d, '.' 0x2e, '/' 0x2f): a naive walk gets it wrong
    assert keys.index("a-c") < keys.index("a.txt") < keys.index("a/b")


def test_local_capture_records_every_file(tmp_path: Path, store: Store) -> None:
    make_tree(tmp_path / "data", FILES)
    capture = collect(store, tmp_path, url="data")
    assert capture.status == "ok" and capture.kind == "listing"
    assert capture.establishes == ("provider-asserted",)
    manifest = capture.data["manifest"]
    assert isinstance(manifest, dict)
    assert manifest["count"] == len(FILES)
    assert manifest["bytes"] == sum(len(v) for v in FILES.values())
    entries = list(iter_entries(store, str(manifest["blob"])))
    by_key = {e["key"]: e for e in entries}
    assert by_key["a/b"] == {
        "key": "a/b",
        "size": 6,
        "last_modified": "2026-08-17T20:53:20.123456789Z",
    }
    prefixes = {p["prefix"]: p for p in capture.data["prefixes"]}  # type: ignore[union-attr,index]
    assert prefixes["c07q3"] == {"prefix": "c07q3", "count": 2, "bytes": 36}
    assert prefixes[""] == {"prefix": "", "count": 3, "bytes": 12}  # Z, a-c, a.txt
    assert [b.name for b in capture.blobs] == ["manifest.jsonl"]
    # the same tree gives the same capture digest; a file:// URL gives the same manifest
    again = collect(store, tmp_path, url="data")
    assert again.digest == capture.digest
    absolute = collect(store, tmp_path, url=f"file://{tmp_path / 'data'}")
    assert absolute.data["manifest"] == manifest


def test_a_changed_file_changes_the_root_and_the_diff_finds_it(
    tmp_path: Path, store: Store
) -> None:
    make_tree(tmp_path / "data", FILES)
    before = collect(store, tmp_path, url="data")
    (tmp_path / "data" / "c07q3" / "part-00001.jsonl").write_bytes(b"changed!!")
    (tmp_path / "data" / "a.txt").unlink()
    make_tree(tmp_path / "data", {"c07q3/part-00002.jsonl": b"new"})
    after = collect(store, tmp_path, url="data")
    assert before.data["manifest"] != after.data["manifest"]
    result = diff_manifests(store, before, after)
    assert (result.totals.added, result.totals.removed, result.totals.changed) == (1, 1, 1)
    assert result.prefixes["c07q3"].added == 1 and result.prefixes["c07q3"].changed == 1
    assert result.prefixes[""].removed == 1 and result.prefixes[""].removed_bytes == 3
    assert result.first_changed[0][1]["size"] == 9


def test_proof_of_one_object_against_the_capture(tmp_path: Path, store: Store) -> None:
    make_tree(tmp_path / "data", FILES)
    capture = collect(store, tmp_path, url="data")
    info = ManifestInfo.from_capture(capture)
    proof = prove(store, info, "c07q3/part-00001.jsonl")
    manifest = capture.data["manifest"]
    assert isinstance(manifest, dict)
    entry = verify_proof(proof, str(manifest["root"]), int(str(manifest["count"])))
    assert entry["size"] == len(FILES["c07q3/part-00001.jsonl"])


def test_missing_folder_is_a_failed_capture(tmp_path: Path, store: Store) -> None:
    capture = collect(store, tmp_path, url="nowhere")
    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "not-found"
    assert "manifest" not in capture.data


def test_unknown_scheme_and_unknown_key_are_config_errors(tmp_path: Path) -> None:
    for table in (
        {"name": "s", "kind": "listing", "url": "ftp://host/x"},
        {"name": "s", "kind": "listing", "url": "s3://b/p", "bucket_policy": "x"},
    ):
        with pytest.raises(ConfigError):
            validate_source(SourceSpec("s", "listing", table, tmp_path / "prov.toml", 1))


def test_memory_filesystem_through_fsspec(tmp_path: Path, store: Store) -> None:
    import fsspec

    fs = fsspec.filesystem("memory")
    root = f"/prov-test-{uuid.uuid4().hex}"
    for key, data in FILES.items():
        fs.pipe(f"{root}/store/{key}", data)
    try:
        capture = collect(store, tmp_path, url=f"memory://{root}/store")
        assert capture.status == "ok"
        entries = list(iter_entries(store, str(capture.data["manifest"]["blob"])))  # type: ignore[index]
        assert [e["key"] for e in entries] == sorted(FILES)
        assert [e["size"] for e in entries] == [len(FILES[k]) for k in sorted(FILES)]
        content = collect(store, tmp_path, url=f"memory://{root}/store", content=True)
        hashed = list(iter_entries(store, str(content.data["content"]["manifest"]["blob"])))  # type: ignore[index,call-overload]
        assert {e["key"]: e["blake3"] for e in hashed} == {
            k: blake3.blake3(v).hexdigest() for k, v in FILES.items()
        }
    finally:
        fs.rm(root, recursive=True)


def test_content_mode_hashes_every_file(tmp_path: Path, store: Store) -> None:
    make_tree(tmp_path / "data", FILES)
    capture = collect(store, tmp_path, url="data", content=True, shard_objects=3)
    assert capture.status == "ok"
    assert capture.establishes == ("observed", "provider-asserted")
    content = capture.data["content"]
    assert isinstance(content, dict)
    assert content["hashed"] == len(FILES) and content["reused"] == 0
    assert content["baseline"] is None
    entries = list(iter_entries(store, str(content["manifest"]["blob"])))  # type: ignore[index,call-overload]
    assert {e["key"]: e["blake3"] for e in entries} == {
        k: blake3.blake3(v).hexdigest() for k, v in FILES.items()
    }
    # the listing manifest is the same as without content mode
    plain = collect(store, tmp_path, url="data")
    assert plain.data["manifest"] == capture.data["manifest"]
    assert {b.name for b in capture.blobs} == {"manifest.jsonl", "content-manifest.jsonl"}
    # a same-size rewrite: invisible to the listing's size, visible to the content diff
    target = tmp_path / "data" / "Z"
    target.write_bytes(b"UPPER")
    os.utime(target, ns=(1_787_000_000_123_456_789, 1_787_000_000_123_456_789))
    later = collect(store, tmp_path, url="data", content=True, reuse=False)
    assert later.data["manifest"] == capture.data["manifest"]
    result = diff_manifests(store, capture, later)
    assert result.totals.changed == 1 and result.first_changed[0][0]["key"] == "Z"


def write_config(folder: Path, **options: Any) -> Path:
    lines = ["[store]", 'path = ".prov"', "", "[[sources]]", 'name = "harrier"', 'kind = "listing"']
    for key, value in options.items():
        rendered = str(value).lower() if isinstance(value, bool) else repr(value)
        lines.append(f"{key} = {rendered}".replace("'", '"'))
    path = folder / "prov.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_unchanged_objects_reuse_the_previous_snapshot_hashes(tmp_path: Path) -> None:
    files = {
        f"c{c:02d}q{q}/part-{i:03d}": os.urandom(100 + i)
        for c in range(3)
        for q in range(2)
        for i in range(10)
    }
    make_tree(tmp_path / "data", files)
    config = config_module.load(write_config(tmp_path, url="data", content=True, shard_objects=7))
    store = Store(config.store_path)
    first = snapshots.take(config, store, DsseAttester([]), label="step-1")
    content = first.snapshot.capture("harrier").data["content"]
    assert isinstance(content, dict)
    assert (content["hashed"], content["reused"]) == (60, 0)

    changed = ["c00q0/part-003", "c02q1/part-009"]
    for key in changed:
        (tmp_path / "data" / key).write_bytes(b"rewritten " + key.encode())
    make_tree(tmp_path / "data", {"c01q0/part-100": b"new object"})
    second = snapshots.take(config, store, DsseAttester([]), label="step-2")
    capture = second.snapshot.capture("harrier")
    content = capture.data["content"]
    assert isinstance(content, dict)
    assert content["hashed"] == 3  # two rewritten, one new
    assert content["reused"] == 58
    assert content["baseline"] == {
        "snapshot_sha256": first.snapshot.sha256().hex,
        "root": first.snapshot.capture("harrier").data["content"]["manifest"]["root"],  # type: ignore[index,call-overload]
    }
    # reused hashes are still right: the manifest equals one hashed from scratch
    fresh = collect(
        Store(tmp_path / "other").init(), tmp_path, name="harrier", url="data", content=True
    )
    assert fresh.data["content"]["manifest"]["root"] == content["manifest"]["root"]  # type: ignore[index,call-overload]


def test_a_tampered_baseline_is_not_reused(tmp_path: Path) -> None:
    make_tree(tmp_path / "data", {f"f{i}": bytes([i]) * 10 for i in range(20)})
    config = config_module.load(write_config(tmp_path, url="data", content=True))
    store = Store(config.store_path)
    first = snapshots.take(config, store, DsseAttester([]), label="one")
    blob = first.snapshot.capture("harrier").data["content"]["manifest"]["blob"]  # type: ignore[index,call-overload]
    path = store.object_path(Digest.parse(str(blob)))
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b'"blake3":"', b'"blake3":"0', 1)[:-1])
    second = snapshots.take(config, store, DsseAttester([]), label="two")
    content = second.snapshot.capture("harrier").data["content"]
    assert isinstance(content, dict)
    assert content["reused"] == 0 and content["hashed"] == 20 and content["baseline"] is None


def test_entry_lines_are_canonical() -> None:
    assert entry_line({"size": 1, "key": "é"}) == '{"key":"é","size":1}'.encode()


def test_a_backend_listing_out_of_order_is_relisted_through_the_external_sort(
    tmp_path: Path, store: Store
) -> None:
    """Some S3-compatible stores do not return keys in byte order."""
    import random

    make_tree(tmp_path / "data", FILES)

    class Unordered(ListingCollector):
        def _entries(self, spec: Any) -> Any:
            items = list(iter_local(spec.root))
            random.Random(5).shuffle(items)
            return iter(items)

    opts = ListingOptions(name="store", kind="listing", url="data")
    shuffled = Unordered(opts, CollectContext(store=store, base_dir=tmp_path)).collect()
    assert shuffled.status == "ok"
    assert shuffled.data["manifest"] == collect(store, tmp_path, url="data").data["manifest"]
