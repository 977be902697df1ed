"""Running external programs (git) with their stderr kept for diagnostics.

A captured repository is evidence, not code: its ``.git/config`` (and whatever it includes)
is written by whoever made the repository, and git runs commands named there (hooks,
``core.fsmonitor``, filter drivers, credential helpers, ``ext::`` transports). Every git prov
runs gets ``SAFE_CONFIG`` on its command line, where it outranks every config file, and the
commands that could run a filter driver get each configured driver emptied (``no_filters``).
A git still running when the work is cancelled (Ctrl-C, SIGTERM) is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from provenance._internal import cancel
from provenance.errors import GitError, MissingDependencyError

SAFE_CONFIG = (
    "core.fsmonitor=false",  # a command run on every index refresh (`git status`)
    "core.hooksPath=/dev/null",  # no hook of the repository (reference-transaction, ...)
    "core.untrackedCache=false",
    "credential.helper=",  # the empty value empties the list of helpers
    "protocol.ext.allow=never",  # ext:: URLs run a command
    "diff.external=",
    "core.pager=cat",
)


def safe_args(args: Sequence[str], extra: Sequence[str] = ()) -> list[str]:
    """``git`` with the hardening options, then ``args``."""
    command = ["git"]
    for setting in (*SAFE_CONFIG, *extra):
        command += ["-c", setting]
    return [*command, *args]


def git(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    input: bytes | None = None,
    extra_config: Sequence[str] = (),
) -> bytes:
    """Run ``git args`` and return stdout; raise GitError with git's stderr on failure."""
    cancel.check()
    try:
        process = subprocess.Popen(
            safe_args(args, extra_config),
            cwd=cwd,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=git_env(),
            process_group=0,  # with its helpers (git-remote-https), ended together below
        )
    except FileNotFoundError as e:
        raise MissingDependencyError(
            "git is not installed", hint="install git (e.g. apt-get install git)"
        ) from e
    # A git fetch from a server that stopped answering would outlive a Ctrl-C: end it then.
    with process, cancel.on_cancel(lambda: kill_group(process)):
        stdout, stderr = process.communicate(input)
    cancel.check()
    if process.returncode != 0:
        raise GitError(
            f"`git {' '.join(args[:3])}` failed (exit {process.returncode})",
            stderr=stderr.decode("utf-8", "replace"),
        )
    return stdout


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill a child started with ``process_group=0`` and everything it started."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def no_filters(cwd: Path) -> list[str]:
    """Settings that empty every filter driver the repository's config defines.

    Attributes (``.gitattributes``) name drivers, config defines them; git has no switch that
    turns filters off for ``git status``, but an empty ``clean`` / ``smudge`` / ``process``
    is no filter at all. Reading config runs nothing, and ``--get-regexp`` follows includes.
    """
    try:
        out = git(["config", "--null", "--name-only", "--get-regexp", r"^filter\."], cwd=cwd)
    except GitError:  # exit 1: no filter is configured
        return []
    drivers = set()
    for name in out.decode("utf-8", "surrogateescape").split("\0"):
        driver, _, _ = name.removeprefix("filter.").rpartition(".")
        if name.startswith("filter.") and driver:
            drivers.add(driver)
    settings = []
    for driver in sorted(drivers):
        settings += [f"filter.{driver}.{key}=" for key in ("clean", "smudge", "process")]
        settings.append(f"filter.{driver}.required=false")
    return settings


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    # Never prompt for credentials: prov runs unattended, and a prompt would hang forever.
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_ASKPASS"] = "true"
    # Capturing must not write to the repository: `git status` otherwise refreshes the index,
    # which fails on a read-only checkout or a full disk (and races the user's own git).
    env["GIT_OPTIONAL_LOCKS"] = "0"
    # Only git's own defaults and the user's config: no system attributes, no external diff,
    # no pager or editor taken from the environment either.
    env["GIT_ATTR_NOSYSTEM"] = "1"
    env["GIT_PAGER"] = "cat"
    env["GIT_EDITOR"] = "true"
    env.pop("GIT_EXTERNAL_DIFF", None)
    env.setdefault("LC_ALL", "C")
    return env
