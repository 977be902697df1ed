"""Atomic, durable file writes: temp file + fsync + link/rename + directory fsync.

A temp file is locked (``flock``) by its writer from creation until it is published or removed.
The kernel drops the lock when the writer dies, however it dies, so ``sweep_temps`` can tell a
killed writer's leftovers from a write in progress even when the dead writer's pid was reused.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import time
import uuid
from pathlib import Path

STALE_AFTER = 3600.0  # without locks: seconds without a write before the pid is not trusted
GRACE = 10.0  # an unlocked temp this young, of a live pid, may be between its open and its lock
_TEMP = re.compile(r"^\.tmp-([0-9]+)-[0-9a-f]+$")  # what ``temp_name`` makes, nothing else


def temp_name(directory: Path) -> Path:
    """A temp file name that says which process wrote it (fsck uses that to find stale ones)."""
    return directory / f".tmp-{os.getpid()}-{uuid.uuid4().hex}"


def create_temp(directory: Path, mode: int = 0o644) -> tuple[Path, int]:
    """Create a new temp file in ``directory``, locked for as long as the returned fd is open."""
    temp = temp_name(directory)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with contextlib.suppress(OSError):  # no flock on this filesystem: the pid and age decide
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return temp, fd


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
    temp, fd = create_temp(path.parent, mode)
    try:
        with os.fdopen(fd, "wb") as handle:  # closed (unlocked) only once published
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            return publish(temp, path, overwrite=overwrite)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise


def write_new(path: Path, data: bytes, what: str, *, hint: str = "choose another -o path") -> None:
    """``atomic_write`` for a file a command was asked to create: StoreError when it cannot be
    written, UsageError when it exists (never written over)."""
    from provenance.errors import StoreError, UsageError

    try:
        created = atomic_write(path, data)
    except OSError as e:
        raise StoreError(f"cannot write the {what} {path}", cause=str(e)) from e
    if not created:
        raise UsageError(f"{path} already exists", hint=hint)


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

    Returns the names removed and the names kept: a live writer's, or one that cannot be
    removed (a read-only store).
    """
    removed: list[str] = []
    kept: list[str] = []
    if not directory.is_dir():
        return removed, kept
    for temp in sorted(directory.glob(".tmp-*")):
        if not _TEMP.match(temp.name):
            continue
        if _in_flight(temp):
            kept.append(temp.name)
            continue
        try:
            temp.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            kept.append(temp.name)
            continue
        removed.append(temp.name)
    if removed:
        fsync_directory(directory)
    return removed, kept


def _in_flight(temp: Path) -> bool:
    """Is a live writer still working on ``temp``? Its lock says so; else its pid and age."""
    try:
        fd = os.open(temp, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot look: leave it alone
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            window = GRACE
        except BlockingIOError:
            return True
        except OSError:
            window = STALE_AFTER
        idle = time.time() - os.fstat(fd).st_mtime
    finally:
        os.close(fd)
    pid = _writer_pid(temp)
    return pid is not None and pid_alive(pid) and idle < window


def _writer_pid(temp: Path) -> int | None:
    match = _TEMP.match(temp.name)
    return int(match.group(1)) if match else None
