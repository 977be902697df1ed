"""Acceptance: `prov export-warc` writes WARC that warcio's own tools accept."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from warcio.archiveiterator import ArchiveIterator

from provenance._testing.fixtures import Fixtures
from provenance._testing.server import LocalServer

ARTIFACT = "/marin/datakit/store_4d2e363d/.artifact.json"
WARCIO = Path(sys.executable).parent / "warcio"


@pytest.fixture
def snapshot(
    project: Path,
    prov: Callable[..., Result],
    marin_server: LocalServer,
    marin_tls_server: LocalServer,
) -> str:
    (project / "prov.toml").write_text(
        f"""\
[defaults]
timeout = 1
retries = 0

[[sources]]
name = "artifact"
kind = "http"
url = "{marin_server.url}{ARTIFACT}"

[[sources]]
name = "artifact-head"
kind = "http"
method = "HEAD"
url = "{marin_server.url}{ARTIFACT}"

[[sources]]
name = "moved"
kind = "http"
url = "{marin_tls_server.url}/moved"
ca_bundle = "{marin_tls_server.ca_file}"

[[sources]]
name = "slow"
kind = "http"
url = "{marin_server.url}/slow"
timeout = 0.3
"""
    )
    result = prov("snapshot", "--no-sign", "--label", "w1")
    assert result.exit_code == 4, result.output + result.stderr  # "slow" timed out
    return "w1"


@pytest.mark.parametrize("name", ["captures.warc.gz", "captures.warc"])
def test_the_warc_passes_warcio_check_and_indexes_the_403(
    project: Path,
    prov: Callable[..., Result],
    snapshot: str,
    marin_server: LocalServer,
    marin_fixtures: Fixtures,
    name: str,
) -> None:
    result = prov("export-warc", snapshot, "-o", name)
    assert result.exit_code == 0, result.output
    assert "15 WARC records, 5 response(s) from 4 http capture(s)" in result.stdout

    check = subprocess.run([str(WARCIO), "check", "-v", name], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "digest pass" in check.stdout and "fail" not in check.stdout

    index = subprocess.run(
        [str(WARCIO), "index", "-f", "warc-type,warc-target-uri,http:status", name],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [json.loads(line) for line in index.stdout.splitlines()]
    forbidden = {
        "warc-type": "response",
        "warc-target-uri": marin_server.url + ARTIFACT,
        "http:status": "403",
    }
    assert rows.count(forbidden) == 2  # the GET and the HEAD
    statuses = [r.get("http:status") for r in rows if r["warc-type"] == "response"]
    assert statuses == ["403", "403", "302", "301", "200"]
    assert [r["warc-type"] for r in rows].count("request") == 5
    assert [r["warc-type"] for r in rows].count("metadata") == 4  # the timeout too


def test_the_response_record_holds_the_stored_body_bytes(
    project: Path,
    prov: Callable[..., Result],
    snapshot: str,
    marin_fixtures: Fixtures,
) -> None:
    assert prov("export-warc", snapshot, "-o", "out.warc.gz").exit_code == 0
    route = next(r for r in marin_fixtures.routes if r.path == ARTIFACT)
    with (project / "out.warc.gz").open("rb") as handle:
        records = [
            (
                record.rec_type,
                record.rec_headers.get_header("WARC-Target-URI"),
                record.rec_headers.get_header("WARC-IP-Address"),
                record.http_headers.get_statuscode() if record.http_headers else None,
                record.content_stream().read(),
            )
            for record in ArchiveIterator(handle)
        ]
    first = next(r for r in records if r[0] == "response")
    assert first[1].endswith(ARTIFACT) and first[2] == "127.0.0.1" and first[3] == "403"
    assert first[4] == route.body
    request = next(r for r in records if r[0] == "request")
    assert request[1] == first[1]
    metadata = [json.loads(r[4]) for r in records if r[0] == "metadata"]
    assert {m["source"] for m in metadata} == {"artifact", "artifact-head", "moved", "slow"}
    assert next(m for m in metadata if m["source"] == "slow")["error"]["type"] == "timeout"


def test_export_needs_a_store(project: Path, prov: Callable[..., Result]) -> None:
    result = prov("export-warc", "nothing", "-o", "x.warc")
    assert result.exit_code == 2
    assert "no prov store" in result.stderr


def test_a_tampered_body_is_never_exported(
    project: Path, prov: Callable[..., Result], snapshot: str
) -> None:
    """The archive carries only bytes the snapshot signed: every body is re-hashed first."""
    import os

    from provenance.digest import Digest
    from provenance.store.objects import Store

    shown = json.loads(prov("show", snapshot, "--format", "json").stdout)
    capture = next(c for c in shown["snapshot"]["captures"] if c["source"] == "artifact")
    body = next(b for b in capture["blobs"] if b["name"] == "body")
    path = Store(project / ".prov").object_path(Digest.parse(body["digest"]))
    original = path.read_bytes()
    os.chmod(path, 0o644)
    path.write_bytes(original.replace(b"<", b">", 1))
    result = prov("export-warc", snapshot, "-o", "tampered.warc")
    assert result.exit_code != 0 and "corrupt" in result.output
    assert not (project / "tampered.warc").exists()
    assert "signatures were not checked" in result.stderr
