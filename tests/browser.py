"""Headless Chromium for tests that look at a page as a person would.

Chromium is a Debian package (`apt-get install chromium`, done by .ci/run); without it these tests
skip. Screenshots are kept under tests/artifacts/ (git-ignored) for a human to look at.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium with nothing that reaches out to the network by itself."""
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
