"""The huggingface collector against a real local server speaking the Hub's wire formats."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from provenance._testing.fixtures import Fixtures
from provenance._testing.server import LocalServer
from provenance.model import Capture

TOKEN_COUNTS = "marin-community/token-counts"
COMMIT = "3612ddc3350212e38ce8a50b99c3df7ea10b44a9"
Collect = Callable[..., Capture]


def hf(repo: str = TOKEN_COUNTS, **options: Any) -> dict[str, Any]:
    table = {"name": "token-counts", "kind": "huggingface", "repo": repo, **options}
    if repo == TOKEN_COUNTS:
        table.setdefault("repo_type", "dataset")
    return table


def files_of(capture: Capture) -> dict[str, dict[str, Any]]:
    return {f["path"]: f for f in capture.data["files"]}


def fetched_of(capture: Capture) -> dict[str, dict[str, Any]]:
    return {f["path"]: f for f in capture.data["fetched"]}


@pytest.fixture
def two_origins(marin_fixtures: Fixtures) -> Iterator[tuple[LocalServer, LocalServer]]:
    """A Hub and, on another origin, the CDN its LFS downloads are redirected to."""
    with LocalServer(marin_fixtures) as cdn:
        marin_fixtures.hf_cdn_url = cdn.url.replace("127.0.0.1", "localhost")
        with LocalServer(marin_fixtures) as hub:
            yield hub, cdn


def test_a_dataset_at_main_resolves_to_its_commit_with_every_file_and_lfs_sha256(
    collect: Collect, marin_server: LocalServer, marin_fixtures: Fixtures
) -> None:
    capture = collect(
        hf(files=["data/token_counts.csv", "README.md"]), env={"HF_ENDPOINT": marin_server.url}
    )

    assert capture.status == "ok", capture.error
    assert capture.data["revision"] == "main" and capture.data["commit"] == COMMIT
    commit = marin_fixtures.hf_repos[0].commits[COMMIT]
    files = files_of(capture)
    assert set(files) == {f.path for f in commit.files}
    for f in commit.files:
        assert files[f.path]["size"] == len(f.content)
        assert files[f.path]["oid"] == f.oid
        assert files[f.path]["lfs_sha256"] == (
            hashlib.sha256(f.content).hexdigest() if f.lfs else None
        )
    assert capture.data["files_from"] == "tree"
    # The tree was listed at the resolved commit and in pages (3 entries a page).
    assert [b.name for b in capture.blobs][:3] == [
        "api/revision.json",
        "api/tree.json",
        "api/tree.2.json",
    ]
    trees = [r for r in marin_server.requests if "/tree/" in r.path]
    assert all(r.path.endswith(f"/tree/{COMMIT}") for r in trees) and len(trees) == 2
    assert trees[1].param("cursor")
    assert capture.establishes == ("observed", "provider-asserted")


def test_named_files_are_downloaded_hashed_and_checked_against_the_hub(
    collect: Collect, marin_server: LocalServer, marin_fixtures: Fixtures
) -> None:
    capture = collect(
        hf(files=["data/token_counts.csv", "README.md", "not/there.txt"]),
        env={"HF_ENDPOINT": marin_server.url},
    )

    fetched = fetched_of(capture)
    csv = marin_fixtures.hf_repos[0].commits[COMMIT].file("data/token_counts.csv")
    assert csv is not None
    entry = fetched["data/token_counts.csv"]
    assert entry["sha256"] == hashlib.sha256(csv.content).hexdigest() == entry["linked_etag"]
    assert entry["redirected"] is True  # LFS content comes from the CDN
    assert entry["x_repo_commit"] == COMMIT
    assert entry["checks"] == {"size": True, "git_oid": None, "lfs_sha256": True, "commit": True}
    readme = fetched["README.md"]
    assert readme["checks"] == {"size": True, "git_oid": True, "lfs_sha256": None, "commit": True}
    assert readme["etag"] == readme["git_oid"]
    assert capture.data["missing_files"] == ["not/there.txt"]
    blob = next(b for b in capture.blobs if b.name == "data/token_counts.csv")
    assert blob.size == len(csv.content)
    # Dataset downloads use the /datasets/ prefix.
    assert marin_server.requests_to(f"/datasets/{TOKEN_COUNTS}/resolve/{COMMIT}/README.md")


def test_the_token_goes_to_the_hub_only_never_to_the_cdn(
    collect: Collect, two_origins: tuple[LocalServer, LocalServer], marin_fixtures: Fixtures
) -> None:
    hub, cdn = two_origins
    capture = collect(
        hf(files=["data/token_counts.csv"]),
        env={"HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_secretsecretsecret"},
    )

    assert capture.status == "ok", capture.error
    assert capture.request["authenticated"] is True
    assert all(r.header("authorization") == "Bearer hf_secretsecretsecret" for r in hub.requests)
    downloads = [r for r in cdn.requests if r.path.startswith("/hf-cdn/")]
    assert downloads and all(r.header("authorization") is None for r in downloads)
    # The signed CDN URL's signature is nowhere in the capture.
    signature = downloads[0].param("X-Amz-Signature")
    assert signature and signature not in capture.model_dump_json()


def test_a_tag_revision_and_a_commit_sha_resolve(
    collect: Collect, marin_server: LocalServer
) -> None:
    env = {"HF_ENDPOINT": marin_server.url}
    tools = "marin-community/marin-data-mix-tools"
    tag = collect(
        {"name": "t", "kind": "huggingface", "repo": tools, "revision": "08.18.2026"}, env=env
    )
    pinned = "75c25718e2a7cf7a3b1b498b00479351f80345e0"
    sha = collect({"name": "s", "kind": "huggingface", "repo": tools, "revision": pinned}, env=env)

    assert tag.data["commit"] == "5a0c7e1d2b3f4a5968778695a4b3c2d1e0f9a8b7"
    assert sha.data["commit"] == pinned
    assert "09.14.2026/clusters.json" in files_of(sha)
    assert "09.14.2026/clusters.json" not in files_of(tag)


def test_the_info_endpoint_lfs_sha256_is_used_when_there_is_no_tree_endpoint(
    collect: Collect, marin_fixtures: Fixtures
) -> None:
    marin_fixtures.hf_tree = False
    with LocalServer(marin_fixtures) as server:
        capture = collect(hf(), env={"HF_ENDPOINT": server.url})

    assert capture.status == "ok", capture.error
    assert capture.data["files_from"] == "siblings"
    csv = marin_fixtures.hf_repos[0].commits[COMMIT].file("data/token_counts.csv")
    assert csv is not None
    assert files_of(capture)["data/token_counts.csv"]["lfs_sha256"] == csv.sha256


def test_a_private_repo_needs_the_token(collect: Collect, marin_fixtures: Fixtures) -> None:
    marin_fixtures.hf_repos[0].private = True
    marin_fixtures.hf_token = "hf_privateprivate0001"
    with LocalServer(marin_fixtures) as server:
        anonymous = collect(hf(), env={"HF_ENDPOINT": server.url})
        allowed = collect(
            hf(), env={"HF_ENDPOINT": server.url, "HF_TOKEN": "hf_privateprivate0001"}
        )

    assert anonymous.status == "failed"
    assert anonymous.error is not None and anonymous.error.type == "http-status"
    assert anonymous.error.detail["status"] == 401
    assert anonymous.error.detail["x_error_code"] == "RepoNotFound"
    assert anonymous.data["commit"] is None
    assert allowed.status == "ok" and allowed.data["commit"] == COMMIT


def test_an_unknown_revision_is_a_failed_404(collect: Collect, marin_server: LocalServer) -> None:
    capture = collect(hf(revision="no-such-branch"), env={"HF_ENDPOINT": marin_server.url})

    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "http-status"
    assert capture.error.detail["status"] == 404
    assert capture.error.detail["x_error_code"] == "RevisionNotFound"
    assert [b.name for b in capture.blobs] == ["api/revision.json"]  # the error body is kept


def test_a_named_file_over_the_size_limit_fails_as_body_too_large(
    collect: Collect, marin_server: LocalServer
) -> None:
    capture = collect(
        hf(files=["data/token_counts.csv"], max_file_bytes=100),
        env={"HF_ENDPOINT": marin_server.url},
    )

    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "body-too-large"
    assert capture.data["commit"] == COMMIT  # what was seen before is kept
    entry = fetched_of(capture)["data/token_counts.csv"]
    assert entry["truncated"] is True and entry["size"] == 100


def test_the_endpoint_comes_from_the_collect_context_not_the_process(
    collect: Collect, marin_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: would fail
    capture = collect(hf(), env={"HF_ENDPOINT": marin_server.url})

    assert capture.status == "ok" and capture.request["endpoint"] == marin_server.url


def test_hub_file_layout_matches_real_git(marin_fixtures: Fixtures, tmp_path: Path) -> None:
    """The server's oids are git's: checked with the real git binary, LFS pointers included."""
    import subprocess

    from provenance._testing.hf_routes import tree_oid

    commit = marin_fixtures.hf_repos[1].commits["75c25718e2a7cf7a3b1b498b00479351f80345e0"]
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    for f in commit.files:
        target = repo / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.pointer if f.lfs else f.content)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    tree = subprocess.run(
        ["git", "write-tree"], cwd=repo, check=True, capture_output=True, text=True
    )
    root = tree.stdout.strip()
    for f in commit.files:
        oid = subprocess.run(
            ["git", "rev-parse", f"{root}:{f.path}"],
            cwd=repo,
            check=True,
            capture_output=True,
            text=True,
        )
        assert oid.stdout.strip() == f.oid
    sub = subprocess.run(
        ["git", "rev-parse", f"{root}:08.18.2026"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    assert sub.stdout.strip() == tree_oid(commit, "08.18.2026/")
    assert root == tree_oid(commit, "")


def test_a_space_is_read_through_the_spaces_paths(collect: Collect) -> None:
    from provenance._testing.fixtures import HfCommit, HfFile, HfRepo

    sha = "0123456789abcdef0123456789abcdef01234567"
    app = HfFile("app.py", b"import gradio\n")
    space = HfRepo(
        "space",
        "marin-community/leaderboard",
        {"main": sha},
        {sha: HfCommit(sha, "2026-09-01T00:00:00.000Z", [app])},
    )
    with LocalServer(Fixtures(hf_repos=[space])) as server:
        capture = collect(
            {
                "name": "space",
                "kind": "huggingface",
                "repo": "marin-community/leaderboard",
                "repo_type": "space",
                "files": ["app.py"],
            },
            env={"HF_ENDPOINT": server.url},
        )
        paths = [r.path for r in server.requests]

    assert capture.status == "ok", capture.error
    assert capture.data["commit"] == sha
    assert fetched_of(capture)["app.py"]["checks"]["git_oid"] is True
    assert paths[0] == "/api/spaces/marin-community/leaderboard/revision/main"
    assert paths[-1] == f"/spaces/marin-community/leaderboard/resolve/{sha}/app.py"
