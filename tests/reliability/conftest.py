"""Reliability suites: the hypothesis budget, the shared evidence, and the figures they report.

The ordinary test run (``make test``) uses the CI budget. ``make reliability`` sets
``PROV_RELIABILITY=full``: more property examples, 50 crash trials. ``PROV_HYPOTHESIS_PROFILE``
picks a profile by name (``prov-ci``, ``prov-full``, ``prov-dev``) for one run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.reliability import figures
from tests.reliability.evidence import Evidence, build

_COMMON = {
    "deadline": None,  # a shared 2-core machine: time per example is not what is tested
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile("prov-ci", max_examples=300, derandomize=True, **_COMMON)
settings.register_profile("prov-full", max_examples=1500, **_COMMON)
settings.register_profile("prov-dev", max_examples=50, **_COMMON)
settings.load_profile(
    os.environ.get("PROV_HYPOTHESIS_PROFILE") or ("prov-full" if figures.full() else "prov-ci")
)


@pytest.fixture(scope="session")
def evidence(tmp_path_factory: pytest.TempPathFactory) -> Evidence:
    """Two real signed snapshots and their store (see evidence.py); read-only for tests."""
    return build(tmp_path_factory.mktemp("evidence") / "project")


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get(figures.REPORT_ENV)
    if target:
        figures.write(Path(target))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts = figures.snapshot()["counts"]
    if counts:
        terminalreporter.section("reliability figures")
        for category, names in counts.items():
            text = ", ".join(f"{name} {value}" for name, value in sorted(names.items()))
            terminalreporter.write_line(f"{category}: {text}")


@pytest.fixture(scope="session")
def scratch() -> Iterator[Path]:
    """A RAM-backed folder when there is one (see workload.py), removed at the end."""
    import shutil

    from tests.reliability.workload import scratch_root

    root = scratch_root()
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def big_repo(scratch: Path) -> Path:
    """A real repository of 3,000 files and 4 MiB of large ones (about 8 MB of blobs)."""
    from tests.reliability.workload import make_big_repo

    return make_big_repo(scratch / "big-repo").path


@pytest.fixture(scope="session")
def signing_keys(scratch: Path) -> Path:
    from tests.reliability.workload import make_keys

    return make_keys(scratch / "keys")
