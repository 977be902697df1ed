"""The README's first command: the embedded Marin demo, end to end, offline.

It runs as a user runs it (a subprocess), then everything it wrote is verified again by separate
`prov` invocations, and the HTML report is opened in headless Chromium.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import site_checks
from tests.browser import ARTIFACTS, chromium, needs_chromium
from tests.conftest import ROOT

DEMO = ROOT / "examples" / "marin" / "demo.py"
MILESTONES = ("2026-08-23", "2026-09-15")


def run_demo(out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(DEMO), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> str:
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stdout + stderr
    return stdout


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("demo") / "marin-demo"
    return out, finish(run_demo(out))


def prov(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "provenance", *args], cwd=out, capture_output=True, text=True
    )


def test_the_story_names_what_the_evidence_shows(demo: tuple[Path, str]) -> None:
    _, story = demo
    # 18.75T is the mixture's budget (the captured Python and JSON say so), not steps x batch x seq
    assert "it equals the launcher's TOTAL_TOKENS = PRETRAIN_TOKENS + COOLDOWN_TOKENS" in story
    assert "from the captured Python (holds), and the mixture file's phase budgets (holds)" in story
    assert "18,005,144,633,344 tokens, a gap of -744,855,366,656 (-3.97%). Claim FAILS" in story
    assert "the job summary says 390,139, the config 390,251 (+112)" in story
    assert "791 tokens per active parameter, gives 390,251 (holds)" in story
    assert "The cooldown switch at step 312,192 is derived from the captured" in story
    assert "390,139 steps would switch at 312,096 (FAILS)" in story
    assert "on 2026-08-23 the launcher has no mid-run switch (FAILS)" in story
    assert (
        "on 2026-09-15 it switches at step 108,000, derived from _MIXTURE_SWITCH_FRACTION" in story
    )
    assert "answered 403 AccessDenied" in story
    assert "store-artifact: ~ status: 403 -> 200" in story
    assert "harrier_mix_2026_08_18.py: + _MIXTURE_SWITCH_FRACTION: 0.27674496670091814" in story
    assert 'CURRENT_HERO_RUN_ID: "hero-12d8b6f0-dee637" -> "hero-mix-996f4891-step108k"' in story
    assert "10 claims hold and 4 fail at 2026-09-15 (8 and 6 at 2026-08-23)" in story


def test_everything_it_wrote_verifies_again(demo: tuple[Path, str]) -> None:
    out, _ = demo
    for label in MILESTONES:
        checked = prov(
            out,
            "verify",
            f"attestations/{label}.intoto.jsonl",
            "--key",
            "keys/demo.pub",
            "--store",
            ".prov",
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "[ok  ] 6. blobs" in checked.stdout
    packed = prov(
        out, "verify", "--pack", f"evidence-{MILESTONES[1]}.tar", "--key", "keys/demo.pub"
    )
    assert packed.returncode == 0, packed.stdout + packed.stderr
    assert prov(out, "fsck").returncode == 0


@needs_chromium
def test_the_html_report_shows_claims_and_diff(demo: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = demo
    report = out / "report.html"
    dom = chromium(tmp_path / "profile", "--dump-dom", report.as_uri()).stdout
    for text in (
        "total training tokens",
        "18,005,144,633,344",
        "AccessDenied",
        "_MIXTURE_SWITCH_FRACTION",
        "403",
        "What changed: 2026-08-23 -&gt; 2026-09-15",
    ):
        assert text in dom, text
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "marin-demo-report.png"
    chromium(
        tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,2400", report.as_uri()
    )
    assert shot.stat().st_size > 10_000


def test_runs_twice_in_a_row_and_beside_another_clone(tmp_path: Path) -> None:
    here, there = tmp_path / "a" / "marin-demo", tmp_path / "b" / "marin-demo"
    finish(run_demo(here))
    again, beside = run_demo(here), run_demo(there)  # the same folder again, and another at once
    assert "10 claims hold and 4 fail" in finish(again)
    assert "10 claims hold and 4 fail" in finish(beside)


def test_refuses_to_wipe_a_folder_it_did_not_make(tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    process = run_demo(precious)
    process.communicate(timeout=60)
    assert process.returncode != 0
    assert (precious / "thesis.tex").read_text() == "years of work"


@pytest.mark.online
def test_the_same_prov_toml_against_the_real_internet(tmp_path: Path) -> None:
    """The documented one-liner: the real sources (skipped by default; needs the internet)."""
    config = tmp_path / "prov.toml"
    config.write_text((ROOT / "examples" / "marin" / "prov.toml").read_text())
    taken = prov(tmp_path, "snapshot", "-c", "prov.toml", "--label", "online", "--no-sign")
    assert taken.returncode in (0, 4), taken.stdout + taken.stderr  # 4: a source refused us
    shown = prov(tmp_path, "show", "attestations/online.intoto.jsonl")
    assert "commit: 12d8b6f09f96ad4f0277445765c1a00dbc81d5be" in shown.stdout


def test_the_report_renders_in_every_format(demo: tuple[Path, str]) -> None:
    from provenance.render.report import Format

    out, _ = demo
    claims = str(ROOT / "examples" / "marin" / "claims.toml")
    for fmt in Format:
        page = prov(out, "report", *MILESTONES, "--claims", claims, "--format", fmt.value)
        assert page.returncode == 0, page.stderr
        assert "total training tokens" in page.stdout
        assert "_MIXTURE_SWITCH_FRACTION" in page.stdout


def test_the_demo_site_links_downloads_and_verdicts(demo: tuple[Path, str]) -> None:
    out, story = demo
    site = out / "site"
    assert str(site / "index.html") in story
    document = site_checks.check_downloads(site)
    assert [m["label"] for m in document["milestones"]] == list(MILESTONES)
    assert all(m["verification"]["verified"] for m in document["milestones"])
    claims = str(ROOT / "examples" / "marin" / "claims.toml")
    words = {"pass": "holds", "fail": "fails", "error": "gap"}
    for milestone in document["milestones"]:  # the site says what `prov check` says
        checked = prov(out, "check", "--claims", claims, milestone["label"], "--format", "json")
        expected = {r["name"]: words[r["status"]] for r in json.loads(checked.stdout)["results"]}
        assert {c["name"]: c["verdict"] for c in milestone["claims"]["results"]} == expected
    assert site_checks.check_links(site) > 50
    site_checks.check_self_contained(site)
    site_checks.check_structure(site)


@needs_chromium
def test_the_demo_site_in_chromium(demo: tuple[Path, str], tmp_path: Path) -> None:
    """Every page at 375 and 1,400 px: every milestone, claim verdict and diff summary shown,
    nothing wider than the window, no request but file://; screenshots in tests/artifacts/."""
    out, _ = demo
    seen = site_checks.check_in_chromium(out / "site", tmp_path / "profile", "marin-demo-site")
    assert seen == {"375": 4, "1400": 4}
