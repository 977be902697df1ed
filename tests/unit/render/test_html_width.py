"""The claims table of the HTML pages fits a 1,400 px window, 40-character shas and all.

Before: a claim whose published and derived values were commit shas pushed the verdict column
out of the window (horizontal scrolling). Headless Chromium lays the real page out; a probe
script (the page itself has none, and its policy forbids one: a copy without the policy runs
it) writes the widths it measured into the title, which `--dump-dom` returns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests import marin_fixture as marin
from tests.browser import chromium, needs_chromium

SHA_CLAIMS = f"""\
[[claims]]
name = "launcher commit of the hero run, as pinned in the W&B config and the tracker issue"
claimed = "{marin.M1_COMMIT}"
source = "tracker issue #8435, pinned launcher commit {marin.M2_COMMIT}"
derived = "captures['launcher'].commit"

[[claims]]
name = "the second milestone's commit"
claimed = "{marin.M2_COMMIT}"
source = "announcement"
derived = "captures['launcher'].commit"
"""

PROBE = """<script>
const box = (e) => e.getBoundingClientRect();
const cells = [...document.querySelectorAll('table')].map((t) => box(t).right);
document.title = JSON.stringify({
  viewport: document.documentElement.clientWidth,
  scroll: document.documentElement.scrollWidth,
  tables: cells,
});
</script>"""


def measure(markup: str, folder: Path, width: int) -> dict[str, object]:
    page = folder / "probe.html"
    page.write_text(
        markup.replace("Content-Security-Policy", "X-Not-A-Policy").replace(
            "</body>", PROBE + "</body>"
        ),
        encoding="utf-8",
    )
    dom = chromium(
        folder / "profile",
        f"--window-size={width},900",
        "--hide-scrollbars",
        "--virtual-time-budget=2000",
        "--dump-dom",
        page.as_uri(),
    ).stdout
    found = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert found, dom[:500]
    measured: dict[str, object] = json.loads(found.group(1).replace("&quot;", '"'))
    return measured


@needs_chromium
@pytest.mark.parametrize("fmt_args", [["check"], ["report"]])
def test_the_claims_table_fits_1400_px(
    prov: Callable[..., Result], tmp_path: Path, fmt_args: list[str]
) -> None:
    milestones = marin.build(tmp_path / "marin")
    claims = tmp_path / "claims.toml"
    claims.write_text(SHA_CLAIMS)
    store = ["--store", str(milestones.store.root)]
    if fmt_args == ["check"]:
        result = prov("check", "--claims", str(claims), "m1", *store, "--format", "html")
        assert result.exit_code == 1, result.output  # one of the two claims fails at m1
    else:
        out = str(tmp_path / "r.html")
        result = prov(
            *fmt_args, "m1", "m2", "--claims", str(claims), *store, "--format", "html", "-o", out
        )
        assert result.exit_code == 0, result.output
    markup = result.output if fmt_args == ["check"] else (tmp_path / "r.html").read_text()
    assert marin.M1_COMMIT in markup
    measured = measure(markup, tmp_path, 1400)
    viewport = measured["viewport"]
    assert isinstance(viewport, int) and viewport >= 1300, measured
    scroll = measured["scroll"]
    assert isinstance(scroll, int) and scroll <= viewport, f"the page scrolls sideways: {measured}"
    tables = measured["tables"]
    assert isinstance(tables, list) and tables
    assert all(right <= viewport for right in tables), measured
