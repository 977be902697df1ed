"""An encrypted key is unlocked by asking at the terminal, as `keygen --help` promises.

Before: `prov snapshot --key encrypted.key` on a terminal failed with "is encrypted" and never
asked. `prov` runs on a pseudo-terminal here, so the prompt reads the terminal as it would for
a person; without a terminal nothing is asked (CI must set PROV_KEY_PASSWORD).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.terminal import Terminal

PASSPHRASE = "correct horse battery"
PROV = [sys.executable, "-m", "provenance"]


@pytest.fixture
def ready(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "project"
    repo = GitRepo(project)
    repo.write("train.py", "STEPS = 390_251\n")
    repo.commit()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROV_")}
    for args in (["init"], ["keygen", "secret", "--encrypt"]):
        subprocess.run(
            [*PROV, *args],
            cwd=project,
            env={**env, "PROV_KEY_PASSWORD": PASSPHRASE},
            check=True,
            capture_output=True,
        )
    return project, env


def test_snapshot_asks_for_the_passphrase_on_a_terminal(
    ready: tuple[Path, dict[str, str]],
) -> None:
    project, env = ready
    terminal = Terminal(["snapshot", "--label", "m1", "--key", "keys/secret.key"], project, env)
    try:
        terminal.expect("passphrase for keys/secret.key:")
        terminal.type(PASSPHRASE + "\n")
        code = terminal.wait(timeout=60)
    finally:
        terminal.kill()
    assert code == 0, terminal.text
    assert PASSPHRASE not in terminal.text  # not echoed
    verified = subprocess.run(
        [*PROV, "verify", "attestations/m1.intoto.jsonl", "--key", "keys/secret.pub"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stderr


def test_a_wrong_passphrase_stops_before_collecting(ready: tuple[Path, dict[str, str]]) -> None:
    project, env = ready
    terminal = Terminal(["snapshot", "--label", "m1", "--key", "keys/secret.key"], project, env)
    try:
        terminal.expect("passphrase for keys/secret.key:")
        terminal.type("not it\n")
        code = terminal.wait(timeout=60)
    finally:
        terminal.kill()
    assert code == 3, terminal.text
    assert "wrong passphrase" in terminal.text
    assert "collecting" not in terminal.text
    assert list((project / "attestations").iterdir()) == []


def test_without_a_terminal_nothing_is_asked(ready: tuple[Path, dict[str, str]]) -> None:
    project, env = ready
    result = subprocess.run(
        [*PROV, "snapshot", "--label", "m1", "--key", "keys/secret.key"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3
    assert "is encrypted" in result.stderr and "PROV_KEY_PASSWORD" in result.stderr
    assert "passphrase for" not in result.stderr
