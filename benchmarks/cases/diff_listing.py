"""``prov diff`` of two snapshots of a 1,000,000-object listing with 1% of the objects differing,
against GNU ``diff`` of the two sorted manifests.

The snapshots are signed and in one store (``inputs.listing_pair``); prov resolves both labels,
checks the attestations and both manifest blobs (blake3), merges the manifests by key and prints
the text report. GNU diff only compares the two files line by line.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from benchmarks import inputs
from benchmarks.harness import BenchError, Context, Plan, Row, Side, case, run_process


@case("diff", rounds=5)
def diff_listing(context: Context) -> Plan:
    sizes = context.sizes
    count = sizes.diff_objects
    pair = inputs.listing_pair(
        context.work / f"listing-pair-{count}", count, sizes.changed_fraction
    )
    prov = str(Path(sys.executable).with_name("prov"))
    prov_argv = [prov, "diff", pair.before, pair.after, "--store", str(pair.store)]
    manifest_a, manifest_b = map(str, pair.manifests)
    checks: list[str] = []

    def warm_up() -> None:
        """Read both manifests into the page cache; check that both sides see the same change."""
        found = _counts(run_process([*prov_argv, "--format", "json"], ok=(1,)).output)
        expected = (pair.differing, pair.added, pair.removed, pair.changed)
        if found != expected:
            raise BenchError(f"prov diff found {found}, the inputs hold {expected}")
        lines = subprocess.run(
            ["diff", manifest_a, manifest_b], capture_output=True, check=False
        ).stdout.splitlines()
        old = sum(1 for line in lines if line.startswith(b"< "))
        new = sum(1 for line in lines if line.startswith(b"> "))
        if (old, new) != (pair.changed + pair.removed, pair.changed + pair.added):
            raise BenchError(f"GNU diff found {old} old and {new} new lines")
        checks.append(
            f"both sides checked: prov counts {pair.added:,} added, {pair.removed:,} removed, "
            f"{pair.changed:,} changed objects; GNU diff {old:,} old and {new:,} new lines"
        )

    return Plan(
        sides=[
            Side("prov diff", lambda: run_process(prov_argv, ok=(1,))),
            Side(
                "GNU diff",
                lambda: run_process(
                    ["sh", "-c", f"diff {manifest_a} {manifest_b} > /dev/null; test $? -le 1"]
                ),
            ),
        ],
        rows=[
            Row(
                f"diff two snapshots of {count:,} files with {sizes.changed_fraction:.0%} changed",
                "prov diff",
                "GNU diff",
                "time",
                2.0,
                rss_cap=1 << 30,
                note=f"listing captures (S3-shaped entries, {pair.manifest_bytes / 2**20:.0f} MiB "
                "manifests); prov resolves both signed snapshots in the store, checks both "
                "manifest blobs (blake3), merges them by key and prints the text report (the "
                "first 1,000 objects); GNU diff compares the two manifest files line by line",
            )
        ],
        warm_up=warm_up,
        checks=checks,
    )


def _counts(output: str) -> tuple[int, int, int, int] | None:
    """(differing, added, removed, changed) from ``prov diff --format json``: the objects listed,
    or, where the list stops at its limit, the totals its notice gives."""
    document = json.loads(output)
    for capture in document.get("captures", []):
        for notice in capture.get("notices", []):
            counted = re.search(
                r"([\d,]+) objects differ \(([\d,]+) added, ([\d,]+) removed, "
                r"([\d,]+) changed\)",
                notice,
            )
            if counted:
                a, b, c, d = (int(n.replace(",", "")) for n in counted.groups())
                return a, b, c, d
        files = capture.get("files", [])
        if files:
            kinds = [f["change"] for f in files]
            return len(kinds), kinds.count("added"), kinds.count("removed"), kinds.count("changed")
    return None
