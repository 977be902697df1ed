"""Checks of a built provenance site, shared by the site tests and the demo test.

Each reads the site as a visitor or a downloader would: the links in the pages, the files and
their sha256, and (with Chromium) the rendered pages at a phone's and a desktop's width.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from tests.browser import ARTIFACTS, DevTools

WIDTHS = (375, 1400)


class Links(HTMLParser):
    """Every URL-bearing attribute, every id, every script, style attribute and style block."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str]] = []
        self.ids: set[str] = set()
        self.scripts = 0
        self.style_attributes = 0
        self.styles: list[str] = []
        self.csp: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "style":
            self._in_style = True
            self.styles.append("")
        if tag == "meta" and (found.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp.append(found.get("content") or "")
        for name, value in attrs:
            if name in ("href", "src", "srcset", "action", "poster", "data", "xlink:href"):
                self.urls.append((tag, value or ""))
            if name == "id" and value:
                self.ids.add(value)
            if name == "style":
                self.style_attributes += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles[-1] += data


def parse(path: Path) -> Links:
    parser = Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def check_links(site: Path) -> int:
    """Every link is relative and resolves to a file in the site (and its fragment to an id)."""
    checked = 0
    for page in pages(site):
        for tag, url in parse(page).urls:
            parts = urlsplit(url)
            assert not parts.scheme and not parts.netloc, f"{page}: {tag} leaves the site: {url}"
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            assert target.is_relative_to(site.resolve()), f"{page}: {url} is outside the site"
            assert target.is_file(), f"{page}: {url} resolves to no file"
            if parts.fragment and target.suffix == ".html":
                assert parts.fragment in parse(target).ids, f"{page}: no #{parts.fragment}"
            checked += 1
    return checked


def check_self_contained(site: Path) -> None:
    """No script, no inline style attribute, and the one style block allowed by its hash."""
    for page in pages(site):
        parsed = parse(page)
        markup = page.read_text(encoding="utf-8")
        assert parsed.scripts == 0, page
        assert parsed.style_attributes == 0, page
        assert "url(" not in markup and "@import" not in markup, page
        assert len(parsed.csp) == 1, page
        policy = parsed.csp[0]
        assert policy.startswith("default-src 'none'"), policy
        assert "script-src" not in policy and "unsafe" not in policy, policy
        for style in parsed.styles:
            digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
            assert f"'sha256-{digest}'" in policy, f"{page}: a style block its policy refuses"


def check_downloads(site: Path) -> dict[str, Any]:
    """Every download in site.json exists with its sha256 and size; SHA256SUMS says the same."""
    document: dict[str, Any] = json.loads((site / "site.json").read_text())
    listed = {}
    for download in document["downloads"]:
        path = site / download["path"]
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == download["sha256"], download["path"]
        assert len(data) == download["size"], download["path"]
        listed[path.name] = download["sha256"]
    on_disk = {p.name for p in (site / "files").iterdir()} - {"SHA256SUMS"}
    assert on_disk == set(listed), on_disk ^ set(listed)
    sums = (site / "files" / "SHA256SUMS").read_text().splitlines()
    assert dict(reversed(line.split("  ", 1)) for line in sums) == listed
    return document


def expected_texts(document: dict[str, Any]) -> list[str]:
    """What a visitor must see: each milestone and its verdict, each claim verdict, each diff."""
    texts = []
    for milestone in document["milestones"]:
        verdict = "verified" if milestone["verification"]["verified"] else "FAILED verification"
        texts += [milestone["label"], verdict]
        for claim in (milestone.get("claims") or {}).get("results", []):
            texts.append(f"{claim['verdict']} {claim['name']}")
    for interval in document["intervals"]:
        texts.append(f"{interval['a']} → {interval['b']}: {interval['summary']}")
    return texts


def check_in_chromium(site: Path, profile: Path, name: str) -> dict[str, int]:
    """Open every page at 375 px and 1,400 px: text present, no overflow, no request off file://;
    then the first page in the light and the dark scheme (prefers-color-scheme).

    Returns the page count per width; screenshots of the first page and the milestone pages go
    to tests/artifacts/.
    """
    document = json.loads((site / "site.json").read_text())
    ARTIFACTS.mkdir(exist_ok=True)
    offline = ("--proxy-server=http://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND")
    browser = DevTools(profile, *offline)
    seen: dict[str, int] = {}
    try:
        for width in WIDTHS:
            for page in pages(site):
                browser.open(page.as_uri(), width)
                left = [u for u in browser.requests() if not u.startswith("file://")]
                assert left == [], f"{page} at {width} px asked for {left}"
                overflow = browser.evaluate(
                    "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
                )
                assert isinstance(overflow, list)
                scroll, client = overflow
                assert scroll <= client, f"{page.name} overflows at {width} px: {scroll} > {client}"
                if page.name == "index.html":
                    text = browser.evaluate("document.body.innerText")
                    assert isinstance(text, str)
                    flat = " ".join(text.split())
                    for expected in expected_texts(document):
                        assert " ".join(expected.split()) in flat, (width, expected)
                    browser.screenshot(ARTIFACTS / f"{name}-index-{width}.png")
                elif page.parent.name == "m":
                    stem = re.sub(r"[^A-Za-z0-9._-]", "_", page.stem)
                    browser.screenshot(ARTIFACTS / f"{name}-{stem}-{width}.png")
                seen[str(width)] = seen.get(str(width), 0) + 1
        colours = {}
        for scheme in ("light", "dark"):
            browser.page(
                "Emulation.setEmulatedMedia",
                features=[{"name": "prefers-color-scheme", "value": scheme}],
            )
            browser.open((site / "index.html").as_uri(), WIDTHS[-1])
            colours[scheme] = browser.evaluate("getComputedStyle(document.body).backgroundColor")
            browser.screenshot(ARTIFACTS / f"{name}-index-{scheme}.png")
        assert colours == {"light": "rgb(255, 255, 255)", "dark": "rgb(13, 17, 23)"}, colours
    finally:
        browser.close()
    return seen


class _Outline(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.headings: list[int] = []
        self.landmarks: list[str] = []
        self.lang: str | None = None
        self.charts = 0
        self.titled_charts = 0
        self.tables = 0
        self.headed_tables = 0
        self._stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "html":
            self.lang = found.get("lang")
        if re.fullmatch(r"h[1-6]", tag):
            self.headings.append(int(tag[1]))
        if tag in ("header", "nav", "main", "footer"):
            self.landmarks.append(tag)
        if tag == "svg":
            self.charts += 1
            self.titled_charts += bool(found.get("role") == "img" and found.get("aria-labelledby"))
        if tag == "table":
            self.tables += 1
            self._stack.append("table")
        if tag == "th" and "table" in self._stack:
            self.headed_tables += 1
            self._stack.remove("table")


def check_structure(site: Path) -> None:
    """Semantic HTML: a language, landmarks, one h1 and no skipped heading level, every chart
    an image with a title and a description, every table with header cells."""
    for page in pages(site):
        outline = _Outline()
        outline.feed(page.read_text(encoding="utf-8"))
        assert outline.lang == "en", page
        assert outline.landmarks == ["header", "nav", "main", "footer"], (page, outline.landmarks)
        assert outline.headings.count(1) == 1 and outline.headings[0] == 1, page
        for before, after in zip(outline.headings, outline.headings[1:], strict=False):
            assert after <= before + 1, f"{page}: h{before} then h{after}"
        assert outline.charts == outline.titled_charts, page
        assert outline.tables == outline.headed_tables, page
