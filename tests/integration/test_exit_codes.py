"""The README's exit-code table, walked: every row's examples exit with that row's code.

The table is read from README.md; a code documented without an example here, or an example of
a code the table does not list, fails the walk, so the table and the commands cannot drift.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from provenance.cli import cli
from tests.conftest import ROOT, GitRepo

Setup = Callable[[Path], None]


def readme_codes() -> dict[int, str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {
        int(code): meaning for code, meaning in re.findall(r"^\| (\d+) \| (.+) \|$", section, re.M)
    }


def _nothing(project: Path) -> None:
    pass


def _edit(name: str, old: str, new: str) -> Setup:
    def setup(project: Path) -> None:
        path = project / name
        path.write_text(path.read_text().replace(old, new))

    return setup


def _write(name: str, text: str) -> Setup:
    def setup(project: Path) -> None:
        (project / name).write_text(text)

    return setup


def _tamper(project: Path) -> None:
    path = project / "attestations" / "m1.intoto.jsonl"
    path.write_text(path.read_text().replace('"sig":"', '"sig":"AAAA', 1))


def _corrupt_store(project: Path) -> None:
    for path in (project / ".prov" / "objects").rglob("*"):
        if path.is_file():
            path.chmod(0o644)
            path.write_bytes(b"not what the address says")


HOLDS = '[[claims]]\nname = "size"\nclaimed = 16\nderived = "captures[\'code\'].files[0].size"\n'
FAILS = HOLDS.replace("claimed = 16", "claimed = 17")
MISSING_PATH = _edit("prov.toml", '# paths = ["src/"]', 'paths = ["train.py", "nope.py"]')

# code -> (what it shows, setup, arguments)
EXAMPLES: dict[int, list[tuple[str, Setup, list[str]]]] = {
    0: [
        ("every source captured", _nothing, ["snapshot", "--label", "m3", "--no-sign"]),
        ("verified", _nothing, ["verify", "attestations/m1.intoto.jsonl", "--key", "keys/a.pub"]),
        ("no differences", _nothing, ["diff", "m1", "m1"]),
        ("all claims hold", _write("holds.toml", HOLDS), ["check", "--claims", "holds.toml", "m1"]),
    ],
    1: [
        (
            "verification failed",
            _tamper,
            ["verify", "attestations/m1.intoto.jsonl", "--key", "keys/a.pub"],
        ),
        ("differences found", _nothing, ["diff", "m1", "m2"]),
        ("a claim failed", _write("fails.toml", FAILS), ["check", "--claims", "fails.toml", "m1"]),
        ("--strict partial", MISSING_PATH, ["snapshot", "--label", "m3", "--no-sign", "--strict"]),
    ],
    2: [
        ("bad arguments", _nothing, ["snapshot", "--no-such-option"]),
        ("bad prov.toml", _write("prov.toml", "[[sources]\n"), ["snapshot", "--no-sign"]),
        (
            "a bad claims file",
            _write("bad.toml", '[[claims]]\nname = "x"\nclaimed = 1\nderived = "__import__(1)"\n'),
            ["check", "--claims", "bad.toml", "m1"],
        ),
        (
            "a label already used",
            _nothing,
            ["snapshot", "--label", "m1", "--no-sign", "-o", "x.jsonl"],
        ),
        ("an empty label", _nothing, ["snapshot", "--label", "", "--no-sign"]),
        ("a snapshot the store does not hold", _nothing, ["show", "m9"]),
    ],
    3: [
        ("a missing claims file", _nothing, ["check", "--claims", "nope.toml", "m1"]),
        ("a missing pack", _nothing, ["verify", "--pack", "nope.evidence.tar"]),
        ("a missing attestation file", _nothing, ["show", "nope.intoto.jsonl"]),
        (
            "a missing attestation to verify",
            _nothing,
            ["verify", "nope.intoto.jsonl", "--key", "keys/a.pub"],
        ),
        ("an unreadable key", _nothing, ["snapshot", "--label", "m3", "--key", "keys/nobody.key"]),
        (
            "git failure",
            _edit("prov.toml", 'ref = "HEAD"', 'ref = "nope"'),
            ["snapshot", "--no-sign"],
        ),
        ("a corrupt store", _corrupt_store, ["show", "m1"]),
    ],
    4: [("some sources failed", MISSING_PATH, ["snapshot", "--label", "m3", "--no-sign"])],
    130: [],  # run in a subprocess below: a signal ends a real process
}


def make_project(folder: Path) -> Path:
    runner = CliRunner()
    repo = GitRepo(folder)
    repo.write("train.py", "STEPS = 390_251\n")
    repo.commit()
    old = Path.cwd()
    os.chdir(folder)
    try:
        for args in (
            ["init"],
            ["keygen", "a"],
            ["snapshot", "--label", "m1", "--key", "keys/a.key"],
        ):
            assert runner.invoke(cli, args).exit_code == 0, args
        repo.write("train.py", "STEPS = 390_139\n")
        repo.commit()
        assert runner.invoke(cli, ["snapshot", "--label", "m2", "--no-sign"]).exit_code == 0
    finally:
        os.chdir(old)
    return folder


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("exit-codes") / "project")


def test_every_documented_code_has_examples() -> None:
    assert set(readme_codes()) == set(EXAMPLES)


CASES = [(code, *example) for code, examples in EXAMPLES.items() for example in examples]


@pytest.mark.parametrize(("code", "what", "setup", "args"), CASES, ids=[c[1] for c in CASES])
def test_the_table_holds(
    code: int,
    what: str,
    setup: Setup,
    args: list[str],
    template: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = tmp_path / "project"
    subprocess.run(["cp", "-a", str(template), str(project)], check=True)
    for name in list(os.environ):
        if name.startswith("PROV_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(project)
    setup(project)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == code, f"{what}: {result.output}{result.stderr}"
    assert "Traceback" not in result.stderr


@pytest.fixture
def silent() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/x"


def test_interrupted_is_130(template: Path, tmp_path: Path, silent: str) -> None:
    assert 130 in readme_codes()
    project = tmp_path / "project"
    subprocess.run(["cp", "-a", str(template), str(project)], check=True)
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "hung"\nkind = "http"\nurl = "{silent}"\n'
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "provenance", "snapshot", "--no-sign", "--label", "m3"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(2.0)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
