"""The Marin 535B-A23B run at two milestones: the one source of the demo's and the tests' data.

Everything is read from ``data/`` (``data/README.md`` says what each file is and where its
shape comes from):

* ``data/launcher/m1`` and ``m2``: the launcher files as they stood at the commit pinned for
  the run (2026-08-23) and at the relaunch with the new mixture (2026-09-15), in the shapes of
  the real files (module-level constants with the real names and numbers; the two-phase JSON
  with ``phase0_weights`` / ``phase1_weights`` / ``phase_budgets``, then the three-phase one
  with ``phases[i].weights``); the code around the constants and the weights are constructed.
* ``data/server/m1`` and ``m2``: what the run's other sources answered (W&B GraphQL, the Hub,
  the object store, the GitHub API), as fixtures of the local wire-format server; constructed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
MILESTONES = (1, 2)
LAUNCHER_DIR = "experiments/grug/moe_hero_ep"
MIX_PATH = f"{LAUNCHER_DIR}/harrier_mix_2026_08_18.json"
RULE_PATH = "experiments/grug/moe/launch_datakit_moe_mix.py"
RUNS = {1: "hero-12d8b6f0-dee637", 2: "hero-mix-996f4891-step108k"}
"""The W&B run of each milestone (the run was resumed as a new run id with the new mixture)."""
COMMITS = {
    1: "12d8b6f09f96ad4f0277445765c1a00dbc81d5be",
    2: "0cb3167f39f17eece3c75c67c0e1a6ade26686a4",
}
"""The launcher commits in the real repository (tracker #8435; the 2026-09-15 relaunch)."""


def launcher_files(milestone: int) -> dict[str, bytes]:
    """The launcher tree at a milestone: path in the repository -> bytes. ``launcher/m2`` holds
    only what changed since ``m1``; each milestone is the one before with its own files on top."""
    files: dict[str, bytes] = {}
    for number in range(1, milestone + 1):
        root = DATA / "launcher" / f"m{number}"
        for path in sorted(root.rglob("*")):
            if path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def wandb_api_key() -> str:
    key = json.loads((DATA / "server" / "m1" / "wandb.json").read_text())["api_key"]
    assert isinstance(key, str)
    return key


def server_fixtures(milestone: int, launcher_commit: str | None = None) -> Any:
    """What the local server answers at a milestone. The W&B run records ``launcher_commit``
    (the commit of a local copy of the launcher) when given, else the real repository's."""
    from provenance._testing.fixtures import Fixtures

    fixtures = Fixtures.from_dirs(DATA / "server" / f"m{milestone}", DATA / "server" / "common")
    commit = launcher_commit or COMMITS[milestone]
    for run in fixtures.wandb_runs:
        run.fields["commit"] = commit
        run.fields["config"]["git_commit"] = commit
    return fixtures
