"""The listing collector against moto's S3 server on 127.0.0.1 (a real S3 API over HTTP)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import blake3
import pytest

pytest.importorskip(
    "moto", reason="needs moto[server]: pip install -e '.[dev]' (make install does)"
)
pytest.importorskip("s3fs", reason="needs s3fs: pip install -e '.[dev]' (make install does)")

from s3server import S3Server

from provenance.capture.base import CollectContext
from provenance.capture.listing import ListingCollector, ListingOptions
from provenance.model import Capture
from provenance.store.manifest import ManifestInfo, iter_entries, prove, verify_proof
from provenance.store.objects import Store

DEFAULT_OBJECTS = 3_000


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    # anonymous by default: no credential from the environment may sign the requests
    saved = {
        n: os.environ.pop(n)
        for n in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE")
        if n in os.environ
    }
    server = S3Server()
    yield server
    server.stop()
    os.environ.update(saved)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / ".prov").init()


def harrier_objects(count: int) -> Iterator[tuple[str, bytes]]:
    """Keys shaped like the Harrier store's: 200 cells, shards under each."""
    for i in range(count):
        cell = f"c{(i % 40):02d}q{(i // 40) % 5}"
        yield f"{cell}/shard-{i:07d}.jsonl.zst", b"x" * (i % 97)


def collect(store: Store, s3: S3Server, url: str, **options: Any) -> Capture:
    opts = ListingOptions(name="harrier", kind="listing", url=url, endpoint_url=s3.url, **options)
    context = CollectContext(store=store, base_dir=store.root, timeout=10, retries=1)
    return ListingCollector(opts, context).collect()


def check_listing(store: Store, s3: S3Server, bucket: str, count: int) -> None:
    started = time.monotonic()
    first = collect(store, s3, f"s3://{bucket}/datakit/store_4d2e363d")
    elapsed = time.monotonic() - started
    second = collect(store, s3, f"s3://{bucket}/datakit/store_4d2e363d")
    assert first.status == "ok", first.error
    manifest = first.data["manifest"]
    assert isinstance(manifest, dict)
    assert manifest["count"] == count
    assert manifest["bytes"] == sum(len(data) for _, data in harrier_objects(count))
    # stable across runs: the same bucket gives the same root and the same capture digest
    assert second.data["manifest"] == manifest
    assert second.digest == first.digest
    entries = iter_entries(store, str(manifest["blob"]))
    expected = sorted(harrier_objects(count))
    for entry, (key, data) in zip(entries, expected, strict=True):
        assert entry["key"] == key
        assert entry["size"] == len(data)
        assert entry["etag"] == f'"{hashlib.md5(data).hexdigest()}"'
        assert entry["last_modified"].endswith("Z")
    prefixes = first.data["prefixes"]
    assert isinstance(prefixes, list)
    assert len(prefixes) == min(count, 200)
    print(f"\nlisted {count} objects from moto in {elapsed:.1f}s ({count / elapsed:,.0f}/s)")


def test_listing_is_complete_and_stable(s3: S3Server, store: Store) -> None:
    bucket = "marin-us-east-02a"
    s3.create_bucket(
        bucket,
        ((f"datakit/store_4d2e363d/{k}", v) for k, v in harrier_objects(DEFAULT_OBJECTS)),
    )
    s3.backend.put_object(bucket, "datakit/store_4d2e363d-other/x", b"not under the prefix")
    check_listing(store, s3, bucket, DEFAULT_OBJECTS)


@pytest.mark.slow
@pytest.mark.skipif(
    not (os.environ.get("CI") or os.environ.get("PROV_SLOW")),
    reason="slow (2-3 minutes): runs in CI, or locally with PROV_SLOW=1",
)
def test_listing_of_100k_objects_is_stable(s3: S3Server, store: Store) -> None:
    """Acceptance 1 at full size (moto serves 1,400-2,000 objects/s: 50-75 s per listing)."""
    count = 100_000
    s3.create_bucket(
        "harrier-100k", ((f"datakit/store_4d2e363d/{k}", v) for k, v in harrier_objects(count))
    )
    check_listing(store, s3, "harrier-100k", count)


