"""The figures `make reliability` prints, gathered while the reliability tests run.

Tests call ``count(category, name, n)``; the conftest writes everything to the JSON file named by
``PROV_RELIABILITY_REPORT`` at the end of the session, and ``python -m tests.reliability`` prints
it. Categories are open-ended, so new suites (sigstore bundles, hostile servers, diff) add their
own figures without touching this module.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

REPORT_ENV = "PROV_RELIABILITY_REPORT"
LEVEL_ENV = "PROV_RELIABILITY"  # "full" for `make reliability`, anything else: the CI budget

_counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
_notes: dict[str, list[str]] = defaultdict(list)


def full() -> bool:
    """True under `make reliability` (the full budget), False in the ordinary test run."""
    return os.environ.get(LEVEL_ENV) == "full"


def count(category: str, name: str, n: int = 1) -> None:
    _counts[category][name] += n


def peak(category: str, name: str, value: int) -> None:
    """Keep the largest value seen (a slowest time, a largest memory) rather than a sum."""
    _counts[category][name] = max(_counts[category][name], value)


def note(category: str, text: str) -> None:
    """A line worth printing with the figures (a wrongly accepted case, a skipped fault...)."""
    _notes[category].append(text)


def snapshot() -> dict[str, Any]:
    return {
        "counts": {category: dict(names) for category, names in sorted(_counts.items())},
        "notes": {category: list(lines) for category, lines in sorted(_notes.items())},
    }


def write(path: Path) -> None:
    path.write_text(json.dumps(snapshot(), indent=2, sort_keys=True) + "\n")
