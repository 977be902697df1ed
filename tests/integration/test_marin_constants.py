"""Claims over the launcher's Python constants, across two commits of one repository.

The repository holds the Marin launcher files of examples/marin/data (the real names and numbers in
the real shapes) at two commits; `prov snapshot` captures each, `prov check` derives the run's
numbers from the captured constants and `prov diff` shows the constants that changed. Where the
real bytes are at hand (../shared/marin: the byte-exact mixture JSONs and the verbatim module
excerpts), the same is done over them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.conftest import GitRepo
from tests.marin_fixture import fixtures

CODE = "captures['launcher'].constants"
LETS = f"""
[let]
mix_py = "{CODE}['experiments/grug/moe_hero_ep/harrier_mix_2026_08_18.py']"
ladder = "{CODE}['experiments/grug/moe_hero_ep/launch_scaling_ladder.py']"
recipe = "{CODE}['experiments/grug/moe_hero_ep/hero_recipe.py']"
rule = "{CODE}['experiments/grug/moe/launch_datakit_moe_mix.py']"
batch = "recipe.HERO_EP_BATCH_SIZE * ladder.LADDER_RACKS['d6144']"
steps = "round(ladder.TOKENS_PER_ACTIVE_PARAM * 22762506240 / (batch * ladder.SEQ_LEN))"
multiple = "rule._MIXTURE_BLOCK_SIZE // gcd(rule._MIXTURE_BLOCK_SIZE, batch)"
"""
CLAIMS = (
    LETS
    + """
[[claims]]
name = "announced tokens = TOTAL_TOKENS"
claimed = "18.75T"
derived = "mix_py.TOTAL_TOKENS"

[[claims]]
name = "batch"
claimed = 11264
derived = "batch"

[[claims]]
name = "steps"
claimed = 390251
derived = "steps"

[[claims]]
name = "cooldown switch"
claimed = 312192
derived = "max(multiple, int(steps * rule._PHASE_1_START_FRACTION) // multiple * multiple)"

[[claims]]
name = "mixture switch"
claimed = 108000
derived = '''ceil(steps * mix_py._MIXTURE_SWITCH_FRACTION / multiple) * multiple
             if '_MIXTURE_SWITCH_FRACTION' in mix_py else 'none' '''
"""
)


def _write_tree(repo: GitRepo, files: dict[str, bytes]) -> str:
    for path in repo.path.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            path.unlink()
    for relative, content in files.items():
        repo.write(relative, content)
    return repo.commit("launcher")


def _project(root: Path, repo: GitRepo, paths: tuple[str, ...]) -> Path:
    folder = root / "project"
    folder.mkdir()
    (folder / "prov.toml").write_text(
        '[store]\npath = ".prov"\n\n[[sources]]\nname = "launcher"\nkind = "git"\n'
        f'repo = "{repo.path}"\nref = "main"\npaths = {json.dumps(list(paths))}\n'
    )
    return folder


def _results(
    prov: Callable[..., Result], folder: Path, claims: Path, label: str
) -> dict[str, dict]:
    checked = prov("check", "--claims", str(claims), label, "--store", str(folder / ".prov"),
                   "--format", "json")  # fmt: skip
    assert checked.exit_code in (0, 1, 2), checked.output
    return {r["name"]: r for r in json.loads(checked.stdout)["results"]}


def test_two_commits_of_the_launcher_and_claims_over_their_constants(
    tmp_path: Path, prov: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = GitRepo(tmp_path / "marin")
    folder = _project(tmp_path, repo, (fixtures.LAUNCHER_DIR, fixtures.RULE_PATH))
    monkeypatch.chdir(folder)
    claims = folder / "claims.toml"
    claims.write_text(CLAIMS)
    for number in fixtures.MILESTONES:
        _write_tree(repo, fixtures.launcher_files(number))
        taken = prov("snapshot", "--label", f"m{number}", "--no-sign")
        assert taken.exit_code == 0, taken.output

    early, late = _results(prov, folder, claims, "m1"), _results(prov, folder, claims, "m2")
    for name in ("announced tokens = TOTAL_TOKENS", "batch", "steps", "cooldown switch"):
        assert early[name]["status"] == late[name]["status"] == "pass", (name, early[name])
    assert early["cooldown switch"]["derived"] == 312_192  # derived from constants, not typed
    assert (early["mixture switch"]["status"], early["mixture switch"]["derived"]) == (
        "fail",
        "none",
    )
    assert (late["mixture switch"]["status"], late["mixture switch"]["derived"]) == (
        "pass",
        108_000,
    )

    shown = prov("diff", "m1", "m2", "--store", str(folder / ".prov"))
    assert shown.exit_code == 1
    assert "constants in experiments/grug/moe_hero_ep/harrier_mix_2026_08_18.py:" in shown.output
    assert "+ _MIXTURE_SWITCH_FRACTION: added 0.27674496670091814" in shown.output


def _verbatim(excerpt: str, path: str) -> str:
    """A block the excerpt file marks ``(verbatim)`` for ``path``: the module's real lines."""
    match = re.search(
        rf"# --- {re.escape(path)} @ [0-9a-f]+ \(verbatim\) ---\n(.*?)\n\n", excerpt, re.S
    )
    assert match is not None, path
    return match.group(1) + "\n"


