"""Acceptance: remote failures are evidence; the snapshot completes and says it is partial."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from provenance._testing.server import LocalServer

TIMEOUT = 1.0


def write_config(project: Path, server: LocalServer) -> None:
    (project / "prov.toml").write_text(
        f"""\
[defaults]
timeout = 5
retries = 2
backoff = 0.05

[[sources]]
name = "artifact"
kind = "http"
url = "{server.url}/marin/datakit/store_4d2e363d/.artifact.json"

[[sources]]
name = "slow"
kind = "http"
url = "{server.url}/slow"
timeout = {TIMEOUT}

[[sources]]
name = "reset"
kind = "http"
url = "{server.url}/reset"

[[sources]]
name = "down"
kind = "http"
url = "{server.url}/down"
"""
    )


def test_a_partial_snapshot_completes_records_the_failures_and_exits_4(
    project: Path, prov: Callable[..., Result], marin_server: LocalServer
) -> None:
    write_config(project, marin_server)
    started = time.monotonic()
    result = prov("snapshot", "--no-sign", "--label", "partial")
    elapsed = time.monotonic() - started

    assert result.exit_code == 4, result.output + result.stderr
    assert "3 source(s) failed" in result.stderr
    # Sources run concurrently: the whole snapshot takes about the slowest timeout, no more.
    assert elapsed < TIMEOUT + 3

    shown = json.loads(prov("show", "partial", "--format", "json").stdout)
    captures = {c["source"]: c for c in shown["snapshot"]["captures"]}
    assert captures["artifact"]["status"] == "ok"
    slow, reset, down = captures["slow"], captures["reset"], captures["down"]
    assert (slow["status"], slow["error"]["type"]) == ("failed", "timeout")
    assert slow["error"]["detail"]["timeout_s"] == TIMEOUT
    assert (reset["status"], reset["error"]["type"]) == ("failed", "reset")
    assert reset["data"]["headers"]  # what arrived before the reset is kept
    assert (down["status"], down["error"]["type"]) == ("failed", "http-status")
    assert [a["status"] for a in down["attempts"]] == [503, 503, 503]

    log = prov("log", "--format", "json")
    entry = json.loads(log.stdout)["snapshots"][0]
    assert sorted(entry["failed"]) == ["down", "reset", "slow"]


def test_strict_turns_a_partial_snapshot_into_a_failure(
    project: Path, prov: Callable[..., Result], marin_server: LocalServer
) -> None:
    write_config(project, marin_server)
    result = prov("snapshot", "--no-sign", "--label", "strict", "--strict")

    assert result.exit_code == 1
    assert (project / "attestations" / "strict.intoto.jsonl").is_file()  # still written


def test_all_sources_ok_exits_0(
    project: Path, prov: Callable[..., Result], marin_server: LocalServer
) -> None:
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "a"\nkind = "http"\nurl = "{marin_server.url}/flaky"\n'
        "[defaults]\nbackoff = 0.01\n"
    )
    result = prov("snapshot", "--no-sign", "--label", "fine", "--strict")

    assert result.exit_code == 0, result.output + result.stderr
    assert "retry 1/3" in result.stderr  # the retries are shown on stderr as they happen
