"""The README's command reference is `prov --help`, word for word."""

from __future__ import annotations

from provenance.cli._readme import BLOCK, help_text
from tests.conftest import ROOT


def test_readme_command_reference_equals_help() -> None:
    match = BLOCK.search((ROOT / "README.md").read_text())
    assert match, "README.md lacks the command reference block"
    assert match.group(2) == help_text(), "run `make readme` to update the command reference"


def test_readme_shows_the_commands_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme and "make test" in ci
