"""A large capture to crash, race and starve: a real git repository of a few thousand files.

``scratch_root`` prefers a RAM-backed folder. A SIGKILL ends a process, not the machine: the page
cache survives it, so what a killed writer leaves is the same on tmpfs as on a disk, and tmpfs
makes each of the 50 trials take a second instead of twenty (every object is fsynced).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import GitRepo
from tests.reliability.evidence import run_cli

FILES = 3000
BIG_FILES = 4  # of 1 MiB each: some MB of blobs in all


def scratch_root() -> Path:
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK) and shutil.disk_usage(shm).free > 1 << 30:
        return Path(tempfile.mkdtemp(prefix="prov-reliability-", dir=shm))
    return Path(tempfile.mkdtemp(prefix="prov-reliability-"))


def make_big_repo(path: Path, files: int = FILES, big: int = BIG_FILES) -> GitRepo:
    """Incompressible, all-distinct contents, so every file is its own object in the store."""
    repo = GitRepo(path)
    rng = random.Random(8)
    for index in range(files):
        repo.write(f"d{index % 40:02d}/f{index:04d}.txt", rng.randbytes(rng.randint(200, 3000)))
    for index in range(big):
        repo.write(f"big{index}.bin", rng.randbytes(1 << 20))
    repo.commit("a large commit")
    return repo


@dataclass(frozen=True)
class Project:
    """A prov project capturing ``repo`` into its own store."""

    root: Path
    repo: Path
    key: Path

    @property
    def config(self) -> Path:
        return self.root / "prov.toml"

    @property
    def store(self) -> Path:
        return self.root / ".prov"

    @property
    def attestations(self) -> Path:
        return self.root / "attestations"

    def snapshot_args(self, label: str) -> list[str]:
        return ["snapshot", "-c", str(self.config), "--label", label, "--key", str(self.key)]

    def command(self, *args: str) -> list[str]:
        """``prov args`` as a separate process (for killing it, or racing several)."""
        return [sys.executable, "-m", "provenance", *args]

    def prov(self, *args: str) -> tuple[int, str, str]:
        code, out, err, unexpected = run_cli(*args)
        assert unexpected is None, unexpected
        return code, out, err


def make_project(root: Path, repo: Path, keys: Path, sign_with: str = "alice") -> Project:
    root.mkdir(parents=True)
    (root / "prov.toml").write_text(
        f'[[sources]]\nname = "code"\nkind = "git"\nrepo = "{repo}"\nref = "HEAD"\n'
    )
    return Project(root, repo, keys / f"{sign_with}.key")


def make_keys(folder: Path) -> Path:
    code, out, err, unexpected = run_cli("keygen", "alice", "--dir", str(folder))
    assert code == 0 and unexpected is None, (out, err, unexpected)
    return folder


def prov_process(project: Project, *args: str, **popen: object) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROV_")}
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        project.command(*args),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: a kill reaches its git children too
        **popen,
    )


def temp_files(project: Project) -> list[Path]:
    """Temp files in every folder prov writes to (none may survive ``prov fsck``)."""
    folders = (project.store / "tmp", project.store / "snapshots", project.attestations)
    return sorted(path for folder in folders if folder.is_dir() for path in folder.glob(".tmp-*"))
