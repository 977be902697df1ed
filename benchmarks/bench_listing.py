"""Benchmark: a listing capture of a file:// prefix with many objects.

Builds a tree shaped like a processed data store (``cells`` folders of equal size, sparse files
so a million objects take no disk blocks), then runs the listing collector in a fresh
subprocess and reports objects per second and the subprocess's peak RSS (``ru_maxrss``).

    python benchmarks/bench_listing.py                 # 1,000,000 objects
    python benchmarks/bench_listing.py --objects 100000 --json

The acceptance bound is a peak RSS under 500 MiB at a million objects.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT_MIB = 500

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from provenance.capture.base import CollectContext
from provenance.capture.listing import ListingCollector, ListingOptions
from provenance.store.objects import Store

root, store_dir = sys.argv[1], sys.argv[2]
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
store = Store(store_dir).init()
options = ListingOptions(name="bench", kind="listing", url=root)
started = time.perf_counter()
capture = ListingCollector(options, CollectContext(store=store, base_dir=Path(root))).collect()
elapsed = time.perf_counter() - started
assert capture.status == "ok", capture.error
manifest = capture.data["manifest"]
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
print(json.dumps({
    "objects": manifest["count"],
    "bytes": manifest["bytes"],
    "seconds": round(elapsed, 3),
    "objects_per_second": round(manifest["count"] / elapsed),
    "peak_rss_mib": round(peak / 1024, 1),
    "rss_before_mib": round(baseline / 1024, 1),
    "manifest_blob_bytes": next(b.size for b in capture.blobs),
    "root": manifest["root"],
}))
"""


def default_dir() -> Path | None:
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else None


def build_tree(root: Path, objects: int, per_folder: int) -> float:
    """Sparse files ``cNNNNN/shard-NNNNNNN.jsonl.zst``; returns the seconds taken."""
    started = time.perf_counter()
    for index in range(objects):
        folder = root / f"c{index // per_folder:05d}"
        if index % per_folder == 0:
            folder.mkdir(parents=True)
        fd = os.open(folder / f"shard-{index:07d}.jsonl.zst", os.O_WRONLY | os.O_CREAT, 0o644)
        os.ftruncate(fd, (index % 4096) * 1024)
        os.close(fd)
    return time.perf_counter() - started


def measure(root: Path, store_dir: Path) -> dict[str, object]:
    """Run the listing capture in a fresh interpreter; its peak RSS is the listing's own."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(store_dir)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=1_000_000)
    parser.add_argument("--per-folder", type=int, default=5_000)
    parser.add_argument(
        "--dir",
        type=Path,
        default=default_dir(),
        help="where to build the tree (default: /dev/shm, so the walk is timed, not the disk)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="prov-bench-listing-", dir=args.dir))
    try:
        build_seconds = build_tree(work / "store", args.objects, args.per_folder)
        result = measure(work / "store", work / ".prov")
        result["build_seconds"] = round(build_seconds, 1)
        result["limit_mib"] = LIMIT_MIB
        result["within_limit"] = float(str(result["peak_rss_mib"])) < LIMIT_MIB
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"listing file:// {result['objects']:,} objects: "
            f"{result['objects_per_second']:,} objects/s, {result['seconds']} s, "
            f"peak RSS {result['peak_rss_mib']} MiB (limit {LIMIT_MIB} MiB), "
            f"manifest {int(str(result['manifest_blob_bytes'])) / 2**20:.1f} MiB"
        )
    return 0 if result["within_limit"] else 1


if __name__ == "__main__":
    sys.exit(main())
