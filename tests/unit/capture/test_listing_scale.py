"""Bounded memory: a listing capture's peak RSS, measured in a subprocess by the benchmark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_listing.py"

run_slow = pytest.mark.skipif(
    not (os.environ.get("CI") or os.environ.get("PROV_SLOW")),
    reason="slow (about a minute): runs in CI, or locally with PROV_SLOW=1",
)


def bench(objects: int) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--objects", str(objects), "--json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode in (0, 1), done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"\n{result}")
    return result


def test_listing_50k_files_in_bounded_memory() -> None:
    result = bench(50_000)
    assert result["objects"] == 50_000
    assert float(str(result["peak_rss_mib"])) < 200


@pytest.mark.slow
@run_slow
@pytest.mark.skipif(
    not os.access("/dev/shm", os.W_OK),
    reason="needs a writable /dev/shm (a million files on disk would time the disk): mount one",
)
def test_listing_a_million_files_under_500_mib() -> None:
    """Acceptance 2 at full size."""
    result = bench(1_000_000)
    assert result["objects"] == 1_000_000
    assert float(str(result["peak_rss_mib"])) < 500
