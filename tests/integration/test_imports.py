"""`prov --help` stays light: heavy clients load only where they are used."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("sigstore", "httpx", "huggingface_hub", "wandb", "jsonschema", "cryptography", "warcio")


def test_help_imports_no_heavy_dependency() -> None:
    probe = (
        "import sys, json\n"
        "from provenance.cli import cli\n"
        "try:\n"
        "    cli(['--help'], prog_name='prov')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {list(HEAVY)!r})))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert loaded == []
    assert "Usage: prov" in result.stdout
