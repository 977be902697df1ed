"""Ways to make a real filesystem full or read-only for a test, and to undo it.

We run as root in CI, so ``chmod`` stops nothing. What works depends on the machine: a tmpfs or
a read-only bind mount needs CAP_SYS_ADMIN; ``chattr +i`` needs an ext4-like filesystem and
CAP_LINUX_IMMUTABLE; running the command as ``nobody`` (``setpriv``) needs only setpriv. Each
helper says whether it could do its job, so a test can try the next one or skip, saying why.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path


def _run(*command: str) -> bool:
    if shutil.which(command[0]) is None:
        return False
    return subprocess.run(command, capture_output=True, check=False).returncode == 0


def _unmount(path: Path) -> None:
    if not _run("umount", str(path)):
        _run("umount", "-l", str(path))


@cache
def can_mount() -> bool:
    """Whether this process may mount (a tmpfs on a throwaway folder, to find out)."""
    import tempfile

    probe = Path(tempfile.mkdtemp(prefix="prov-mount-probe-"))
    try:
        if _run("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)):
            _unmount(probe)
            return True
        return False
    finally:
        probe.rmdir()


@contextlib.contextmanager
def tmpfs(path: Path, size: int) -> Iterator[None]:
    """A tmpfs of ``size`` bytes at ``path`` (callers check ``can_mount()`` first)."""
    path.mkdir(parents=True, exist_ok=True)
    if not _run("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)):
        raise RuntimeError(f"cannot mount a tmpfs at {path}")
    try:
        yield
    finally:
        _unmount(path)


METHODS = ("read-only bind mount", "chattr +i")


@contextlib.contextmanager
def read_only(path: Path, method: str) -> Iterator[bool]:
    """Make the tree at ``path`` unwritable for root by ``method``; yields whether it worked.

    A read-only bind mount needs mounting rights; ``chattr +i`` on every folder (no entry can be
    added or removed) needs an ext4-like filesystem. Without either, see ``nobody_prefix``.
    """
    if method == METHODS[0]:
        if not (can_mount() and _run("mount", "--bind", str(path), str(path))):
            yield False
            return
        try:
            yield _run("mount", "-o", "remount,bind,ro", str(path))
        finally:
            _unmount(path)
        return
    folders = [str(p) for p in [path, *path.rglob("*")] if p.is_dir() and not p.is_symlink()]
    if not _run("chattr", "+i", *folders):
        yield False
        return
    try:
        yield True
    finally:
        _run("chattr", "-i", *folders)


def nobody_prefix() -> list[str] | None:
    """A command prefix that runs as the unprivileged user nobody, or None."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return prefix if _run(*prefix, "true") else None
