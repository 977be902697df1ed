"""Diffs a person can read at any size: the summary first, every differing element told apart,
caps that say what they left out; `prov diff --stat / --source / --path`; `prov show` naming the
items of a list."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from provenance.attest import keys
from provenance.compare.diff import Diff, compare_snapshots
from provenance.model import Snapshot
from provenance.render.formats import Format
from provenance.render.report import render_diff
from provenance.store.objects import Store
from tests import marin_fixture as marin

HUMAN = (Format.TEXT, Format.MARKDOWN, Format.HTML)
BASE = "https://huggingface.co/datasets/allenai/olmo-mix-1124/resolve/{rev}/data/shard-{i:05d}.jsonl.zst"
OLD_REV, NEW_REV = "main", "9f3c2a1e5b7d40c1"


def _snapshot(store: Store, label: str, data: dict[str, Any]) -> Snapshot:
    capture = marin.make_capture(
        store, "eval-data", "wandb", {"run": "allenai/olmo/eval"}, data, [],
        started="2026-08-24T15:00:00Z",
    )  # fmt: skip
    return Snapshot(label=label, created="2026-08-24T15:00:00Z", captures=(capture,))


def _diff(tmp_path: Path, a: dict[str, Any], b: dict[str, Any]) -> Diff:
    store = Store(tmp_path / ".prov").init()
    return compare_snapshots(_snapshot(store, "a", a), _snapshot(store, "b", b))


def _plain(page: str) -> str:
    """A page's text as a reader sees it: HTML entities and Markdown escapes undone."""
    return html.unescape(page).replace("\\", "")


def _urls(rev: str, changed: range, count: int = 700) -> list[str]:
    return [BASE.format(rev=rev if i in changed else OLD_REV, i=i) for i in range(count)]


@pytest.fixture(scope="module")
def list_diff(tmp_path_factory: pytest.TempPathFactory) -> Diff:
    """A 700-entry list of URLs of which 692 changed in the middle (a new revision)."""
    changed = range(8, 700)
    a = {"urls": _urls(OLD_REV, changed), "steps": 390_139}
    b = {"urls": _urls(NEW_REV, changed), "steps": 390_251}
    return _diff(tmp_path_factory.mktemp("list"), a, b)


@pytest.mark.parametrize("fmt", HUMAN, ids=lambda f: f.value)
def test_a_700_element_list_change_shows_every_element_apart(list_diff: Diff, fmt: Format) -> None:
    page = _plain(render_diff(list_diff, fmt))
    summary = page.index("1 of 1 source(s) changed")
    assert summary < page.index("shard-")  # the summary first
    assert "692 replaced (removed -> added, side by side)" in page
    shown = [line for line in page.splitlines() if "shard-" in line]
    assert len(shown) == 692 and len(set(shown)) == len(shown)  # none alike
    pattern = r"resolve/([0-9a-z]+)/data/shard-(\d{5})\.jsonl\.zst"
    told = [re.findall(pattern, line) for line in shown]
    # each line names the old and the new revision of one shard: what differs is never cut away
    assert sorted(told) == [[(OLD_REV, f"{i:05d}"), (NEW_REV, f"{i:05d}")] for i in range(8, 700)]
    assert all(len(line) < 200 for line in shown)


@pytest.mark.parametrize("fmt", HUMAN, ids=lambda f: f.value)
def test_members_added_and_removed_are_listed_one_by_one(tmp_path: Path, fmt: Format) -> None:
    a = {"paths": [f"experiments/grug/moe_hero_ep/run_{i:04d}/{'x' * 90}.json" for i in range(300)]}
    b = {
        "paths": [
            f"experiments/grug/moe_hero_ep/run_{i:04d}/{'x' * 90}.json" for i in range(100, 500)
        ]
    }
    page = _plain(render_diff(_diff(tmp_path, a, b), fmt))
    assert "200 added, 100 removed" in page
    shown = [line for line in page.splitlines() if "run_0" in line]
    assert len(shown) == 300 and len(set(shown)) == 300
    numbers = {int(n) for line in shown for n in re.findall(r"run_(\d{4})", line)}
    assert numbers == set(range(100)) | set(range(300, 500))


@pytest.fixture(scope="module")
def big_diff(tmp_path_factory: pytest.TempPathFactory) -> Diff:
    """5,000 changed scores, as a year of an evaluation harness's results would give."""
    a = {"results": {f"task_{i:04d}": {"acc": i / 10_000} for i in range(5_000)}}
    b = {"results": {f"task_{i:04d}": {"acc": i / 10_000 + 0.5} for i in range(5_000)}}
    return _diff(tmp_path_factory.mktemp("big"), a, b)


