"""`prov --help` and the new commands' help load none of the heavy network libraries."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ["httpx", "httpcore", "huggingface_hub", "warcio"]

PROBE = """
import json, sys
from provenance.cli import cli
try:
    cli(sys.argv[1:], prog_name="prov")
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {heavy})))
"""


@pytest.mark.parametrize("args", [["--help"], ["export-warc", "--help"], ["snapshot", "--help"]])
def test_help_imports_no_network_library(args: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=set(HEAVY)), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert [
        m for m in loaded if m.split(".")[0] in ("httpx", "httpcore", "huggingface_hub", "warcio")
    ] == []
    assert "Usage:" in result.stdout
