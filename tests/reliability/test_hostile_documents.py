"""Hostile captured files: a YAML alias bomb, hostile Python, a claim that yields a complex number.

A repository holding such files is snapshotted, then ``prov check`` and ``prov diff`` run over it
as real processes (peak RSS from the kernel's VmHWM, see peak.py, under RLIMIT_AS). Each ends in
bounded time and memory, every claim gets its own result (a refused document or a failed
evaluation is that claim's error, the others still hold) and nothing in the Python files runs.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import GitRepo
from tests.reliability import figures
from tests.reliability.evidence import run_cli

ROOT = Path(__file__).resolve().parents[2]
CATEGORY = "hostile documents"
ADDRESS_SPACE = 2 << 30
RSS_BOUND = 256 << 20
TIME_BOUND = 60.0
MARKER = "constants-ran"


def alias_bomb(levels: int = 9) -> str:
    """The "billion laughs": 9 aliases per level, 9 ** levels strings once expanded (~340 B)."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        name, previous = chr(97 + level), chr(96 + level)
        lines.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]")
    return "\n".join(lines) + "\n"


def doubling_bomb(levels: int = 30) -> str:
    """Two aliases per level: under the alias budget, 2 ** 30 nodes once expanded."""
    lines = ["l0: &l0 [x, x]"]
    lines += [f"l{n}: &l{n} [*l{n - 1}, *l{n - 1}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


HOSTILE_PY = f"""
import os
RAN = __import__("os").system("touch {MARKER}")
OPENED = open("{MARKER}", "w")
HUGE = 10 ** 10 ** 100
TOWER = 2 ** 4000
TOWER = TOWER ** TOWER
DEEP = {"(" * 150}1{")" * 150}
STRING = "x" * 10 ** 9
OK = 6 * 7
"""

CLAIMS = """
[[claims]]
name = "the bomb"
claimed = 1
derived = "len(captures['repo'].documents['bomb.yaml'])"

[[claims]]
name = "the doubling bomb"
claimed = 1
derived = "len(captures['repo'].documents['doubling.yaml'])"

[[claims]]
name = "a call in the module"
claimed = 0
derived = "captures['repo'].constants['hostile.py'].RAN"

[[claims]]
name = "a huge exponent"
claimed = 1
derived = "captures['repo'].constants['hostile.py'].HUGE"

[[claims]]
name = "a long chain"
claimed = 1
derived = "captures['repo'].constants['chain.py'].CHAIN"

[[claims]]
name = "a complex number"
claimed = 1
derived = "(-1) ** 0.5"

[[claims]]
name = "the sane constant"
claimed = 42
derived = "captures['repo'].constants['hostile.py'].OK"
"""


@dataclass
class Done:
    code: int
    seconds: float
    peak: int
    stdout: str
    stderr: str


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_bounded(folder: Path, *args: str) -> Done:
    peak = folder / "peak-rss"
    peak.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROV_")}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "tests.reliability.peak", str(peak), *args],
        cwd=folder,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=TIME_BOUND * 2,
        preexec_fn=_limits,
    )
    seconds = time.monotonic() - started
    return Done(done.returncode, seconds, int(peak.read_text() or 0), done.stdout, done.stderr)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-documents")
    repo = GitRepo(root / "repo")
    repo.write("bomb.yaml", alias_bomb())
    repo.write("doubling.yaml", doubling_bomb())
    repo.write("hostile.py", HOSTILE_PY)
    repo.write("chain.py", "CHAIN = " + " + ".join(["1"] * 20_000) + "\n")
    repo.write("ok.json", json.dumps({"steps": 390_251}))
    repo.commit("hostile files")
    folder = root / "project"
    folder.mkdir()
    (folder / "prov.toml").write_text(
        f'[store]\npath = ".prov"\n\n[[sources]]\nname = "repo"\nkind = "git"\n'
        f'repo = "{repo.path}"\nref = "main"\n'
    )
    (folder / "claims.toml").write_text(CLAIMS)
    snapshot = ("snapshot", "-c", str(folder / "prov.toml"), "--label", "m1", "--no-sign")
    code, out, err, unexpected = run_cli(*snapshot, "--store", str(folder / ".prov"))
    assert code == 0 and unexpected is None, out + err
    repo.write("bomb.yaml", alias_bomb(8))
    repo.write("hostile.py", HOSTILE_PY.replace("OK = 6 * 7", "OK = 6 * 8"))
    repo.commit("hostile files, again")
    code, out, err, unexpected = run_cli(
        "snapshot", "-c", str(folder / "prov.toml"), "--label", "m2", "--no-sign",
        "--store", str(folder / ".prov"),
    )  # fmt: skip
    assert code == 0 and unexpected is None, out + err
    return folder


def test_check_gives_every_claim_its_result_in_bounded_time_and_memory(project: Path) -> None:
    done = run_bounded(project, "check", "--claims", "claims.toml", "m1", "--format", "json")
    figures.count(CATEGORY, "cases run")
    assert done.code == 2, done.stdout + done.stderr  # some claims could not be evaluated
    assert "Traceback" not in done.stderr
    results = {r["name"]: r for r in json.loads(done.stdout)["results"]}
    assert "more than 64 YAML aliases" in results["the bomb"]["error"]
    assert "expands to more than" in results["the doubling bomb"]["error"]
    assert "not a constant: a call" in results["a call in the module"]["error"]
    assert "an exponent over 4096" in results["a huge exponent"]["error"]
    assert "is not readable Python: nested too deeply" in results["a long chain"]["error"]
    assert "complex number" in results["a complex number"]["error"]
    assert results["the sane constant"]["status"] == "pass"
    assert not (project / MARKER).exists()
    assert done.seconds < TIME_BOUND and done.peak < RSS_BOUND, (done.seconds, done.peak)
    figures.count(CATEGORY, "cases bounded")
    figures.peak(CATEGORY, "peak RSS MiB", done.peak >> 20)


def test_diff_of_the_hostile_files_is_bounded(project: Path) -> None:
    done = run_bounded(project, "diff", "m1", "m2")
    figures.count(CATEGORY, "cases run")
    assert done.code == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "bomb.yaml: not parsed as yaml (more than 64 YAML aliases" in done.stdout
    assert "OK: 42 -> 48 (+6, +14.29%)" in done.stdout
    assert not (project / MARKER).exists()
    assert done.seconds < TIME_BOUND and done.peak < RSS_BOUND, (done.seconds, done.peak)
    figures.count(CATEGORY, "cases bounded")
    figures.peak(CATEGORY, "peak RSS MiB", done.peak >> 20)


def test_a_wandb_config_yaml_bomb_fails_its_source_in_bounded_time(tmp_path: Path) -> None:
    """The same bomb as a local W&B run's config.yaml: the source fails with the reason (the
    collector error's exit code), in bounded time and memory."""
    run = tmp_path / "wandb" / "run-20260820_020458-dee637" / "files"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(doubling_bomb())
    (run / "wandb-summary.json").write_text('{"_step": 13527}')
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "prov.toml").write_text(
        f'[store]\npath = ".prov"\n\n[[sources]]\nname = "run"\nkind = "wandb"\n'
        f'path = "{run.parent}"\n'
    )
    done = run_bounded(folder, "snapshot", "--label", "bomb", "--no-sign")
    figures.count(CATEGORY, "cases run")
    assert done.code == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "cause: the YAML document expands to more than 500,000 nodes" in done.stderr
    assert done.seconds < TIME_BOUND and done.peak < RSS_BOUND, (done.seconds, done.peak)
    figures.count(CATEGORY, "cases bounded")