@pytest.mark.parametrize("fmt", HUMAN, ids=lambda f: f.value)
def test_a_5000_change_diff_puts_the_summary_first_and_caps_the_rest(
    big_diff: Diff, fmt: Format
) -> None:
    assert big_diff.counts.changes == 5_000
    page = _plain(render_diff(big_diff, fmt, max_lines=400))
    first_change = page.index("task_0000")
    assert page.index("1 of 1 source(s) changed: 5000 change(s)") < first_change
    assert page.index("eval-data [wandb]: 5000 change(s)") < first_change
    shown = re.findall(r"results\.(task_\d{4})\.acc", page)
    assert 300 <= len(shown) <= 400 and len(set(shown)) == len(shown)
    assert f"{5_000 - len(shown):,} more change(s) (use --format json or --path)" in page
    assert len(page.splitlines()) < 600
    uncapped = render_diff(big_diff, fmt, max_lines=None)
    assert len(set(re.findall(r"results\.(task_\d{4})\.acc", uncapped))) == 5_000


def test_a_long_string_is_cut_around_what_changed(tmp_path: Path) -> None:
    old = "s3://marin-us-east-02a/marin/datakit/" + "x" * 200 + "/store_81e7e39a/part-0.zst"
    new = old.replace("store_81e7e39a", "store_4d2e363d")
    page = render_diff(_diff(tmp_path, {"uri": old}, {"uri": new}), Format.TEXT)
    line = next(line for line in page.splitlines() if "~ uri:" in line)
    assert "store_81e7e39a" in line and "store_4d2e363d" in line and len(line) < 220


def test_the_order_of_a_list_moving_names_what_moved(tmp_path: Path) -> None:
    items = [f"c{i:02d}q{q}" for i in range(20) for q in range(5)]
    moved = items[:50] + items[51:70] + [items[50]] + items[70:]
    page = render_diff(_diff(tmp_path, {"cells": items}, {"cells": moved}), Format.TEXT)
    assert "~ cells: same items, new order (1 moved)" in page
    assert "~ moved to [69]: c10q0" in page


@pytest.fixture(scope="module")
def milestones(tmp_path_factory: pytest.TempPathFactory) -> marin.Marin:
    return marin.build(tmp_path_factory.mktemp("marin"))


def test_stat_source_and_path(milestones: marin.Marin, prov: Callable[..., Result]) -> None:
    store = ("--store", str(milestones.store.root))
    stat = prov("diff", "m1", "m2", *store, "--stat")
    assert stat.exit_code == 1
    assert (
        "launcher [git]: files 2 added, 4 changed; 3 constant(s) changed; 11 change(s)"
        in stat.stdout
    )
    assert "unchanged: token-counts" in stat.stdout
    assert "~ commit:" not in stat.stdout  # the summary alone

    one = prov("diff", "m1", "m2", *store, "--source", "harrier-*")
    assert one.exit_code == 1
    assert "1 of 1 source(s) changed" in one.stdout and "launcher" not in one.stdout

    python = prov("diff", "m1", "m2", *store, "--path", "*.py")
    assert "constants in experiments/grug/moe_hero_ep/current_run.py:" in python.stdout
    assert f"in {marin.MIX_PATH}:" not in python.stdout
    assert "hero-run" not in python.stdout.split("unchanged:")[0]

    same = prov("diff", "m1", "m2", *store, "--source", "token-counts")
    assert same.exit_code == 0  # the narrowed diff is what the exit code speaks of


def test_show_names_the_items_of_a_list(
    milestones: marin.Marin, prov: Callable[..., Result], tmp_path: Path
) -> None:
    shown = prov("show", "m2", "--store", str(milestones.store.root))
    assert shown.exit_code == 0, shown.output
    assert "  files: " in shown.stdout and " item(s):" in shown.stdout
    for path in marin.fixtures.launcher_files(2):
        if path.startswith(marin.LAUNCHER_DIR):
            assert f"      {path} (" in shown.stdout, path

    store = Store(tmp_path / ".prov").init()
    missing = [f"experiments/grug/moe_hero_ep/ablation_{i:03d}.py" for i in range(50)]
    snapshot = _snapshot(store, "s", {"missing_paths": missing})
    key, _ = keys.generate(tmp_path, "k")
    path = marin.publish(store, snapshot, key, tmp_path / "s.intoto.jsonl")
    listed = prov("show", str(path), "--store", str(store.root)).stdout
    assert "  missing_paths: 50 item(s):" in listed
    assert all(f"ablation_{i:03d}.py" in listed for i in range(20))
    assert "ablation_020.py" not in listed
    assert "… 30 more (use --format json)" in listed


def test_the_summary_names_the_claims_the_changes_affect(
    milestones: marin.Marin, prov: Callable[..., Result]
) -> None:
    claims = marin.ROOT / "examples" / "marin" / "claims.toml"
    store = ("--store", str(milestones.store.root))
    result = prov("diff", "m1", "m2", *store, "--stat", "--claims", str(claims))
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert f"claims affected ({claims}): 1" in out
    assert "  mixture switch at step 108,000 (PR #9162): FAILS -> holds" in out
    assert '("no mid-run switch" -> 108,000)' in out
    shown = prov("diff", "m1", "m2", *store, "--claims", str(claims), "--format", "json")
    changed = json.loads(shown.stdout)["claims"]
    assert [(c["name"], c["status_a"], c["status_b"]) for c in changed] == [
        ("mixture switch at step 108,000 (PR #9162)", "fail", "pass")
    ]
