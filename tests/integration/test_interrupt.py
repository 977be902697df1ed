"""Ctrl-C and SIGTERM end a long command within about a second, write nothing, and exit 130.

The source is a real server on 127.0.0.1 that accepts the request and never answers (before
the fix: 28.9 s, then "Aborted!" and exit 1). `prov` runs on a pseudo-terminal, where Ctrl-C is
the terminal's SIGINT, as for a person; the git source is a real repository.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.server import LocalServer
from tests.conftest import GitRepo
from tests.terminal import Terminal

GRACE = 1.5
"""Seconds from the signal to the exit: "about a second", with room for a loaded machine."""


@pytest.fixture
def hung(tmp_path: Path) -> Iterator[Path]:
    """A project with a git source and a source whose server never answers."""
    with LocalServer(Fixtures(routes=[Route("/hang", delay=600.0)])) as server:
        project = tmp_path / "project"
        repo = GitRepo(project / "code")
        repo.write("train.py", "STEPS = 390_251\n")
        repo.commit()
        (project / "prov.toml").write_text(
            "[defaults]\ntimeout = 120\n\n"
            '[[sources]]\nname = "code"\nkind = "git"\nrepo = "code"\n\n'
            f'[[sources]]\nname = "hung"\nkind = "http"\nurl = "{server.url}/hang"\n'
        )
        yield project


def left_behind(project: Path) -> list[str]:
    """What a snapshot publishes: attestation files and store index entries."""
    found = [*project.glob("attestations/*"), *project.glob(".prov/snapshots/*")]
    return sorted(str(p.relative_to(project)) for p in found)


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_an_interrupt_ends_a_blocked_snapshot_at_once(hung: Path, how: str) -> None:
    terminal = Terminal(["snapshot", "--label", "m1", "--no-sign"], hung)
    try:
        terminal.expect("code [git]: ok")
        terminal.expect("hung [http]")  # the status line: it waits for the server
        started = time.monotonic()
        terminal.ctrl_c() if how == "ctrl-c" else terminal.signal(signal.SIGTERM)
        code = terminal.wait()
        elapsed = time.monotonic() - started
    finally:
        terminal.kill()
    assert code == 130, terminal.text
    assert elapsed < GRACE, f"took {elapsed:.1f}s to stop"
    assert "interrupted: nothing was half-written" in terminal.text
    assert "`prov gc` frees what it had stored" in terminal.text
    assert "Aborted!" not in terminal.text and "Traceback" not in terminal.text
    assert left_behind(hung) == []


def test_an_interrupt_ends_any_long_command(tmp_path: Path) -> None:
    """A command that waits in its main thread (the GitHub API of `release-previous`)."""
    with socket.create_server(("127.0.0.1", 0)) as silent:  # connects, never answers
        env = {
            **os.environ,
            "GITHUB_API_URL": f"http://127.0.0.1:{silent.getsockname()[1]}",
            "GITHUB_TOKEN": "test-token",
        }
        args = ["release-previous", "--tag", "v2", "--repository", "o/r", "-o", "out"]
        terminal = Terminal(args, tmp_path, env)
        try:
            time.sleep(1.0)  # it is waiting for the answer by now
            started = time.monotonic()
            terminal.signal(signal.SIGTERM)
            code = terminal.wait()
            elapsed = time.monotonic() - started
        finally:
            terminal.kill()
    assert code == 130, terminal.text
    assert elapsed < GRACE
    assert "interrupted" in terminal.text and "Traceback" not in terminal.text
