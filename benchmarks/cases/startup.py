"""`prov --help` start-up, against importing click alone."""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.harness import Context, Plan, Row, Side, case, run_process


@case("startup", rounds=15)
def startup(context: Context) -> Plan:
    prov = str(Path(sys.executable).with_name("prov"))
    return Plan(
        sides=[
            Side("prov --help", lambda: run_process([prov, "--help"])),
            Side(
                "python -c 'import click'",
                lambda: run_process([sys.executable, "-c", "import click"]),
            ),
        ],
        rows=[
            Row("`prov --help` start-up", "prov --help", "python -c 'import click'", "time", 1.5)
        ],
    )
