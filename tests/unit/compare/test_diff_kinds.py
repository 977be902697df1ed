"""Per-kind comparison: http, huggingface, failed captures, sources coming and going."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from provenance._testing.server import LocalServer
from provenance.compare.diff import Diff, compare
from provenance.compare.evidence import Evidence, StoreBlobs
from provenance.model import Capture, Snapshot
from provenance.render.report import Format, render_diff
from provenance.store.objects import Store
from tests import marin_fixture as marin

URL = "https://example.org/artifact.json"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / ".prov").init()


def snap(label: str, *captures: Capture) -> Snapshot:
    return Snapshot(label=label, created="2026-08-24T15:00:00Z", captures=captures)


def run(store: Store, a: list[Capture], b: list[Capture]) -> tuple[Diff, str]:
    left = Evidence(snap("a", *a), "a", 1, StoreBlobs(store))
    right = Evidence(snap("b", *b), "b", 1, StoreBlobs(store))
    diff = compare(left, right)
    return diff, render_diff(diff, Format.TEXT)


def http(
    store: Store,
    status: int,
    body: bytes,
    media_type: str,
    headers: list[list[str]],
    **extra: Any,
) -> Capture:
    data: dict[str, Any] = {
        "method": "GET",
        "url": URL,
        "final_url": URL,
        "redirects": [],
        "status": status,
        "reason": "OK" if status == 200 else "Forbidden",
        "http_version": "HTTP/1.1",
        "headers": headers,
        "body": {"size": len(body), "truncated": False, "media_type": media_type},
        "elapsed_ms": 10.0,
        "server_ip": "127.0.0.1",
        "tls": None,
        "error_body": None,
        "json": None,
        **extra,
    }
    return marin.make_capture(
        store,
        "artifact",
        "http",
        {"method": "GET", "url": URL},
        data,
        [("body", body, media_type)],
        started="2026-08-24T15:00:00Z",
    )


def denied(store: Store, request_id: str, date: str) -> Capture:
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>'
        f"<Message>Access Denied</Message><RequestId>{request_id}</RequestId>"
        "<HostId>h-1</HostId></Error>"
    ).encode()
    error = {
        "code": "AccessDenied",
        "message": "Access Denied",
        "request_id": request_id,
        "host_id": "h-1",
    }
    headers = [
        ["date", date],
        ["content-type", "application/xml"],
        ["x-amz-request-id", request_id],
    ]
    return http(store, 403, body, "application/xml", headers, error_body=error)


def test_the_same_403_read_twice_is_no_difference(store: Store) -> None:
    a = denied(store, "tx-0001", "Sat, 23 Aug 2026 09:14:02 GMT")
    b = denied(store, "tx-000002", "Sat, 23 Aug 2026 09:20:41 GMT")
    assert a.digest != b.digest
    diff, text = run(store, [a], [b])
    assert diff.equal, text
    assert "no differences between a and b" in text
    volatile = text.partition("volatile (not counted as differences):")[2]
    for field in (
        "headers.date",
        "headers.x-amz-request-id",
        "error_body.request_id",
        "body.digest",
    ):
        assert field in volatile


def test_a_changed_error_is_a_difference(store: Store) -> None:
    a = denied(store, "tx-1", "d1")
    body = b"<Error><Code>NoSuchKey</Code><Message>The key does not exist</Message></Error>"
    b = http(
        store,
        404,
        body,
        "application/xml",
        [["content-type", "application/xml"]],
        error_body={"code": "NoSuchKey", "message": "The key does not exist"},
    )
    diff, text = run(store, [a], [b])
    assert not diff.equal
    assert "~ status: 403 -> 404\n" in text
    assert 'error_body.code: "AccessDenied" -> "NoSuchKey"' in text
    assert "+<Error><Code>NoSuchKey</Code>" in text  # the body as text, both blobs at hand


def test_json_body_and_headers_that_matter(store: Store) -> None:
    a = http(
        store,
        200,
        b'{"version": "2026.08.18", "cells": 200}',
        "application/json",
        [["etag", '"a1"'], ["server", "nginx"], ["content-type", "application/json"]],
    )
    b = http(
        store,
        200,
        b'{"version": "2026.09.14", "cells": 200}',
        "application/json",
        [["etag", '"b2"'], ["server", "envoy"], ["content-type", "application/json"]],
    )
    diff, text = run(store, [a], [b])
    assert not diff.equal
    assert '~ headers.etag: "\\"a1\\"" -> "\\"b2\\""' in text
    real, _, volatile = text.partition("volatile (not counted as differences):")
    assert "headers.server" in volatile and "headers.server" not in real
    # no parsed `json` in the capture: the body is parsed from the stored blob
    assert "in body:" in real
    assert 'version: "2026.08.18" -> "2026.09.14"' in real


def test_huggingface_files_and_their_contents(store: Store, marin_server: LocalServer) -> None:
    a = marin.token_counts_capture(store, "2026-08-24T15:00:00Z", marin_server)
    csv = (marin.fixtures.DATA / "server" / "common" / "files" / "token_counts.csv").read_bytes()
    changed = csv.replace(b"dclm-baseline,3612000000000", b"dclm-baseline,3700012345678")
    data = json.loads(json.dumps(a.data))
    data["commit"] = data["revision"] = "75c25718e2a7cf7a3b1b498b00479351f80345e0"
    record = next(f for f in data["files"] if f["path"] == "data/token_counts.csv")
    record.update(size=len(changed), oid="9a9a9a9a" * 5)
    b = marin.make_capture(
        store,
        "token-counts",
        "huggingface",
        a.request,
        data,
        [("data/token_counts.csv", changed, "text/csv")],
        started="2026-09-20T12:00:00Z",
    )
    diff, text = run(store, [a], [b])
    assert not diff.equal
    assert "~ commit: 3612ddc3350212e38ce8a50b99c3df7ea10b44a9 -> 75c25718" in text
    assert "~ data/token_counts.csv:" in text
    assert "-dclm-baseline,3612000000000,web" in text and "+dclm-baseline,3700012345678,web" in text
    assert ".gitattributes" not in text


def test_failed_capture_added_and_removed_sources(store: Store, marin_server: LocalServer) -> None:
    ok = marin.token_counts_capture(store, "2026-08-24T15:00:00Z", marin_server)
    failed = marin.failed_capture(ok)
    diff, text = run(store, [ok], [failed])
    assert 'status: "ok" -> "failed"' in text
    assert '~ error: null -> {type: "timeout"' in text

    run_capture = marin.wandb_capture(store, "m1", "2026-08-24T15:00:00Z", marin_server)
    diff, text = run(store, [ok], [ok, run_capture])
    assert not diff.equal and diff.counts.sources_changed == 1
    assert "hero-run [wandb]: added" in text and "new source in B" in text
    diff, text = run(store, [ok, run_capture], [ok])
    assert "hero-run [wandb]: removed" in text


def test_unknown_kind_is_compared_generically(store: Store) -> None:
    a = marin.make_capture(
        store,
        "bucket",
        "listing",
        {"prefix": "s3://x/"},
        {"objects": [{"key": "a", "size": 1}], "manifest": "m1"},
        [],
        started="2026-08-24T15:00:00Z",
    )
    b = marin.make_capture(
        store,
        "bucket",
        "listing",
        {"prefix": "s3://x/"},
        {"objects": [{"key": "a", "size": 2}, {"key": "b", "size": 5}], "manifest": "m2"},
        [],
        started="2026-08-24T15:00:00Z",
    )
    _, text = run(store, [a], [b])
    assert "~ objects[key=a].size: 1 -> 2 (+1, +100.00%)" in text
    assert '+ objects[key=b]: added {key: "b", size: 5}' in text


def test_listing_objects_added_removed_and_changed(project: Path, prov: Any) -> None:
    """Two listings of a real local folder by the real listing collector, then `prov diff`."""
    data = project / "store_4d2e363d"
    for cell in ("c07q3", "c14q1"):
        for shard in range(3):
            path = data / cell / f"shard-{shard:07d}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{cell} {shard}\n")
    (project / "prov.toml").write_text(
        '[[sources]]\nname = "store"\nkind = "listing"\nurl = "store_4d2e363d"\ncontent = true\n'
    )
    assert prov("keygen", "alice").exit_code == 0
    assert prov("snapshot", "--label", "s1", "--key", "keys/alice.key").exit_code == 0
    (data / "c07q3" / "shard-0000001.jsonl").write_text("c07q3 1, rewritten\n")
    (data / "c14q1" / "shard-0000002.jsonl").unlink()
    (data / "c30q4").mkdir()
    (data / "c30q4" / "shard-0000000.jsonl").write_text("c30q4 0\n")
    assert prov("snapshot", "--label", "s2", "--key", "keys/alice.key").exit_code == 0
    result = prov("diff", "s1", "s2")
    assert result.exit_code == 1, result.output
    out = result.output
    assert "objects: 1 added, 1 removed, 1 changed" in out
    assert "+ c30q4/shard-0000000.jsonl: added (8 bytes)" in out
    assert "- c14q1/shard-0000002.jsonl: removed (was 8 bytes)" in out
    assert "~ c07q3/shard-0000001.jsonl: 8 -> 19 bytes (+11)" in out
    assert "+ prefixes[prefix=c30q4]: added" in out
    assert "manifest.root:" in out
