"""Crash consistency: ``prov snapshot`` killed with SIGKILL at random moments of a large capture.

After every kill: ``prov fsck`` finds no corrupt object and leaves no temp file in the store or in
attestations/; every attestation present is complete and verifies against the store; every index
entry is readable; and the snapshot can be taken again. ``make reliability`` runs 50 kills; the
ordinary test run a few. The seed of the kill times is printed, so a failure can be replayed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from provenance._internal.files import create_temp, sweep_temps
from provenance.digest import Digest
from provenance.store.objects import Store
from tests.conftest import GitRepo
from tests.reliability import figures
from tests.reliability.workload import Project, make_project, prov_process, temp_files

TRIALS_FULL = 50
TRIALS_CI = 4


def check_consistent(project: Project, label: str) -> str:
    """Every invariant a killed snapshot must leave; returns the phase the kill landed in."""
    if not project.store.is_dir():
        return "before the store existed"
    code, out, _ = project.prov("fsck", "--store", str(project.store), "-c", str(project.config))
    assert code == 0, out
    assert " 0 corrupt" in out
    assert temp_files(project) == [], "fsck left a killed writer's temp file"
    entries = Store(project.store).snapshots()  # every index entry parses
    attestations = sorted(project.attestations.glob("*")) if project.attestations.is_dir() else []
    assert [p.name for p in attestations] in ([], [f"{label}.intoto.jsonl"]), attestations
    for attestation in attestations:  # published means complete: it verifies, blobs and all
        code, out, err = project.prov(
            "verify", str(attestation), "--key", str(project.key.with_suffix(".pub")),
            "--store", str(project.store),
        )  # fmt: skip
        assert code == 0, (out, err)
    for entry in entries:
        assert entry.label == label and attestations, "an index entry without its attestation"
    if attestations:
        return "after the attestation" if entries else "between attestation and index"
    folders = (project.store / "objects", project.store / "packs")
    objects = sum(1 for folder in folders for path in folder.rglob("*") if path.is_file())
    return "during the capture" if objects else "before the first object"


def rerun(project: Project, label: str) -> None:
    """The same command again: it succeeds, unless the killed run had already published."""
    published = (project.attestations / f"{label}.intoto.jsonl").exists()
    code, out, err = project.prov(*project.snapshot_args(label))
    if published:
        assert code == 2 and "already exists" in err, (code, err)
        label = f"{label}-again"
        code, out, err = project.prov(*project.snapshot_args(label))
    assert code == 0, (code, out, err)
    code, out, err = project.prov(
        "verify", str(project.attestations / f"{label}.intoto.jsonl"),
        "--key", str(project.key.with_suffix(".pub")), "--store", str(project.store),
    )  # fmt: skip
    assert code == 0, (out, err)
    code, out, _ = project.prov("fsck", "--store", str(project.store), "-c", str(project.config))
    assert code == 0 and temp_files(project) == [], out


def timings(project: Project) -> tuple[float, float]:
    """(when the first object appears, when the run ends), in seconds, from one full run."""
    started = time.monotonic()
    process = prov_process(project, *project.snapshot_args("warm-up"))
    first = None
    while process.poll() is None:
        if first is None and (project.store / "objects").is_dir():
            first = time.monotonic() - started
        time.sleep(0.005)
    _, err = process.communicate(timeout=600)
    assert process.returncode == 0, err.decode()
    end = time.monotonic() - started
    return (first if first is not None else 0.0), end


def test_snapshot_killed_at_random_moments_leaves_a_consistent_store(
    scratch: Path, big_repo: Path, signing_keys: Path
) -> None:
    trials = TRIALS_FULL if figures.full() else TRIALS_CI
    seed = int(os.environ.get("PROV_CRASH_SEED", random.SystemRandom().randrange(1 << 30)))
    print(f"crash trials: {trials}, seed {seed} (set PROV_CRASH_SEED to replay)")
    rng = random.Random(seed)
    # Kill times: uniform over the writing part of a run (Python's start-up writes nothing),
    # a few of them before it, and a few near the end where the attestation is written.
    first, end = timings(make_project(scratch / "crash-warm-up", big_repo, signing_keys))

    def windows() -> list[tuple[float, float]]:
        return [(first, end)] * 8 + [(0.0, first), (0.9 * end, 1.05 * end)]

    phases: Counter[str] = Counter()
    killed = finished = 0
    attempt = 0
    while killed < trials:
        attempt += 1
        assert attempt <= trials * 3, "the snapshot kept finishing before the kill"
        project = make_project(scratch / f"crash-{attempt}", big_repo, signing_keys)
        label = f"crash-{attempt}"
        process = prov_process(project, *project.snapshot_args(label))
        time.sleep(rng.uniform(*rng.choice(windows())))
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)
        if process.returncode == -signal.SIGKILL:
            killed += 1
            phase = check_consistent(project, label)
            phases[phase] += 1
            rerun(project, label)
            figures.count("crash", "trials consistent")
        else:
            assert process.returncode == 0
            finished += 1
            end = max(first, end * 0.95)  # runs got faster than the warm-up: aim earlier
        subprocess.run(["rm", "-rf", str(project.root)], check=True)
    figures.count("crash", "trials", killed)
    figures.count("crash", "finished before the kill (not counted)", finished)
    for phase, count in phases.items():
        figures.count("crash", f"killed {phase}", count)
    print("kills by phase:", json.dumps(phases))


def test_a_dead_writers_temp_file_goes_even_when_its_pid_is_reused(tmp_path: Path) -> None:
    """The lock, not the pid, says a writer is alive (pids wrap at 32768 on busy machines)."""
    live_pid = os.getpid()  # stands for a new process that got the dead writer's pid
    stale = tmp_path / f".tmp-{live_pid}-0123abcd"
    stale.write_bytes(b"half")
    os.utime(stale, (time.time() - 60, time.time() - 60))
    locked, fd = create_temp(tmp_path)  # a live writer, holding its lock
    os.utime(locked, (time.time() - 7200, time.time() - 7200))  # idle, but alive
    try:
        removed, in_flight = sweep_temps(tmp_path)
    finally:
        os.close(fd)
    assert removed == [stale.name]
    assert in_flight == [locked.name]
    assert sweep_temps(tmp_path)[0] == [locked.name]  # its writer is gone now


@pytest.mark.parametrize("folder", ["tmp", "snapshots", "attestations"])
def test_fsck_and_snapshot_sweep_what_a_killed_writer_left(
    scratch: Path, signing_keys: Path, folder: str
) -> None:
    """A temp file of a dead pid in each folder prov writes: fsck removes it, and so does
    the next snapshot for attestations/ (which fsck reaches only through prov.toml)."""
    small = scratch / f"sweep-repo-{folder}"
    repo = GitRepo(small)
    repo.write("a.txt", "a\n")
    repo.commit()
    project = make_project(scratch / f"sweep-{folder}", small, signing_keys)
    (project.store / "tmp").mkdir(parents=True)
    (project.store / "snapshots").mkdir()
    (project.store / "objects").mkdir()
    project.attestations.mkdir()
    target = project.attestations if folder == "attestations" else project.store / folder
    leftover = target / ".tmp-999999999-00ff"
    leftover.write_bytes(b'{"payload": "eyJf')
    if folder == "attestations":
        code, _, err = project.prov(*project.snapshot_args("m1"))
        assert code == 0, err
        assert not leftover.exists()
        leftover.write_bytes(b"again")
    code, out, _ = project.prov("fsck", "--store", str(project.store), "-c", str(project.config))
    assert code == 0
    assert "removed an interrupted write" in out and leftover.name in out
    assert not leftover.exists()


PACKER = """
import random, sys
from provenance.digest import Digest
from provenance.store.objects import Store
store = Store(sys.argv[1]).init()
rng = random.Random(int(sys.argv[2]))
with store.batch() as batch:
    for index in range(int(sys.argv[3])):
        batch.put_bytes(rng.randbytes(rng.randint(100, 6000)))
