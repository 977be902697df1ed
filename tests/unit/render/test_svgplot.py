"""The site's inline SVG charts: well-formed, escaped, legible when milestones are many."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from provenance.render import svgplot

SVG = "{http://www.w3.org/2000/svg}"


def _parse(markup: str) -> ET.Element:
    return ET.fromstring(markup.replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1))


def test_a_claim_chart_is_well_formed_and_escapes_names() -> None:
    points = [
        svgplot.ClaimPoint("m1", 18.75e12, 18_005_144_633_344.0, "fails"),
        svgplot.ClaimPoint("<b>m2</b>", 18.75e12, 18_005_144_633_344.0, "fails"),
    ]
    markup = svgplot.claim_chart("tokens <script>alert(1)</script>", points, "c0")
    assert "<script>" not in markup and "<b>" not in markup
    root = _parse(markup)
    assert root.get("role") == "img" and root.get("aria-labelledby") == "c0-t c0-d"
    dots = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "pt fails"]
    assert len(dots) == 2 + 1  # one per milestone, one in the legend
    assert "18.01T" in markup or "18T" in markup  # the derived value, in words, in the dot's title


def test_many_milestones_keep_their_names_legible() -> None:
    points = [svgplot.ClaimPoint(f"m{i:02d}", 390_251.0, 390_139.0 + i, "holds") for i in range(30)]
    root = _parse(svgplot.claim_chart("steps", points, "c1"))
    names = [t.text for t in root.iter(f"{SVG}text") if t.text and t.text.startswith("m")]
    assert 2 <= len(names) <= 5 and names[-1] == "m29"
    ticks = [t.text for t in root.iter(f"{SVG}text") if t.text and t.text.endswith("k")]
    assert len(set(ticks)) == len(ticks) == 3  # a narrow range still reads as three values


def test_the_changes_grid_shows_every_count() -> None:
    counts = {("launcher", "a → b"): 14, ("hero-run", "a → b"): 0}
    root = _parse(svgplot.changes_chart(["launcher", "hero-run"], ["a → b"], counts, "g"))
    shown = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "count"]
    assert shown == ["14", "0"]
    levels = [r.get("class") for r in root.iter(f"{SVG}rect")]
    assert levels == ["heat h4", "heat h0"]
