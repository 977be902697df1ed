"""Running external programs (git) with their stderr kept for diagnostics."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from provenance.errors import GitError, MissingDependencyError


def git(args: Sequence[str], *, cwd: Path | None = None, input: bytes | None = None) -> bytes:
    """Run ``git args`` and return stdout; raise GitError with git's stderr on failure."""
    command = ["git", *args]
    try:
        result = subprocess.run(
            command,
            cwd=cwd,
            input=input,
            capture_output=True,
            check=False,
            env=git_env(),
        )
    except FileNotFoundError as e:
        raise MissingDependencyError(
            "git is not installed", hint="install git (e.g. apt-get install git)"
        ) from e
    if result.returncode != 0:
        raise GitError(
            f"`git {' '.join(args[:3])}` failed (exit {result.returncode})",
            stderr=result.stderr.decode("utf-8", "replace"),
        )
    return result.stdout


def git_env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    # Never prompt for credentials: prov runs unattended, and a prompt would hang forever.
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_ASKPASS"] = "true"
    # Capturing must not write to the repository: `git status` otherwise refreshes the index,
    # which fails on a read-only checkout or a full disk (and races the user's own git).
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env.setdefault("LC_ALL", "C")
    return env
