"""Capturing a repository never runs a command its config names (issue 13, class 5).

A real ``prov snapshot`` captures a real repository whose config plants every kind of command
git can be made to run: hooks (in ``.git/hooks`` and under ``core.hooksPath``),
``core.fsmonitor``, filter drivers (``clean``, ``smudge``, ``process``) on stat-dirty files,
``textconv`` and an external diff, a credential helper, ``core.sshCommand`` / pager / editor /
askpass, and an ``includeIf`` that includes a file planting more. The project folder prov runs
in is itself such a repository, with an ``ext::`` transport swapped in for the captured URL.
Each planted command would create a marker file; none may exist afterwards.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.conftest import GitRepo
from tests.reliability import figures
from tests.reliability.evidence import run_cli

HOOKS = (
    "pre-commit", "post-checkout", "post-index-change", "reference-transaction",
    "post-merge", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman",
)  # fmt: skip


def _script(folder: Path, markers: Path, name: str) -> str:
    """An executable that leaves ``markers/name`` behind (and passes data through)."""
    path = folder / f"plant-{name}"
    path.write_text(f"#!/bin/sh\ntouch '{markers / name}'\ncat\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _plant(repo: GitRepo, scripts: Path, markers: Path) -> list[str]:
    """Plant every command; returns their names."""
    planted: list[str] = []

    def command(name: str) -> str:
        planted.append(name)
        return _script(scripts, markers, name)

    hooks = repo.path / ".git" / "hooks"
    for hook in HOOKS:
        (hooks / hook).write_text(f"#!/bin/sh\ntouch '{markers / ('hook-' + hook)}'\n")
        (hooks / hook).chmod(0o755)
        planted.append(f"hook-{hook}")
    settings = {
        "core.fsmonitor": command("fsmonitor"),
        "filter.evil.clean": command("filter-clean"),
        "filter.evil.smudge": command("filter-smudge"),
        "filter.evil.process": command("filter-process"),
        "filter.evil.required": "true",
        "diff.evil.textconv": command("textconv"),
        "diff.external": command("external-diff"),
        "credential.helper": command("credential-helper"),
        "core.sshCommand": command("ssh-command"),
        "core.pager": command("pager"),
        "core.editor": command("editor"),
        "core.askPass": command("askpass"),
        "remote.origin.url": "http://127.0.0.1:9/unreachable.git",
    }
    for key, value in settings.items():
        repo.git("config", key, value)
    included = scripts / "included.config"
    included.write_text(
        f"[core]\n\tfsmonitor = {command('include-fsmonitor')}\n"
        f'[filter "inc"]\n\tclean = {command("include-filter-clean")}\n'
    )
    repo.git("config", f"includeIf.gitdir:{repo.path}/.git.path", str(included))
    return planted


def test_no_command_of_the_captured_repository_runs(tmp_path: Path) -> None:
    markers, scripts = tmp_path / "markers", tmp_path / "scripts"
    markers.mkdir()
    scripts.mkdir()
    repo = GitRepo(tmp_path / "captured")
    repo.write(".gitattributes", "* filter=evil diff=evil\n*.inc filter=inc\n")
    repo.write("train.py", "steps = 1\n")
    repo.write("data.inc", "x\n")
    repo.commit("planted")
    planted = _plant(repo, scripts, markers)
    # Stat-dirty files: git must compare contents, which is where a clean filter would run.
    for name in ("train.py", "data.inc"):
        os.utime(repo.path / name, (1, 1))

    project = GitRepo(tmp_path / "project")  # prov runs inside a hostile repository too
    project.git("config", "protocol.ext.allow", "always")
    project.git(
        "config",
        f"url.ext::sh -c touch% {markers / 'ext-transport'}% #.insteadOf",
        f"file://{repo.path}",
    )
    planted.append("ext-transport")
    config = project.path / "prov.toml"
    config.write_text(
        '[[sources]]\nname = "local"\nkind = "git"\n'
        f'repo = "{repo.path}"\n'
        '[[sources]]\nname = "remote"\nkind = "git"\n'
        f'repo = "file://{repo.path}"\n'
    )
    cwd = Path.cwd()
    os.chdir(project.path)
    try:
        code, out, err, unexpected = run_cli(
            "snapshot", "-c", str(config), "--label", "m1", "--no-sign"
        )
    finally:
        os.chdir(cwd)
    ran = sorted(p.name for p in markers.iterdir())
    figures.count("hostile:git", "commands planted", len(planted))
    figures.count("hostile:git", "wrongly run", len(ran))
    assert ran == [], f"the captured repository ran: {ran}"
    assert unexpected is None and code == 0, (code, out, err)
