"""Turning recorded captures back into sources: what replays, what is gone, what cannot be asked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.server import LocalServer
from provenance.capture.base import CollectContext
from provenance.capture.recheck import options_for, recollect_one
from provenance.compare.evidence import NoBlobs
from provenance.compare.recheck import classify
from provenance.errors import CollectorError
from provenance.model import Capture
from provenance.store.objects import Store
from tests.conftest import GitRepo


def _context(tmp_path: Path, base: Path | None = None) -> CollectContext:
    store = Store(tmp_path / "store")
    store.init()
    return CollectContext(store=store, base_dir=base or tmp_path, retries=0)


def test_an_http_request_replays_as_recorded(
    collect: Callable[..., Capture], tmp_path: Path
) -> None:
    routes = [Route("/doc", body=b'{"a": 1}', headers=[("Content-Type", "application/json")])]
    with LocalServer(Fixtures(routes=routes)) as server:
        table = {
            "name": "doc",
            "kind": "http",
            "url": f"{server.url}/doc?x=1",
            "headers": {"Accept": "application/json"},
            "volatile": ["json.a"],
        }
        original = collect(table)
        _, options = options_for(original)
        assert options.model_dump(include={"url", "headers", "volatile", "method"}) == {
            "url": f"{server.url}/doc?x=1",
            "headers": {"Accept": "application/json"},
            "volatile": ["json.a"],
            "method": "GET",
        }
        again = recollect_one(original, _context(tmp_path))
        assert again.fresh.request == original.request  # the same question, asked again
        check = classify(again, NoBlobs(), NoBlobs())
        assert check.outcome == "same"
        assert server.requests_to("/doc")[-1].header("Accept") == "application/json"


def test_a_redacted_request_is_not_replayed(
    collect: Callable[..., Capture], tmp_path: Path
) -> None:
    with LocalServer(Fixtures(routes=[Route("/doc", body=b"x")])) as server:
        original = collect(
            {"name": "doc", "kind": "http", "url": f"{server.url}/doc?X-Amz-Signature=abcdef123"}
        )
        with pytest.raises(CollectorError, match="held a credential"):
            options_for(original)
        again = recollect_one(original, _context(tmp_path))
        assert (again.replayed, again.fresh.status) == (False, "failed")
        assert classify(again, NoBlobs(), NoBlobs()).outcome == "failed-now"
        assert not server.requests_to("/doc")[1:]  # asked once, by the original capture only


def test_an_unknown_kind_is_a_failure_now_not_a_crash(
    collect: Callable[..., Capture], tmp_path: Path
) -> None:
    with LocalServer(Fixtures(routes=[Route("/doc", body=b"x")])) as server:
        original = collect({"name": "doc", "kind": "http", "url": f"{server.url}/doc"})
    strange = original.model_copy(update={"kind": "gopher"})
    again = recollect_one(strange, _context(tmp_path))
    assert again.fresh.error is not None and "no collector" in again.fresh.error.message


def test_a_404_now_is_gone(collect: Callable[..., Capture], tmp_path: Path) -> None:
    with LocalServer(Fixtures(routes=[Route("/doc", body=b"x")])) as server:
        original = collect({"name": "doc", "kind": "http", "url": f"{server.url}/doc"})
        server.fixtures = Fixtures(routes=[])
        check = classify(recollect_one(original, _context(tmp_path)), NoBlobs(), NoBlobs())
    assert check.outcome == "gone" and "404" in check.detail


def test_a_commit_that_no_longer_exists_is_gone(
    make_repo: Callable[[str], GitRepo], collect: Callable[..., Capture], tmp_path: Path
) -> None:
    repo = make_repo("repo")
    repo.write("a.txt", "one\n")
    repo.commit("one")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("a.txt", "two\n")
    commit = repo.commit("two")
    original = collect({"name": "code", "kind": "git", "repo": str(repo.path), "ref": commit})
    repo.git("checkout", "-q", "main")
    repo.git("branch", "-q", "-D", "feature")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    again = recollect_one(original, _context(tmp_path))
    assert again.gone and again.fresh.error is not None
    assert classify(again, NoBlobs(), NoBlobs()).outcome == "gone"


def test_a_moved_branch_is_changed(
    make_repo: Callable[[str], GitRepo], collect: Callable[..., Capture], tmp_path: Path
) -> None:
    repo = make_repo("repo")
    repo.write("a.txt", "one\n")
    repo.commit("one")
    original = collect({"name": "code", "kind": "git", "repo": str(repo.path), "ref": "main"})
    repo.write("a.txt", "two\n")
    repo.commit("two")
    check = classify(recollect_one(original, _context(tmp_path)), NoBlobs(), NoBlobs())
    assert check.outcome == "changed" and "commit" in check.detail
    assert "still exists" in check.detail  # a branch that moved on, not rewritten


def _hf(commits: dict[str, bytes], main: str) -> Fixtures:
    from provenance._testing.fixtures import HfCommit, HfFile, HfRepo

    history = {
        sha: HfCommit(sha, "2026-09-01T00:00:00.000Z", [HfFile("data.csv", content)])
        for sha, content in commits.items()
    }
    return Fixtures(hf_repos=[HfRepo("dataset", "org/counts", {"main": main}, history)])


OLD, NEW = "1" * 40, "2" * 40


@pytest.mark.parametrize("kept", [True, False])
def test_a_force_pushed_hub_revision_says_whether_the_attested_commit_survived(
    collect: Callable[..., Capture], tmp_path: Path, kept: bool
) -> None:
    with LocalServer(_hf({OLD: b"a,1\n"}, OLD)) as server:
        table = {
            "name": "counts",
            "kind": "huggingface",
            "repo": "org/counts",
            "repo_type": "dataset",
            "files": ["data.csv"],
            "endpoint": server.url,
        }
        original = collect(table)
        assert original.data["commit"] == OLD
        later = {OLD: b"a,1\n", NEW: b"a,2\n"} if kept else {NEW: b"a,2\n"}
        server.fixtures = _hf(later, NEW)
        again = recollect_one(original, _context(tmp_path))
    check = classify(again, NoBlobs(), NoBlobs())
    if kept:
        assert check.outcome == "changed" and "still exists" in check.detail
    else:
        assert check.outcome == "gone"
        assert f"the attested commit {OLD[:12]} no longer exists" in check.detail


def test_a_force_pushed_branch_whose_commit_was_collected_is_gone(
    make_repo: Callable[[str], GitRepo], collect: Callable[..., Capture], tmp_path: Path
) -> None:
    repo = make_repo("repo")
    repo.write("a.txt", "one\n")
    first = repo.commit("one")
    original = collect({"name": "code", "kind": "git", "repo": str(repo.path), "ref": "main"})
    repo.git("checkout", "-q", "--orphan", "rewritten")
    repo.write("a.txt", "rewritten\n")
    repo.commit("history rewritten")
    repo.git("branch", "-q", "-M", "rewritten", "main")  # main now names the new history
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    check = classify(recollect_one(original, _context(tmp_path)), NoBlobs(), NoBlobs())
    assert check.outcome == "gone" and first[:12] in check.detail


def test_a_local_listing_and_a_local_wandb_run_replay_relative_to_the_base_folder(
    collect: Callable[..., Capture], tmp_path: Path
) -> None:
    """A path in a request is relative to prov.toml's folder; a recheck gives that folder."""
    project = tmp_path  # where the `collect` fixture's prov.toml is
    (project / "data").mkdir(parents=True)
    (project / "data" / "a.bin").write_bytes(b"a")
    run = project / "run" / "files"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("lr:\n  value: 0.001\n")
    listing = collect({"name": "store", "kind": "listing", "url": "data"})
    wandb = collect({"name": "run", "kind": "wandb", "path": "run"})
    for original in (listing, wandb):
        again = recollect_one(original, _context(tmp_path / "elsewhere", base=project))
        assert classify(again, NoBlobs(), NoBlobs()).outcome == "same", original.kind
    (project / "data" / "b.bin").write_bytes(b"b")
    (run / "config.yaml").write_text("lr:\n  value: 0.002\n")
    store = _context(tmp_path / "later", base=project)
    outcomes = {
        original.kind: classify(recollect_one(original, store), NoBlobs(), NoBlobs()).outcome
        for original in (listing, wandb)
    }
    assert outcomes == {"listing": "changed", "wandb": "changed"}


