"""Atomic, durable file writes: temp file + fsync + link/rename + directory fsync."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import time
import uuid
from pathlib import Path

STALE_AFTER = 3600.0  # seconds without a write: the pid may have been reused by now
_TEMP = re.compile(r"^\.tmp-([0-9]+)-[0-9a-f]+$")  # what ``temp_name`` makes, nothing else


def temp_name(directory: Path) -> Path:
    """A temp file name that says which process wrote it (fsck uses that to find stale ones)."""
    return directory / f".tmp-{os.getpid()}-{uuid.uuid4().hex}"


def fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(temp: Path, final: Path, *, overwrite: bool) -> bool:
    """Move a fully written, fsynced temp file into place. Returns False if ``final`` existed.

    Without ``overwrite`` the publish is exclusive: a hard link fails when the name is taken,
    so two writers can never replace each other's file.
    """
    try:
        if overwrite:
            os.replace(temp, final)
            return True
        try:
            os.link(temp, final)
        except FileExistsError:
            return False
        except OSError as e:  # filesystems without hard links
            if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            if final.exists():
                return False
            os.replace(temp, final)
            return True
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        fsync_directory(final.parent)


def atomic_write(path: Path, data: bytes, *, overwrite: bool = False, mode: int = 0o644) -> bool:
    """Write ``data`` to ``path`` so that readers see all of it or nothing.

    Returns False (and leaves the existing file alone) when ``path`` exists and not ``overwrite``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_name(path.parent)
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    return publish(temp, path, overwrite=overwrite)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_temps(directory: Path) -> tuple[list[str], list[str]]:
    """Remove the ``.tmp-*`` files of writers that died (a kill, a crash, a full disk).

    Returns the names removed and the names left alone because their writer still runs.
    """
    removed: list[str] = []
    in_flight: list[str] = []
    if not directory.is_dir():
        return removed, in_flight
    for temp in sorted(directory.glob(".tmp-*")):
        if not _TEMP.match(temp.name):
            continue
        if _in_flight(temp):
            in_flight.append(temp.name)
            continue
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        removed.append(temp.name)
    if removed:
        fsync_directory(directory)
    return removed, in_flight


def _in_flight(temp: Path) -> bool:
    """A temp file whose writer still runs (and wrote to it recently) is a write in progress."""
    pid = _writer_pid(temp)
    try:
        idle = time.time() - temp.stat().st_mtime
    except FileNotFoundError:
        return False
    return pid is not None and pid_alive(pid) and idle < STALE_AFTER


def _writer_pid(temp: Path) -> int | None:
    match = _TEMP.match(temp.name)
    return int(match.group(1)) if match else None
