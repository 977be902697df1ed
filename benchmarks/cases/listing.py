"""The listing collector over a ``file://`` tree of 1,000,000 objects (``bench_listing.py``'s
tree and run), against ``find -printf | sort``: the same keys, sizes and times, in byte order.

The tree is built in /dev/shm when it is writable (sparse files: no data blocks), so the walk is
what is timed, not the disk; it is deleted after the case.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_listing import CHILD, LIMIT_MIB, build_tree, default_dir
from benchmarks.harness import ROOT, Context, Measurement, Plan, Row, Side, case, run_process


@case("listing", rounds=3)
def listing(context: Context) -> Plan:
    count = context.sizes.listing_objects
    work = Path(tempfile.mkdtemp(prefix="prov-bench-listing-", dir=default_dir()))
    context.cleanups.append(lambda: shutil.rmtree(work, ignore_errors=True))
    tree, store = work / "store", work / ".prov"
    build_tree(tree, count, 5_000)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}

    def collect() -> Measurement:
        return run_process([sys.executable, "-c", CHILD, str(tree), str(store)], env=env)

    def fresh_store() -> None:
        shutil.rmtree(store, ignore_errors=True)

    command = f"find {tree} -type f -printf '%P %s %T@\\n' | LC_ALL=C sort > /dev/null"
    return Plan(
        sides=[
            Side("ListingCollector", collect, prepare=fresh_store),
            Side("find -printf | sort", lambda: run_process(["sh", "-c", command])),
        ],
        rows=[
            Row(
                f"list {count:,} `file://` objects",
                "ListingCollector",
                "find -printf | sort",
                "time",
                None,
                rss_cap=LIMIT_MIB << 20,
                per=(count, "objects"),
                note="benchmarks/bench_listing.py's tree (sparse files in /dev/shm) and run: "
                "the listing collector in its own process (start-up included), every entry "
                "canonicalised, Merkle-hashed and written to the store as one manifest blob; "
                "the baseline lists the same names, sizes and times and sorts them",
            )
        ],
    )