def test_a_redirect_asked_again_a_second_later_is_the_same(
    collect: Callable[..., Capture], tmp_path: Path
) -> None:
    """A hop's Date header moves with the clock; its status, URL and Location are compared."""
    import time

    routes = [Route("/old", status=302, redirect="/new"), Route("/new", body=b"x")]
    with LocalServer(Fixtures(routes=routes)) as server:
        original = collect({"name": "r", "kind": "http", "url": f"{server.url}/old"})
        time.sleep(1.1)  # the hop's Date header is now another second
        same = classify(recollect_one(original, _context(tmp_path)), NoBlobs(), NoBlobs())
        server.fixtures = Fixtures(
            routes=[Route("/old", status=302, redirect="/elsewhere"), Route("/elsewhere")]
        )
        moved = classify(recollect_one(original, _context(tmp_path)), NoBlobs(), NoBlobs())
    assert same.outcome == "same"
    assert moved.outcome == "changed" and moved.diff is not None
    assert "location" in json.dumps(moved.diff.model_dump())


def test_a_server_that_fails_now_is_failed_now_not_changed(
    collect: Callable[..., Capture], tmp_path: Path
) -> None:
    with LocalServer(Fixtures(routes=[Route("/doc", body=b"x")])) as server:
        original = collect({"name": "doc", "kind": "http", "url": f"{server.url}/doc"})
        server.fixtures = Fixtures(routes=[Route("/doc", fail_times=-1)])
        check = classify(recollect_one(original, _context(tmp_path)), NoBlobs(), NoBlobs())
    assert check.outcome == "failed-now" and "503" in check.detail
