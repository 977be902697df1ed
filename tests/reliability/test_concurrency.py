"""Concurrency: eight ``prov snapshot`` processes into one store at once, with fsck running too.

All eight succeed; the store holds each object once, intact; every attestation verifies against
it; the index lists all eight. Eight writers racing for one label: exactly one wins, the others
are refused with exit 2, and nothing is damaged.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from provenance.store.objects import Store
from tests.reliability import figures
from tests.reliability.workload import (
    BIG_FILES,
    FILES,
    Project,
    make_project,
    prov_process,
    temp_files,
)

WRITERS = 8


def start_all(project: Project, labels: list[str]) -> list[subprocess.Popen[bytes]]:
    return [prov_process(project, *project.snapshot_args(label)) for label in labels]


def finish_all(processes: list[subprocess.Popen[bytes]]) -> list[tuple[int, str]]:
    results = []
    for process in processes:
        _, err = process.communicate(timeout=600)
        results.append((process.returncode, err.decode()))
    return results


def test_eight_writers_into_one_store(scratch: Path, big_repo: Path, signing_keys: Path) -> None:
    project = make_project(scratch / "concurrent", big_repo, signing_keys)
    labels = [f"writer-{n}" for n in range(WRITERS)]
    processes = start_all(project, labels)
    # fsck in a loop meanwhile: it must never take a live writer's temp file for a dead one's.
    sweeps = 0
    while any(p.poll() is None for p in processes):
        if project.store.is_dir() and (project.store / "objects").is_dir():
            code, out, _ = project.prov("fsck", "--store", str(project.store))
            assert code == 0, out
            sweeps += 1
        time.sleep(0.05)
    results = finish_all(processes)
    assert [code for code, _ in results] == [0] * WRITERS, results
    figures.count("concurrency", "writers", WRITERS)
    figures.count("concurrency", "fsck runs during the writes", sweeps)

    store = Store(project.store)
    report = store.fsck()
    assert report.corrupt == [] and report.removed_temp == [] and temp_files(project) == []
    # Each distinct blob once (in whichever writer's pack it landed first, maybe in several:
    # counted once), the one file manifest they share, and one attestation object per writer.
    assert report.checked == FILES + BIG_FILES + 1 + WRITERS
    assert sorted(entry.label for entry in store.snapshots()) == labels
    for label in labels:
        code, out, err = project.prov(
            "verify", str(project.attestations / f"{label}.intoto.jsonl"),
            "--key", str(project.key.with_suffix(".pub")), "--store", str(project.store),
        )  # fmt: skip
        assert code == 0, (out, err)
    figures.count("concurrency", "writers consistent", WRITERS)


def test_eight_writers_racing_for_one_label(
    scratch: Path, big_repo: Path, signing_keys: Path
) -> None:
    project = make_project(scratch / "same-label", big_repo, signing_keys)
    results = finish_all(start_all(project, ["m1"] * WRITERS))
    winners = [err for code, err in results if code == 0]
    losers = [(code, err) for code, err in results if code != 0]
    assert len(winners) == 1, results
    for code, err in losers:
        assert code == 2, err
        assert any(
            words in err
            for words in ("already exists", "created by another process meanwhile", "already used")
        )
        assert "Traceback" not in err
    assert [p.name for p in project.attestations.iterdir()] == ["m1.intoto.jsonl"]
    code, out, err = project.prov(
        "verify", str(project.attestations / "m1.intoto.jsonl"),
        "--key", str(project.key.with_suffix(".pub")), "--store", str(project.store),
    )  # fmt: skip
    assert code == 0, (out, err)
    assert [entry.label for entry in Store(project.store).snapshots()] == ["m1"]
    assert Store(project.store).fsck().corrupt == []
    figures.count("concurrency", "same-label races with one winner", 1)
