"""Rewrite the README's command reference from `prov --help` (``make readme``)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from click.testing import CliRunner

BLOCK = re.compile(r"(<!-- BEGIN prov --help -->\n```\n)(.*?)(```\n<!-- END)", re.S)


def help_text() -> str:
    from provenance.cli import cli

    return CliRunner().invoke(cli, ["--help"], prog_name="prov", terminal_width=80).output


def main(path: str = "README.md") -> int:
    readme = Path(path)
    text = readme.read_text()
    readme.write_text(BLOCK.sub(lambda m: m.group(1) + help_text() + m.group(3), text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