def test_the_real_files_where_they_are_at_hand(
    shared: Path, tmp_path: Path, prov: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = shared / "marin" / "marin"
    excerpt = (real / "launch_scaling_ladder.excerpt.txt").read_text()
    hero = fixtures.LAUNCHER_DIR
    first = {
        f"{hero}/harrier_mix_2026_08_18.json": (real / "harrier_mix_2026_08_18.json").read_bytes(),
        f"{hero}/current_run.py": _verbatim(excerpt, f"{hero}/current_run.py").encode(),
    }
    second = {
        **first,
        f"{hero}/harrier_mix_schedule.py": _verbatim(
            excerpt, f"{hero}/harrier_mix_schedule.py"
        ).encode(),
        f"{hero}/best_mixture_996f489106c7b922.json": (
            real / "best_mixture_996f489106c7b922.json"
        ).read_bytes(),
    }
    repo = GitRepo(tmp_path / "marin")
    folder = _project(tmp_path, repo, (hero,))
    monkeypatch.chdir(folder)
    for label, files in (("m1", first), ("m2", second)):
        _write_tree(repo, files)
        assert prov("snapshot", "--label", label, "--no-sign").exit_code == 0
    mix = f"captures['launcher'].documents['{hero}/harrier_mix_2026_08_18.json']"
    schedule = f"{CODE}['{hero}/harrier_mix_schedule.py']"
    claims = folder / "claims.toml"
    claims.write_text(f"""
[[claims]]
name = "the JSON's phase budgets"
claimed = "18.75T"
derived = "sum({mix}.phase_budgets)"

[[claims]]
name = "200 cells, both phases a simplex"
claimed = true
derived = '''len({mix}.phase0_weights) == 200 and abs(sum({mix}.phase0_weights) - 1) < 1e-9
             and abs(sum({mix}.phase1_weights) - 1) < 1e-9'''

[[claims]]
name = "the schedule's TOTAL_TOKENS"
claimed = "18.75T"
derived = "{schedule}.TOTAL_TOKENS"

[[claims]]
name = "the switch after step 108,000"
claimed = 108000
derived = "ceil(390251 * {schedule}.MIXTURE_SWITCH_FRACTION / 48) * 48"

[[claims]]
name = "the current run"
claimed = "hero-main-step121638"
derived = "{CODE}['{hero}/current_run.py'].CURRENT_HERO_RUN_ID"
""")
    results = _results(prov, folder, claims, "m2")
    assert {name: r["status"] for name, r in results.items()} == dict.fromkeys(results, "pass")
    early = _results(prov, folder, claims, "m1")
    assert "has no stored file" in early["the schedule's TOTAL_TOKENS"]["error"]
