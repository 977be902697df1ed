"""Acceptance: one prov.toml with git, wandb, huggingface and http sources, run by a user."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3
import pytest
from click.testing import Result

from provenance._testing.fixtures import Fixtures
from provenance._testing.server import LocalServer
from tests.conftest import GitRepo

ARTIFACT = "/marin/datakit/store_4d2e363d/.artifact.json"


def write_config(project: Path, plain: LocalServer, tls: LocalServer, repo: Path) -> None:
    (project / "prov.toml").write_text(
        f"""\
[defaults]
timeout = 5
retries = 1
backoff = 0.01

[[sources]]
name = "launcher"
kind = "git"
repo = "{repo}"
ref = "main"

[[sources]]
name = "hero-run"
kind = "wandb"
run = "marin-community/marin_moe/hero-12d8b6f0-dee637"

[[sources]]
name = "token-counts"
kind = "huggingface"
repo = "marin-community/token-counts"
repo_type = "dataset"
revision = "main"
files = ["data/token_counts.csv"]

[[sources]]
name = "harrier-store-artifact"
kind = "http"
url = "{plain.url}{ARTIFACT}"

[[sources]]
name = "checkpoint-metadata"
kind = "http"
url = "{tls.url}/marin/checkpoints/hero/step-58014/metadata.json"
ca_bundle = "{tls.ca_file}"
"""
    )


def test_snapshot_of_every_kind_against_the_local_server(
    project: Path,
    prov: Callable[..., Result],
    make_repo: Callable[[str], GitRepo],
    marin_server: LocalServer,
    marin_tls_server: LocalServer,
    marin_fixtures: Fixtures,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_repo("marin")
    repo.write(
        "experiments/grug/moe_hero_ep/launch_scaling_ladder.py", "NUM_TRAIN_STEPS = 390251\n"
    )
    commit = repo.commit("launcher")
    write_config(project, marin_server, marin_tls_server, repo.path)
    assert marin_fixtures.wandb_api_key is not None
    monkeypatch.setenv("WANDB_BASE_URL", marin_server.url)
    monkeypatch.setenv("WANDB_API_KEY", marin_fixtures.wandb_api_key)
    monkeypatch.setenv("HF_ENDPOINT", marin_server.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)

    assert prov("keygen", "release").exit_code == 0
    result = prov("snapshot", "--label", "step-13527", "--key", "keys/release.key")
    assert result.exit_code == 0, result.output + result.stderr
    assert "[5/5]" in result.stderr  # progress on stderr, one line per source

    shown = prov("show", "step-13527", "--format", "json")
    assert shown.exit_code == 0
    document = json.loads(shown.stdout)
    captures: dict[str, Any] = {c["source"]: c for c in document["snapshot"]["captures"]}
    assert all(c["status"] == "ok" for c in captures.values())

    assert captures["launcher"]["data"]["commit"] == commit

    hero = captures["hero-run"]["data"]
    assert hero["run"]["state"] == "running"
    assert hero["run"]["heartbeat_at"] == "2026-08-24T14:53:42"
    assert hero["config"]["trainer"]["num_train_steps"] == 390251
    assert hero["config"]["parameter_count"] == 535477106688
    # Exact integers in the JSON text itself, not 5.35e11 or 535477106688.0.
    assert re.search(r'"parameter_count": 535477106688[,\n]', shown.stdout)
    assert re.search(r'"num_train_steps": 390251[,\n]', shown.stdout)

    hub = captures["token-counts"]["data"]
    assert hub["revision"] == "main" and re.fullmatch(r"[0-9a-f]{40}", hub["commit"])
    commit_files = marin_fixtures.hf_repos[0].commits[hub["commit"]].files
    lfs = {f.path: f.sha256 for f in commit_files if f.lfs}
    assert lfs and {f["path"]: f["lfs_sha256"] for f in hub["files"] if f["lfs_sha256"]} == lfs

    store_403 = captures["harrier-store-artifact"]
    assert store_403["data"]["status"] == 403
    assert store_403["data"]["error_body"]["code"] == "AccessDenied"
    route = next(r for r in marin_fixtures.routes if r.path == ARTIFACT)
    body = next(b for b in store_403["blobs"] if b["name"] == "body")
    assert body["digest"] == "blake3:" + blake3.blake3(route.body).hexdigest()

    tls = captures["checkpoint-metadata"]
    assert tls["data"]["tls"]["peer_cert_sha256"] == marin_tls_server.cert_sha256
    assert "tls-bound" in tls["establishes"]

    verified = prov(
        "verify",
        "attestations/step-13527.intoto.jsonl",
        "--key",
        "keys/release.pub",
        "--store",
        ".prov",
    )
    assert verified.exit_code == 0, verified.output
