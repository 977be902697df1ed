"""Resource faults: a full disk and an unwritable store give a clear error, exit 3, and a
consistent store; once the fault is gone, the same snapshot succeeds.

Full disk: a small tmpfs filled to leave less and less room (when mounting is allowed), and
RLIMIT_FSIZE in the child process (always). Unwritable: a read-only bind mount or ``chattr +i``
(see mounts.py), and the command run as ``nobody`` against root's store.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from provenance.store.objects import Store
from tests.conftest import GitRepo
from tests.reliability import figures, mounts
from tests.reliability.workload import Project, make_project, temp_files


@pytest.fixture(scope="module")
def medium_repo(scratch: Path) -> Path:
    """150 files of up to 16 KB and one of 512 KB: about 1.7 MB of blobs."""
    repo = GitRepo(scratch / "medium-repo")
    rng = random.Random(3)
    for index in range(150):
        repo.write(f"src/f{index:03d}.py", rng.randbytes(rng.randint(100, 16_000)))
    repo.write("weights.bin", rng.randbytes(512 * 1024))
    repo.commit("medium")
    return repo.path


@pytest.fixture(scope="module")
def small_files_repo(scratch: Path) -> Path:
    """Only files under 16 KB, so the attestation (about 40 KB) is the largest write."""
    repo = GitRepo(scratch / "small-files-repo")
    rng = random.Random(4)
    for index in range(120):
        repo.write(f"f{index:03d}.txt", rng.randbytes(rng.randint(100, 16_000)))
    repo.commit("small files")
    return repo.path


def run_prov(
    project: Project, *args: str, preexec: Callable[[], None] | None = None,
    prefix: list[str] | None = None, env: dict[str, str] | None = None,
) -> tuple[int, str]:  # fmt: skip
    base = {k: v for k, v in os.environ.items() if not k.startswith("PROV_")}
    result = subprocess.run(
        [*(prefix or []), *project.command(*args)],
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        preexec_fn=preexec,
        timeout=120,  # a hang (as a full disk once caused) fails here, not in CI's timeout
        check=False,
    )
    return result.returncode, result.stderr


def assert_clear_failure(code: int, err: str, words: str) -> None:
    assert code == 3, err
    assert words in err, err
    assert "Traceback" not in err
    assert "hint:" in err


def assert_consistent(project: Project, label: str) -> bool:
    """No temp file, no corrupt object; an attestation, if written, verifies. Returns whether
    the attestation was written."""
    assert temp_files(project) == [], "a failed write left a temp file behind"
    report = Store(project.store).fsck() if project.store.is_dir() else None
    assert report is None or report.corrupt == []
    attestation = project.attestations / f"{label}.intoto.jsonl"
    if attestation.exists():
        code, out, err = project.prov(
            "verify", str(attestation), "--key", str(project.key.with_suffix(".pub")),
            "--store", str(project.store),
        )  # fmt: skip
        assert code == 0, (out, err)
    for entry in Store(project.store).snapshots() if project.store.is_dir() else []:
        assert (project.attestations / f"{entry.label}.intoto.jsonl").exists()
    return attestation.exists()


def rerun_succeeds(project: Project, label: str, written: bool) -> None:
    if written:
        label += "-again"
    code, out, err = project.prov(*project.snapshot_args(label))
    assert code == 0, (out, err)


def survived(mechanism: str) -> None:
    figures.count("faults", "survived")
    figures.count("faults", f"survived: {mechanism}")


# -- a full disk -------------------------------------------------------------------------------


def fill(folder: Path, leave: int) -> Path:
    """A file taking all the free space of ``folder``'s filesystem but ``leave`` bytes."""
    filler = folder / "filler"
    room = shutil.disk_usage(folder).free - leave
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        chunk = b"\xa5" * (1 << 16)
        while room > 0:
            try:
                room -= os.write(fd, chunk[: min(room, len(chunk))])
            except OSError:
                break
    finally:
        os.close(fd)
    return filler


def test_a_full_tmpfs_at_every_stage(scratch: Path, medium_repo: Path, signing_keys: Path) -> None:
    if not mounts.can_mount():
        figures.note("faults", "tmpfs full-disk cases skipped: mounting is not permitted here")
        pytest.skip(
            "mounting a tmpfs needs root (CAP_SYS_ADMIN): run as root, as CI does "
            "(RLIMIT_FSIZE still covers the full disk)"
        )
    disk = scratch / "small-disk"
    with mounts.tmpfs(disk, 8 << 20):
        empty = shutil.disk_usage(disk).free
        probe = make_project(disk / "probe", medium_repo, signing_keys)
        assert probe.prov(*probe.snapshot_args("probe"))[0] == 0
        need = empty - shutil.disk_usage(disk).free
        shutil.rmtree(probe.root)
        faults = 0
        for step, fraction in enumerate((0.0, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97, 0.99, 0.999)):
            project = make_project(disk / f"p{step}", medium_repo, signing_keys)
            filler = fill(disk, int(need * fraction))
            code, err = run_prov(project, *project.snapshot_args("m1"))
            if code == 0:  # it fitted after all (tmpfs counts pages, not bytes)
                filler.unlink()
                shutil.rmtree(project.root)
                continue
            assert_clear_failure(code, err, "the disk is full")
            filler.unlink()
            rerun_succeeds(project, "m1", assert_consistent(project, "m1"))
            shutil.rmtree(project.root)
            faults += 1
            survived("full tmpfs")
        figures.count("faults", "tried", faults)
        assert faults >= 6


