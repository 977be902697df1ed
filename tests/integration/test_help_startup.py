"""`prov --help` imports click and the command modules, and nothing it does not need to print.

Start-up is benchmarked against `import click` alone (benchmarks/cases/startup.py). Only a running
command needs these: the models (``provenance.model`` with pydantic, ~110 ms to import here) and
logging, tempfile, json, dataclasses (about 15 ms together, measured with ``-X importtime``).
"""

from __future__ import annotations

import json
import subprocess
import sys

AT_RUN_TIME_ONLY = ("pydantic", "blake3", "logging", "tempfile", "json", "dataclasses", "traceback")


def test_help_leaves_run_time_modules_unimported() -> None:
    probe = (
        "import sys\n"
        "from provenance.cli import cli\n"
        "try:\n"
        "    cli(['--help'], prog_name='prov')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {AT_RUN_TIME_ONLY!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert "Usage: prov" in result.stdout
    assert json.loads(result.stdout.splitlines()[-1].replace("'", '"')) == []
