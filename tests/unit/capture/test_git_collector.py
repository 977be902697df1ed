"""The git collector against real repositories made with the real git binary."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3
import pytest

from provenance.capture.base import CollectContext
from provenance.capture.git import GitCollector, GitOptions
from provenance.errors import CollectorError
from provenance.model import Capture
from provenance.store.objects import Store
from tests.conftest import GitRepo


def capture(repo: str, tmp_path: Path, **options: Any) -> Capture:
    store = Store(tmp_path / ".prov").init()
    context = CollectContext(store=store, base_dir=tmp_path)
    return GitCollector(
        GitOptions(name="code", kind="git", repo=repo, **options), context
    ).collect()


@pytest.fixture
def launcher(make_repo: Callable[[str], GitRepo]) -> GitRepo:
    repo = make_repo("marin")
    repo.write("experiments/grug/moe_hero_ep/launch_scaling_ladder.py", "NUM_STEPS = 390_251\n")
    repo.write("experiments/grug/moe_hero_ep/harrier_mix_2026_08_18.json", '{"cells": 200}\n')
    repo.write("README.md", "# marin\n")
    repo.commit("launcher")
    repo.git("tag", "v1")
    return repo


def test_records_commit_tree_files_and_blake3_of_every_blob(
    launcher: GitRepo, tmp_path: Path
) -> None:
    result = capture("marin", tmp_path)
    data = result.data
    assert data["commit"] == launcher.git("rev-parse", "HEAD")
    assert data["tree"] == launcher.git("rev-parse", "HEAD^{tree}")
    assert data["dirty"] is False
    files = {f["path"]: f for f in data["files"]}  # type: ignore[index, union-attr]
    readme = files["README.md"]
    assert readme["mode"] == "100644"
    assert readme["oid"] == launcher.git("rev-parse", "HEAD:README.md")
    assert readme["size"] == len("# marin\n")
    blobs = {b.name: b for b in result.blobs}
    assert blobs["README.md"].digest == "blake3:" + blake3.blake3(b"# marin\n").hexdigest()


def test_paths_limit_the_capture(launcher: GitRepo, tmp_path: Path) -> None:
    result = capture("marin", tmp_path, paths=["experiments/grug/moe_hero_ep/", "nope"])
    paths = [f["path"] for f in result.data["files"]]  # type: ignore[index, union-attr]
    assert paths == [
        "experiments/grug/moe_hero_ep/harrier_mix_2026_08_18.json",
        "experiments/grug/moe_hero_ep/launch_scaling_ladder.py",
    ]
    assert result.data["missing_paths"] == ["nope"]


@pytest.mark.parametrize(("ref", "kind"), [("main", "branch"), ("v1", "tag"), ("HEAD", "symbolic")])
def test_ref_kinds(launcher: GitRepo, tmp_path: Path, ref: str, kind: str) -> None:
    assert capture("marin", tmp_path, ref=ref).data["ref_kind"] == kind


def test_a_sha_ref_resolves_to_the_full_commit(launcher: GitRepo, tmp_path: Path) -> None:
    sha = launcher.git("rev-parse", "HEAD")
    result = capture("marin", tmp_path, ref=sha[:12])
    assert (result.data["ref_kind"], result.data["commit"]) == ("sha", sha)


def test_same_commit_twice_gives_identical_capture_digests(
    launcher: GitRepo, tmp_path: Path
) -> None:
    first, second = capture("marin", tmp_path), capture("marin", tmp_path)
    assert first.digest == second.digest
    assert first.blobs == second.blobs


def test_dirty_working_tree_is_flagged(launcher: GitRepo, tmp_path: Path) -> None:
    launcher.write("README.md", "# edited, not committed\n")
    assert capture("marin", tmp_path).data["dirty"] is True
    # The flag is about the checkout: capturing another commit is not "dirty".
    assert capture("marin", tmp_path, ref="v1").data["dirty"] is True
    launcher.git("stash")
    assert capture("marin", tmp_path).data["dirty"] is False


def test_a_url_is_fetched_shallowly(launcher: GitRepo, tmp_path: Path) -> None:
    url = f"file://{launcher.path}"
    result = capture(url, tmp_path, ref="v1")
    assert result.data["commit"] == launcher.git("rev-parse", "v1^{commit}")
    assert (result.data["ref_kind"], result.data["dirty"]) == ("tag", None)
    assert result.data["remote_url"] == url
    assert len(result.blobs) == 3


def test_credentials_in_a_url_are_not_recorded(launcher: GitRepo, tmp_path: Path) -> None:
    with pytest.raises(CollectorError) as caught:
        capture("https://user:s3cret-token@127.0.0.1:9/none.git", tmp_path)
    assert "s3cret-token" not in caught.value.diagnostics()


@pytest.mark.parametrize(
    ("repo", "ref", "message"),
    [
        ("missing", "HEAD", "repository 'missing' does not exist"),
        ("marin", "no-such-branch", "ref 'no-such-branch' does not name a commit"),
        ("plain", "HEAD", "is not a git repository"),
    ],
)
def test_bad_repository_or_ref(
    launcher: GitRepo, tmp_path: Path, repo: str, ref: str, message: str
) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(CollectorError, match=message):
        capture(repo, tmp_path, ref=ref)
