"""The local test server speaks the real wire formats: real clients accept what it serves."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from provenance._testing.fixtures import Fixtures
from provenance._testing.server import LocalServer, wandb_auth

MARIN = Path(__file__).resolve().parents[2] / "examples" / "marin" / "data" / "server"
COMMIT = "3612ddc3350212e38ce8a50b99c3df7ea10b44a9"


def test_the_huggingface_hub_client_reads_the_hub_endpoints(
    marin_server: LocalServer, marin_fixtures: Fixtures, tmp_path: Path
) -> None:
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.hf_api import RepoFile, RepoFolder

    api = HfApi(endpoint=marin_server.url, token=False)
    info = api.dataset_info("marin-community/token-counts", revision="main", files_metadata=True)
    assert info.sha == COMMIT
    csv = next(s for s in info.siblings or [] if s.rfilename == "data/token_counts.csv")
    assert csv.lfs is not None  # parsed from the info endpoint's lfs.sha256

    tree = list(
        api.list_repo_tree("marin-community/token-counts", repo_type="dataset", recursive=True)
    )
    assert len([r for r in marin_server.requests if "/tree/" in r.path]) == 2  # followed Link
    files = {t.path: t for t in tree if isinstance(t, RepoFile)}
    assert [t.path for t in tree if isinstance(t, RepoFolder)] == ["data"]
    lfs = files["data/token_counts.csv"].lfs
    assert lfs is not None and lfs.sha256 == csv.lfs.sha256  # lfs.oid on the tree endpoint

    content = marin_fixtures.hf_repos[0].commits[COMMIT].file("data/token_counts.csv")
    assert content is not None
    for name in ("data/token_counts.csv", "README.md"):
        path = hf_hub_download(
            "marin-community/token-counts",
            name,
            repo_type="dataset",
            endpoint=marin_server.url,
            cache_dir=tmp_path,
            token=False,
        )
        assert COMMIT in path  # the client read X-Repo-Commit
    assert Path(path).read_bytes() == marin_fixtures.hf_repos[0].commits[COMMIT].files[1].content


def test_graphql_needs_the_key_and_sends_config_as_a_json_string(
    marin_server: LocalServer, marin_fixtures: Fixtures
) -> None:
    query = "query Run($project: String!, $entity: String!, $name: String!) { project(name: $project, entityName: $entity) { run(name: $name) { state config historyKeys } } }"  # noqa: E501
    variables = {
        "entity": "marin-community",
        "project": "marin_moe",
        "name": "hero-12d8b6f0-dee637",
    }
    payload = {"query": query, "variables": variables}
    denied = httpx.post(marin_server.url + "/graphql", json=payload)
    assert denied.status_code == 401 and denied.json()["errors"]

    assert marin_fixtures.wandb_api_key is not None
    answer = httpx.post(
        marin_server.url + "/graphql",
        json=payload,
        headers={"Authorization": wandb_auth(marin_fixtures.wandb_api_key)},
    )
    run = answer.json()["data"]["project"]["run"]
    assert set(run) == {"state", "config", "historyKeys"}  # only what was asked
    config = json.loads(run["config"])
    assert config["parameter_count"] == {"value": 535477106688}
    assert config["_wandb"]["value"]["cli_version"] == "0.21.1"


def test_the_module_entry_point_serves_a_fixture_directory() -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "provenance._testing.server",
            "--fixtures",
            str(MARIN / "m1"),
            "--fixtures",
            str(MARIN / "common"),
            "--tls",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )
    try:
        assert process.stdout is not None
        info = json.loads(process.stdout.readline())
        plain = httpx.get(info["http"] + "/marin/datakit/store_4d2e363d/.artifact.json")
        assert plain.status_code == 403 and b"<Code>AccessDenied</Code>" in plain.content
        import ssl

        context = ssl.create_default_context(cafile=info["ca_file"])
        secure = httpx.get(
            info["https"] + "/api/datasets/marin-community/token-counts", verify=context
        )
        assert secure.json()["sha"] == COMMIT
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)
    assert process.returncode == 0, stderr


def test_tree_pages_carry_an_opaque_cursor_in_a_link_header(marin_server: LocalServer) -> None:
    first = httpx.get(
        f"{marin_server.url}/api/datasets/marin-community/token-counts/tree/main",
        params={"recursive": "true"},
    )
    following = first.links["next"]["url"]
    cursor = httpx.URL(following).params["cursor"]
    assert int(base64.urlsafe_b64decode(cursor)) == 3
    second = httpx.get(following)
    assert "next" not in second.links
    paths = [e["path"] for e in first.json() + second.json()]
    assert paths == [".gitattributes", "README.md", "data", "data/token_counts.csv"]


@pytest.mark.parametrize("tls", [False, True])
def test_stopping_never_waits_for_a_slow_answer(tls: bool, marin_fixtures: Fixtures) -> None:
    import threading
    import time

    server = LocalServer(marin_fixtures, tls=tls).start()
    verify = server.ca_file and __import__("ssl").create_default_context(cafile=str(server.ca_file))
    outcome: list[object] = []

    def ask() -> None:
        try:
            outcome.append(httpx.get(server.url + "/slow", timeout=60, verify=verify or True))
        except httpx.HTTPError as e:
            outcome.append(e)

    thread = threading.Thread(target=ask)
    thread.start()
    time.sleep(0.3)
    started = time.monotonic()
    server.stop()
    thread.join(timeout=10)
    assert time.monotonic() - started < 3 and outcome


def test_the_real_w_and_b_client_query_is_answered(
    marin_server: LocalServer, marin_fixtures: Fixtures, shared: Path
) -> None:
    source = shared / "marin" / "wandb" / "graphql_queries_wandb_0.31.0.graphql"
    if not source.is_file():
        pytest.skip(f"{source} is not in this copy of ../shared: update it (PROV_SHARED=DIR)")
    document = "\n".join(
        line for line in source.read_text().splitlines() if not line.lstrip().startswith("#")
    )
    assert marin_fixtures.wandb_api_key is not None
    answer = httpx.post(
        marin_server.url + "/graphql",
        json={
            "query": document,
            "operationName": "Run",
            "variables": {
                "entity": "marin-community",
                "project": "marin_moe",
                "name": "hero-12d8b6f0-dee637",
            },
        },
        headers={"Authorization": wandb_auth(marin_fixtures.wandb_api_key)},
    )
    run = answer.json()["data"]["project"]["run"]
    assert {"config", "summaryMetrics", "heartbeatAt", "historyKeys", "user"} <= set(run)
    assert isinstance(run["summaryMetrics"], str)