@pytest.mark.parametrize(
    ("limit", "repo"),
    [(0, "medium"), (4_096, "medium"), (100_000, "medium"), (24_000, "small-files")],
)
def test_a_file_size_limit_is_a_full_disk(
    scratch: Path,
    medium_repo: Path,
    small_files_repo: Path,
    signing_keys: Path,
    limit: int,
    repo: str,
) -> None:
    """RLIMIT_FSIZE makes writes past ``limit`` fail with EFBIG (SIGXFSZ ignored), as a full
    disk would: on the first blob, on the 512 KB one, or on the attestation itself."""
    source = medium_repo if repo == "medium" else small_files_repo
    project = make_project(scratch / f"fsize-{limit}-{repo}", source, signing_keys)

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    code, err = run_prov(project, *project.snapshot_args("m1"), preexec=limited)
    assert_clear_failure(code, err, "the disk is full")
    rerun_succeeds(project, "m1", assert_consistent(project, "m1"))
    figures.count("faults", "tried")
    survived("RLIMIT_FSIZE")


# -- an unwritable store -----------------------------------------------------------------------


@pytest.fixture
def ready(tmp_path: Path, medium_repo: Path, signing_keys: Path) -> Iterator[Project]:
    """A project on a real disk (chattr needs one) with snapshot m1 taken."""
    project = make_project(tmp_path / "project", medium_repo, signing_keys)
    assert project.prov(*project.snapshot_args("m1"))[0] == 0
    yield project


def listing(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*"))


@pytest.mark.parametrize("how", mounts.METHODS)
def test_a_read_only_store(ready: Project, how: str) -> None:
    stale = ready.store / "tmp" / ".tmp-999999999-00ff"
    stale.write_bytes(b"left by a writer killed before the store became read-only")
    before = listing(ready.store)
    with mounts.read_only(ready.store, how) as worked:
        if not worked:
            figures.note("faults", f"read-only store by {how}: not possible here, skipped")
            pytest.skip(
                f"a {how} needs root (mount, chattr from e2fsprogs): run as root, as CI does"
            )
        code, err = run_prov(ready, *ready.snapshot_args("m2"))
        assert_clear_failure(code, err, "permission denied")
        assert listing(ready.store) == before
        assert not (ready.attestations / "m2.intoto.jsonl").exists()
        # Reading still works: verify against it, fsck it (keeping what it cannot remove).
        code, out, err = ready.prov(
            "verify", str(ready.attestations / "m1.intoto.jsonl"),
            "--key", str(ready.key.with_suffix(".pub")), "--store", str(ready.store),
        )  # fmt: skip
        assert code == 0, (out, err)
        code, out, _ = ready.prov("fsck", "--store", str(ready.store))
        assert code == 0 and "left alone" in out and " 0 corrupt" in out, out
    figures.count("faults", "tried")
    survived(how)
    rerun_succeeds(ready, "m2", written=False)


@pytest.mark.parametrize("how", mounts.METHODS)
def test_a_read_only_attestations_folder(ready: Project, how: str) -> None:
    with mounts.read_only(ready.attestations, how) as worked:
        if not worked:
            figures.note("faults", f"read-only attestations by {how}: not possible, skipped")
            pytest.skip(
                f"a {how} needs root (mount, chattr from e2fsprogs): run as root, as CI does"
            )
        code, err = run_prov(ready, *ready.snapshot_args("m2"))
        assert_clear_failure(code, err, "could not write the attestation")
        assert "permission denied" in err
        assert not assert_consistent(ready, "m2")
        assert [e.label for e in Store(ready.store).snapshots()] == ["m1"]
    figures.count("faults", "tried")
    survived(f"{how} (attestations)")
    rerun_succeeds(ready, "m2", written=False)


def test_a_store_owned_by_someone_else(medium_repo: Path, signing_keys: Path) -> None:
    prefix = mounts.nobody_prefix()
    if prefix is None:
        pytest.skip(
            "running as nobody needs root and setpriv (util-linux): run as root, as CI does"
        )
    # nobody must reach everything but the store: a world-readable folder, not pytest's 0700.
    root = Path(tempfile.mkdtemp(prefix="prov-nobody-"))
    try:
        root.chmod(0o755)
        repo = root / "repo"
        shutil.copytree(medium_repo, repo)
        project = make_project(root / "project", repo, signing_keys)
        assert (
            project.prov("snapshot", "-c", str(project.config), "--label", "m1", "--no-sign")[0]
            == 0
        )
        before = listing(project.store)
        git_trusts_root = {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.directory",
            "GIT_CONFIG_VALUE_0": "*",
            "HOME": str(root),
        }
        code, err = run_prov(
            project, "snapshot", "-c", str(project.config), "--label", "m2", "--no-sign",
            prefix=prefix, env=git_trusts_root,
        )  # fmt: skip
        assert_clear_failure(code, err, "permission denied")
        assert listing(project.store) == before
    finally:
        shutil.rmtree(root, ignore_errors=True)
    figures.count("faults", "tried")
    survived("run as nobody")


def test_capturing_never_writes_to_the_repository(tmp_path: Path, signing_keys: Path) -> None:
    """`git status` refreshes a stale index unless told not to: a capture must not (it would
    fail on a full disk or a read-only checkout, and take index.lock from the user's git)."""
    repo = GitRepo(tmp_path / "repo")
    for index in range(20):
        repo.write(f"f{index}.txt", f"{index}\n")
    repo.commit()
    for path in (tmp_path / "repo").glob("f*.txt"):  # same content, new stat data: index stale
        os.utime(path, (1_800_000_000, 1_800_000_000))
    index = tmp_path / "repo" / ".git" / "index"
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    project = make_project(tmp_path / "project", tmp_path / "repo", signing_keys)
    code, out, err = project.prov(*project.snapshot_args("m1"))
    assert code == 0, (out, err)
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
