"""Every benchmark case runs, at a tiny scale: `make bench` stays runnable (timings not judged)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TINY = [
    "--rounds", "1", "--repo-files", "300", "--small-blobs", "300", "--big-file-mib", "4",
    "--envelopes", "50", "--config-mb", "0.05", "--diff-objects", "2000",
    "--listing-objects", "2000", "-q",
]  # fmt: skip


@pytest.mark.skipif(
    shutil.which("b3sum") is None, reason="the benchmarks need b3sum: apt-get install b3sum"
)
def test_every_case_runs_at_a_tiny_scale(tmp_path: Path) -> None:
    from benchmarks.cases import __all__ as modules
    from benchmarks.harness import REGISTRY

    assert len(REGISTRY) == len(modules)
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", *TINY, "--work", str(tmp_path / "work"),
         "--results", str(results)],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    table = (results / "latest.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) - 1 >= len(REGISTRY), table  # every case gave at least one row
    assert "ERROR" not in table and "<= 0x" not in table, table
    for title in ("store size for those blobs", "fsck of that store", "statement of a 300-file"):
        assert title in table, table
