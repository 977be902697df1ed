"""Long work shows what it is doing, on a terminal; pipes, logs and `-q` get no status line.

Before: a source that took 30 s printed nothing until it ended, and `make install` ran pip with
`--quiet` for over a minute. The server is the real one on 127.0.0.1, trickling a body one byte
every 0.1 s; `prov` runs on a pseudo-terminal where a terminal matters.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.server import LocalServer
from tests.conftest import ROOT
from tests.terminal import Terminal

STATUS = "\x1b[K"  # how the status line redraws itself


@pytest.fixture
def slow(tmp_path: Path) -> Iterator[Path]:
    """A project whose one source takes about four seconds, its body arriving byte by byte."""
    with LocalServer(Fixtures(routes=[Route("/slow", size=40, trickle=0.1)])) as server:
        project = tmp_path / "project"
        project.mkdir()
        (project / "prov.toml").write_text(
            f'[[sources]]\nname = "slow"\nkind = "http"\nurl = "{server.url}/slow"\n'
        )
        yield project


def run_on_terminal(project: Path, *args: str) -> str:
    terminal = Terminal([*args, "snapshot", "--label", "m1", "--no-sign"], project)
    try:
        code = terminal.wait(timeout=60)
    finally:
        terminal.kill()
    assert code == 0, terminal.text
    return terminal.text


def test_a_terminal_sees_the_source_wait_with_its_bytes(slow: Path) -> None:
    shown = run_on_terminal(slow)
    statuses = re.findall(r"still running: slow \[http\] (\d+)s(?: (\d+) B)?", shown)
    assert statuses, shown
    seconds = [int(s) for s, _ in statuses]
    assert min(seconds) >= 2 and max(seconds) >= 3  # only after two seconds, then counting
    assert any(int(b) > 0 for _, b in statuses if b), statuses  # bytes as they arrive
    assert "[1/1] slow [http]: ok" in shown
    assert shown.rstrip().endswith("ok")  # the status line is gone at the end


def test_quiet_shows_only_the_result(slow: Path) -> None:
    shown = run_on_terminal(slow, "-q")
    assert "still running" not in shown and STATUS not in shown
    assert "collecting" not in shown
    assert "snapshot m1" in shown


def test_no_status_line_when_stderr_is_not_a_terminal(slow: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "provenance", "snapshot", "--label", "m1", "--no-sign"],
        cwd=slow,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert STATUS not in result.stderr and "still running" not in result.stderr
    assert "[1/1] slow [http]: ok" in result.stderr  # whole lines, as a log wants


def test_install_says_what_it_does_from_the_first_line(tmp_path: Path) -> None:
    """`make demo` on a fresh clone starts with the install: it must not be a silent minute."""
    # Under `make test` the suite is a sub-make's child: MAKEFLAGS and MAKELEVEL would make this
    # make print "Entering directory" first, which a person running `make demo` never sees.
    plain = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    planned = subprocess.run(
        ["make", "-n", "install", f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=plain,
    ).stdout.splitlines()
    assert planned[0].startswith("echo ") and "installing prov" in planned[0], planned
    install = [line for line in planned if "pip install" in line and "-e " in line]
    assert install and all("--quiet" not in line for line in install), install
    demo = subprocess.run(
        ["make", "-n", "demo", f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=plain,
    ).stdout.splitlines()
    assert demo[0] == planned[0]