print("published", flush=True)
"""


def test_a_batch_killed_while_packing_leaves_only_whole_packs(scratch: Path) -> None:
    """SIGKILL at random moments of one large batch (appending, fsyncing, writing the index,
    publishing): afterwards every index names a whole pack whose objects all read back, fsck
    finds nothing corrupt and removes the leftovers, and the same batch then completes."""
    import sys

    trials = TRIALS_FULL if figures.full() else TRIALS_CI
    seed = int(os.environ.get("PROV_CRASH_SEED", random.SystemRandom().randrange(1 << 30)))
    print(f"packing kills: {trials}, seed {seed} (set PROV_CRASH_SEED to replay)")
    rng = random.Random(seed)
    objects = 20_000

    def packer(root: Path) -> subprocess.Popen[bytes]:
        argv = [sys.executable, "-c", PACKER, str(root), "7", str(objects)]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    started = time.monotonic()
    warm = packer(scratch / "packing-warm-up")
    out, err = warm.communicate(timeout=600)
    assert warm.returncode == 0 and out == b"published\n", err.decode()
    end = time.monotonic() - started
    phases: Counter[str] = Counter()
    for trial in range(trials):
        root = scratch / f"packing-{trial}"
        process = packer(root)
        # Start-up writes nothing; half the kills aim at the end, where the pack is fsynced,
        # linked and indexed.
        time.sleep(rng.uniform(0.2 * end, end) if trial % 2 else rng.uniform(0.8 * end, 1.05 * end))
        process.kill()
        process.communicate(timeout=60)
        store = Store(root)
        packs = store.packs_dir
        names = sorted(p.name for p in packs.iterdir()) if packs.is_dir() else []
        indexes = [n for n in names if n.endswith(".idx")]
        for name in indexes:  # visible means whole: every object reads back and hashes right
            assert name[:-4] + ".pack" in names, names
        readable = sum(1 for _ in store.digests())
        for hexdigest, _ in store.digests():
            store.check(Digest("blake3", hexdigest))
        assert readable in (0, objects), readable  # one pack: all of its objects or none
        phases["published" if readable else ("unpublished" if names else "before the pack")] += 1
        report = store.fsck()
        assert report.corrupt == [] and report.damaged == []
        left = os.listdir(packs) if packs.is_dir() else []
        assert [n for n in left if not n.endswith((".pack", ".idx"))] == [], left
        assert all(n[:-5] + ".idx" in left for n in left if n.endswith(".pack")), left
        again = packer(root)
        out, err = again.communicate(timeout=600)
        assert again.returncode == 0, err.decode()
        assert sum(1 for _ in Store(root).digests()) == objects
        figures.count("crash", "packing kills consistent")
        subprocess.run(["rm", "-rf", str(root)], check=True)
    for phase, count in phases.items():
        figures.count("crash", f"packing killed: {phase}", count)
    print("packing kills by phase:", json.dumps(phases))
