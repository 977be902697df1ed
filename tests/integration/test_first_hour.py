"""What a new user met in a first hour with prov (issue 18), through the real command line.

Each test is one surprise of that trial: it failed before the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.conftest import GitRepo

Prov = Callable[..., Result]


@pytest.fixture
def repo(project: Path, prov: Prov) -> GitRepo:
    """A project folder that is a git checkout with one commit, and its prov.toml."""
    repo = GitRepo(project)
    repo.write("train.py", "STEPS = 390_251\n")
    repo.write("configs/mix.json", '{"cells": 200}\n')
    repo.commit()
    assert prov("init").exit_code == 0
    return repo


def set_paths(project: Path, paths: str) -> None:
    config = project / "prov.toml"
    config.write_text(config.read_text().replace('# paths = ["src/"]', f"paths = {paths}"))


def snapshot(prov: Prov, *args: str) -> Result:
    return prov("-q", "snapshot", "--no-sign", *args)


def test_a_path_that_names_nothing_fails_the_source_and_is_named(
    repo: GitRepo, project: Path, prov: Prov
) -> None:
    set_paths(project, '["train.py", "configs/mixx.json"]')
    result = snapshot(prov, "--label", "m1")
    assert result.exit_code == 4, result.output  # written, but the source did not capture it all
    assert "configs/mixx.json" in result.stdout and "FAILED" in result.stdout
    assert snapshot(prov, "--label", "m2", "--strict").exit_code == 1
    shown = prov("show", "m1")
    listed = shown.stdout.split("missing_paths:", 1)[1].splitlines()
    assert "configs/mixx.json" in " ".join(listed[:2])  # named, not only counted
    assert "error: missing-paths: not in commit" in shown.stdout


def test_paths_that_all_exist_are_a_clean_capture(repo: GitRepo, project: Path, prov: Prov) -> None:
    set_paths(project, '["train.py", "configs/"]')
    result = snapshot(prov, "--label", "m1", "--strict")
    assert result.exit_code == 0, result.output
    assert "missing_paths: [] (none)" in prov("show", "m1").stdout


def test_a_label_cannot_be_reused_with_another_output_file(
    repo: GitRepo, project: Path, prov: Prov
) -> None:
    assert snapshot(prov, "--label", "pw4").exit_code == 0
    again = snapshot(prov, "--label", "pw4", "-o", "other.intoto.jsonl")
    assert again.exit_code == 2, again.output
    assert "the label 'pw4' is already used" in again.stderr
    assert "collecting" not in prov("snapshot", "--label", "pw4", "--no-sign").stderr  # said first
    assert not (project / "other.intoto.jsonl").exists()
    assert prov("show", "pw4").exit_code == 0  # still names exactly one snapshot


def test_an_empty_label_is_refused(repo: GitRepo, project: Path, prov: Prov) -> None:
    result = snapshot(prov, "--label", "")
    assert result.exit_code == 2, result.output
    assert "the label is empty" in result.stderr
    assert list((project / "attestations").iterdir()) == []


def test_a_dirty_working_tree_is_a_warning(repo: GitRepo, project: Path, prov: Prov) -> None:
    repo.write("train.py", "STEPS = 400_000  # edited, not committed\n")
    result = snapshot(prov, "--label", "m1")
    assert result.exit_code == 0, result.output
    commit = repo.git("rev-parse", "HEAD")
    assert f"the working tree has uncommitted changes; the snapshot holds commit {commit[:12]}" in (
        result.stderr
    )
    assert "dirty: true" in prov("show", "m1").stdout


def test_a_commit_not_checked_out_is_not_called_clean(
    repo: GitRepo, project: Path, prov: Prov
) -> None:
    first = repo.git("rev-parse", "HEAD")
    repo.write("train.py", "STEPS = 1\n")
    repo.commit("second")
    repo.write("train.py", "STEPS = 2  # edited\n")  # dirty, but not the commit captured
    config = project / "prov.toml"
    config.write_text(config.read_text().replace('ref = "HEAD"', f'ref = "{first}"'))
    result = snapshot(prov, "--label", "m1")
    assert result.exit_code == 0, result.output
    assert "uncommitted changes" not in result.stderr
    assert "dirty: null" in prov("show", "m1").stdout
