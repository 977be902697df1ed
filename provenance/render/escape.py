"""Captured strings in output: escaped so that none can act on the terminal, Markdown or HTML.

Everything prov prints about a snapshot (file names, keys, header values, notes) was written by
someone else. A file name may hold terminal escape sequences, a JSON key backticks and
``<img>``; the GitHub Action writes ``--format markdown`` into job summaries. So:

* ``text``: control characters (C0, DEL, C1) and the bidirectional overrides (Trojan Source)
  become visible escapes (``\\x1b``, ``\\u202e``); a line break too, so one value stays on one
  line. ``block`` keeps line breaks (for prose that has several lines).
* ``md_text``: every character that can open inline markup backslash-escaped (CommonMark lets
  any ASCII punctuation be), so no captured string opens emphasis, a code span, a link, an
  image, a tag, an entity, a strike-through or a table cell.
* ``md_code``: a code span whose fence is longer than any run of backticks inside, padded,
  with ``|`` escaped (GitHub tables split on it even in code spans) and lines joined.
* ``md_fence``: a fenced block whose fence no line of the content can close.
* ``html``: ``html.escape`` with quotes, after ``text``.
"""

from __future__ import annotations

import html as _html
import re

__all__ = ["block", "html", "html_block", "md_code", "md_fence", "md_text", "text"]

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_CONTROL_BUT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_BIDI}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_MARKUP = re.compile(r"([\\`*_\[\]<&|~!])")
_BACKTICKS = re.compile(r"`+")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def text(value: object) -> str:
    """One line of terminal text: every control character shown as an escape."""
    return _CONTROL.sub(_visible, str(value))


def block(value: object) -> str:
    """Terminal text that may span lines: like ``text`` but line breaks are kept."""
    return _CONTROL_BUT_NEWLINE.sub(_visible, str(value))


def md_text(value: object) -> str:
    """Markdown inline text that renders as exactly these characters, one line."""
    return _MARKUP.sub(r"\\\1", text(value))


def md_code(value: object) -> str:
    """A Markdown code span holding ``value``; safe in a table cell too."""
    content = text(value).replace("|", "\\|")
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each end when both are present; a space keeps a leading
    # or trailing backtick from joining the fence.
    return (
        f"{fence} {content} {fence}"
        if longest or content[:1] == " "
        else f"{fence}{content}{fence}"
    )


def md_fence(content: str, info: str = "") -> list[str]:
    """The lines of a fenced code block holding ``content`` (lines kept, controls escaped)."""
    body = block(content)
    longest = max((len(run) for run in _FENCE_LINE.findall(body) if run[0] == "`"), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *body.splitlines(), fence]


def html(value: object) -> str:
    """HTML text or attribute value: no tag, entity or attribute can be opened."""
    return _html.escape(text(value), quote=True)


def html_block(value: object) -> str:
    """HTML text for a ``<pre>``: like ``html`` but line breaks are kept."""
    return _html.escape(block(value), quote=True)
