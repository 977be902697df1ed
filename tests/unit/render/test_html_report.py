"""The HTML diff page, opened in headless Chromium with no network: it renders the changes.

Chromium is a Debian package (`apt-get install chromium`, done by .ci/run); without it these tests
skip. The screenshot is kept under tests/artifacts/ (git-ignored) for a human to look at.
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import Result

from tests import marin_fixture as marin
from tests.browser import ARTIFACTS, chromium, needs_chromium


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`prov diff m1 m2 --format html`, written to a file."""
    from click.testing import CliRunner

    from provenance.cli import cli

    milestones = marin.build(tmp_path_factory.mktemp("marin"))
    result = CliRunner().invoke(
        cli, ["diff", "m1", "m2", "--store", str(milestones.store.root), "--format", "html"]
    )
    assert result.exit_code == 1, result.output
    target = tmp_path_factory.mktemp("html") / "diff-m1-m2.html"
    target.write_text(result.stdout, encoding="utf-8")
    return target


class _Text(HTMLParser):
    """The visible text of a page, and every attribute that could make it fetch something."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.fetching: list[tuple[str, str, str]] = []
        self.scripts = 0
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "title"):
            self._skip += 1
        if tag == "script":
            self.scripts += 1
        for name, value in attrs:
            if name in ("src", "href", "srcset", "action", "poster", "data") and value:
                self.fetching.append((tag, name, value))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "title"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def parse(markup: str) -> _Text:
    parser = _Text()
    parser.feed(markup)
    return parser


def test_the_page_is_self_contained(page: Path) -> None:
    markup = page.read_text()
    parsed = parse(markup)
    assert parsed.fetching == []
    assert parsed.scripts == 0
    assert "url(" not in markup and "@import" not in markup
    assert "Content-Security-Policy\" content=\"default-src 'none'" in markup


@needs_chromium
def test_chromium_renders_the_changes(page: Path, tmp_path: Path) -> None:
    offline = ("--proxy-server=http://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND")
    dom = chromium(tmp_path / "profile", *offline, "--dump-dom", page.as_uri()).stdout
    text = " ".join(parse(dom).text.split())
    for expected in (
        f"commit: {marin.M1_COMMIT} -> {marin.M2_COMMIT}",
        f'run.id: "{marin.M1_RUN}" -> "{marin.M2_RUN}"',
        "~ status: 403 -> 200",
        "+ phases: added [3 items]",
        "+ _MIXTURE_SWITCH_FRACTION: added 0.27674496670091814",
        "volatile (not counted as differences)",
        "3 of 4 source(s) changed",
    ):
        assert expected in text, expected

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "diff-m1-m2.png"
    shot.unlink(missing_ok=True)
    chromium(
        tmp_path / "profile",
        *offline,
        "--window-size=1280,2200",
        "--hide-scrollbars",
        f"--screenshot={shot}",
        page.as_uri(),
    )
    width, height, distinct = png_summary(shot.read_bytes())
    assert (width, height) == (1280, 2200)
    assert distinct > 8, "the screenshot is blank"


def png_summary(data: bytes) -> tuple[int, int, int]:
    """Width, height and a count of distinct decoded bytes (a blank page has very few)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, width, height = 8, b"", 0, 0
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


@pytest.fixture
def counting_server() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 that records every request it gets."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


@needs_chromium
def test_the_page_policy_blocks_any_fetch(
    page: Path, tmp_path: Path, counting_server: tuple[str, list[str]]
) -> None:
    """Were a value in the page ever to smuggle in markup, the page's policy stops the fetch."""
    base, hits = counting_server
    markup = page.read_text()
    probe = (
        f'<img src="{base}/with-policy.png"><link rel="stylesheet" href="{base}/with-policy.css">'
    )
    guarded = tmp_path / "guarded.html"
    guarded.write_text(markup.replace("<body>", "<body>" + probe, 1))
    chromium(tmp_path / "p1", "--virtual-time-budget=2000", "--dump-dom", guarded.as_uri())
    assert hits == []
    # the control: the same probe without the policy does reach the server
    unguarded = tmp_path / "unguarded.html"
    unguarded.write_text(
        guarded.read_text()
        .replace("Content-Security-Policy", "X-Not-A-Policy")
        .replace("with-policy", "without-policy")
    )
    chromium(tmp_path / "p2", "--virtual-time-budget=2000", "--dump-dom", unguarded.as_uri())
    assert any("without-policy" in hit for hit in hits)


def test_claims_and_log_pages_are_self_contained(
    prov: Callable[..., Result], tmp_path: Path
) -> None:
    milestones = marin.build(tmp_path / "marin")
    store = str(milestones.store.root)
    claims = prov(
        "check",
        "--claims",
        str(marin.CLAIMS),
        "m1",
        "--store",
        store,
        "--format",
        "html",
    )
    log = prov("log", "--store", store, "--format", "html")
    for markup in (claims.stdout, log.stdout):
        parsed = parse(markup)
        assert parsed.fetching == [] and parsed.scripts == 0
    assert "18,005,144,633,344" in parse(claims.stdout).text
    assert "changed since m1" in parse(log.stdout).text
