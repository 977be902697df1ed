"""A skipped test says what it needs and how to get it, and the README lists every such need.

Before: "…/shared is absent" and "chromium is not installed" told a contributor neither what
the data was nor what to run, and the README did not say that tests skip at all.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

import pytest

from tests.conftest import ROOT

# How a reason says what to do: a command to run, a variable to set, a folder to fill.
INSTRUCTION = re.compile(
    r"apt-get install |pip install |npm install|PROV_[A-Z]+=|run as root|GitHub Actions|\.\./shared"
    r"|mount one"
)


def skip_reasons() -> Iterator[tuple[str, str]]:
    """(where, reason text) for every skip written in the test suite."""
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = ast.unparse(node.func)
            texts: list[ast.expr] = []
            if name == "pytest.skip" and node.args:
                texts.append(node.args[0])
            if name in ("pytest.mark.skipif", "pytest.importorskip"):
                texts += [k.value for k in node.keywords if k.arg == "reason"]
            for text in texts:
                yield f"{path.relative_to(ROOT)}:{node.lineno}", ast.unparse(text)


REASONS = list(skip_reasons())


def test_the_suite_has_skips_to_check() -> None:
    assert len(REASONS) >= 10


@pytest.mark.parametrize(("where", "reason"), REASONS, ids=[w for w, _ in REASONS])
def test_every_skip_says_how_to_run_it(where: str, reason: str) -> None:
    assert INSTRUCTION.search(reason), f"{where}: the reason does not say what to do: {reason}"


def test_the_readme_lists_what_enables_skipped_tests() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Tests that skip", 1)[1].split("\n## ", 1)[0]
    for need in (
        "apt-get install docker-registry apache2-utils",
        "apt-get install chromium",
        "apt-get install nodejs npm",
        "../shared",
        "PROV_SHARED=DIR",
        "PROV_SLOW=1",
        "run as root",
        "-m online",
    ):
        assert need in section, need