def test_proof_for_an_s3_object(s3: S3Server, store: Store) -> None:
    s3.create_bucket("proofs", harrier_objects(500))
    capture = collect(store, s3, "s3://proofs")
    info = ManifestInfo.from_capture(capture)
    key = "c07q2/shard-0000287.jsonl.zst"
    entry = verify_proof(prove(store, info, key), info.root, info.count)
    assert entry["key"] == key and entry["size"] == 287 % 97


def test_bucket_policy_denying_anonymous_access_is_captured(s3: S3Server, store: Store) -> None:
    bucket = "denied-store"
    s3.create_bucket(bucket, harrier_objects(10))
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Deny",
                "Principal": "*",
                "Action": ["s3:ListBucket", "s3:GetObject"],
                "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
            }
        ],
    }
    s3.client().put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
    denied_before = s3.gate.denied
    capture = collect(store, s3, f"s3://{bucket}/datakit/store_4d2e363d")
    assert s3.gate.denied > denied_before, "the request reached the server and was refused"
    assert capture.status == "failed"
    assert capture.error is not None
    assert capture.error.type == "http-status"
    assert capture.error.detail["code"] == "AccessDenied"
    assert capture.error.detail["status"] == 403
    assert capture.error.detail["message"] == "Access Denied"
    assert isinstance(capture.error.detail["request_id"], str)
    assert capture.data["objects_listed"] == 0
    assert capture.blobs == ()
    assert not list(store.tmp_dir.iterdir())


def test_missing_bucket_is_captured(s3: S3Server, store: Store) -> None:
    capture = collect(store, s3, "s3://no-such-bucket-here/x")
    assert capture.status == "failed" and capture.error is not None
    assert capture.error.type == "http-status"
    assert capture.error.detail["code"] == "NoSuchBucket"
    assert capture.error.detail["status"] == 404


def test_unreachable_endpoint_is_captured(store: Store) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    opts = ListingOptions(
        name="gone", kind="listing", url="s3://bucket/p", endpoint_url=f"http://127.0.0.1:{port}"
    )
    context = CollectContext(store=store, base_dir=store.root, timeout=2, retries=1)
    capture = ListingCollector(opts, context).collect()
    assert capture.status == "failed" and capture.error is not None
    assert capture.error.type == "connect"


def test_versions_and_content_mode(s3: S3Server, store: Store) -> None:
    bucket = "versioned"
    s3.create_bucket(bucket)
    client = s3.client()
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    put = {"Bucket": bucket, "ACL": "public-read"}
    client.put_object(**put, Key="cells/a", Body=b"first")
    latest = client.put_object(**put, Key="cells/a", Body=b"second!")["VersionId"]
    other = client.put_object(**put, Key="cells/b", Body=b"bee")["VersionId"]
    capture = collect(store, s3, f"s3://{bucket}", versions=True, content=True, shard_objects=1)
    assert capture.status == "ok", capture.error
    content = capture.data["content"]
    assert isinstance(content, dict)
    entries = list(iter_entries(store, str(content["manifest"]["blob"])))  # type: ignore[index,call-overload]
    assert [(e["key"], e["version_id"], e["size"]) for e in entries] == [
        ("cells/a", latest, 7),
        ("cells/b", other, 3),
    ]
    assert entries[0]["blake3"] == blake3.blake3(b"second!").hexdigest()
    assert content["hashed"] == 2 and content["hashed_bytes"] == 10


def test_endpoint_credentials_are_redacted(s3: S3Server, store: Store) -> None:
    s3.create_bucket("redact-me", harrier_objects(3))
    opts = ListingOptions(
        name="r",
        kind="listing",
        url="s3://redact-me",
        endpoint_url=s3.url.replace("http://", "http://user:hunter22@"),
    )
    capture = ListingCollector(opts, CollectContext(store=store, base_dir=store.root)).collect()
    assert "hunter22" not in capture.model_dump_json()


def test_unreadable_objects_in_content_mode_are_a_failed_capture(
    s3: S3Server, store: Store
) -> None:
    bucket = "private-objects"
    s3.create_bucket(bucket)
    s3.client().put_object(Bucket=bucket, Key="a", Body=b"private")  # private ACL: no anonymous GET
    capture = collect(store, s3, f"s3://{bucket}", content=True)
    assert capture.status == "failed" and capture.error is not None
    assert capture.error.type == "content-read"
    assert "Forbidden" in capture.error.message
    assert capture.data["manifest"]["count"] == 1  # type: ignore[index,call-overload]
    assert [a["attempt"] for a in capture.attempts] == [1, 2]
