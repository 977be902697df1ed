"""Atomic, durable file writes: temp file + fsync + link/rename + directory fsync."""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from pathlib import Path


def temp_name(directory: Path) -> Path:
    """A temp file name that says which process wrote it (fsck uses that to find stale ones)."""
    return directory / f".tmp-{os.getpid()}-{uuid.uuid4().hex}"


def fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(temp: Path, final: Path, *, overwrite: bool, sync_directory: bool = True) -> bool:
    """Move a fully written, fsynced temp file into place. Returns False if ``final`` existed.

    Without ``overwrite`` the publish is exclusive: a hard link fails when the name is taken,
    so two writers can never replace each other's file. ``sync_directory=False`` leaves the
    directory fsync to the caller (a store batch does it once per directory).
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
        if sync_directory:
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
