"""Captured strings in text, Markdown and HTML output: none can act on what displays them."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from provenance.render import escape

HOSTILE = [
    "plain",
    "\x1b]0;pwned\x07\x1b[2J",
    "a\u202eevil\u202c.py",
    "``</code><img src=x onerror=alert(1)>``",
    "`",
    " `x` ",
    "[click](https://evil.example) ![i](https://evil.example/i.png)",
    "<script>alert(1)</script> &amp; *bold* _it_ ~~s~~ | cell |",
    "line\nbreak\r\n# heading",
    "```\nfenced\n````",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_text_has_no_control_character(value: str) -> None:
    out = escape.text(value)
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in out)
    assert "\u202e" not in out
    assert "\n" not in escape.text(value) and escape.block("a\nb") == "a\nb"


@pytest.mark.parametrize("value", HOSTILE)
def test_a_code_span_holds_the_string_and_nothing_escapes_it(value: str) -> None:
    md = MarkdownIt("commonmark")
    tokens = md.parseInline(escape.md_code(value))[0].children or []
    assert [t.type for t in tokens] == ["code_inline"]
    assert tokens[0].content == escape.text(value).replace("|", "\\|")


@pytest.mark.parametrize("value", HOSTILE)
def test_markdown_text_renders_as_the_same_characters(value: str) -> None:
    md = MarkdownIt("commonmark")
    tokens = md.parseInline(escape.md_text(value))[0].children or []
    assert {t.type for t in tokens} <= {"text"}
    assert "".join(t.content for t in tokens) == escape.text(value)


def test_a_code_span_in_a_table_cell_keeps_the_table() -> None:
    row = f"| {escape.md_code('a | b')} | x |"
    tokens = MarkdownIt("commonmark").enable("table").parse(f"| f | c |\n|---|---|\n{row}\n")
    cells = [t for t in tokens if t.type == "td_open"]
    assert len(cells) == 2


def test_a_fence_no_line_of_the_content_closes() -> None:
    content = "x\n```\n````\ny"
    tokens = MarkdownIt("commonmark").parse("\n".join(escape.md_fence(content, "diff")) + "\n")
    assert [t.type for t in tokens] == ["fence"]
    assert tokens[0].content == content + "\n"


def test_html_opens_nothing() -> None:
    assert escape.html('<a href="x">\x1b') == "&lt;a href=&quot;x&quot;&gt;\\x1b"
