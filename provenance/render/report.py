"""Output of diffs, claims reports and the timeline: text, JSON, Markdown and one HTML page.

Text is for a terminal (ANSI colour only when asked, i.e. when stdout is a tty); JSON is the wire
model with its ``schema`` tag; Markdown suits release notes and PR comments; HTML is one
self-contained page (inline CSS, a Content-Security-Policy that forbids every fetch, no script).
Each diff is first turned into a neutral list of sections and rows, which the three human formats
lay out, so they always say the same thing.
"""

from __future__ import annotations

import enum
import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

from provenance.compare.claims import ClaimResult, ClaimsReport
from provenance.compare.diff import (
    CaptureDiff,
    Change,
    Diff,
    DocumentDiff,
    FileChange,
    Mover,
    NoteRef,
    SnapshotRef,
)
from provenance.compare.recheck import RecheckRef
from provenance.compare.timeline import LogItem
from provenance.compare.witness import WitnessRef
from provenance.render import escape
from provenance.store.objects import SnapshotEntry

LOG_SCHEMA = "https://prov.dev/log/v1"
MAX_ROWS = 40  # per block; the JSON output always has everything
MAX_VOLATILE = 25
MAX_MOVERS = 8
MAX_DIFF_LINES = 200


class Format(enum.StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    HTML = "html"


Tone = Literal["add", "remove", "change", "info"]

# -- formatting values ---------------------------------------------------------------------------


def _is_hex_id(value: str) -> bool:
    return len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value)


def value(item: Any, limit: int = 80) -> str:
    """A JSON value as a reader wants it: 390,139; "hero-12d8b6f0"; {3 fields}; [9 items]."""
    if item is None or isinstance(item, bool):
        return json.dumps(item)
    if isinstance(item, int):
        return f"{item:,}" if abs(item) >= 10_000 else str(item)
    if isinstance(item, float):
        return f"{item:,}" if abs(item) >= 10_000 else repr(item)
    if isinstance(item, str):
        if _is_hex_id(item) or item.startswith(("blake3:", "sha256:")):
            return item
        text = json.dumps(item, ensure_ascii=False)
        return text if len(text) <= limit else text[: limit - 4] + '..."'
    if isinstance(item, list):
        if len(item) <= 6 and all(not isinstance(v, (dict, list)) for v in item):
            text = "[" + ", ".join(value(v, 30) for v in item) + "]"
            if len(text) <= limit:
                return text
        return f"[{len(item)} items]"
    if isinstance(item, dict):
        parts = []
        for key, inner in item.items():
            if isinstance(inner, dict):
                parts.append(f"{key}: {{{len(inner)} entries}}")
            elif isinstance(inner, list):
                parts.append(f"{key}: [{len(inner)} items]")
            else:
                parts.append(f"{key}: {value(inner, 40)}")
        text = "{" + ", ".join(parts) + "}"
        return text if len(text) <= limit * 2 else f"{{{len(item)} fields}}"
    return str(item)


def percent(ratio: float) -> str:
    """A relative change as a signed percentage with two significant decimals: +0.029%, -3.97%."""
    pct = ratio * 100
    if pct == 0:
        return "0%"
    if abs(pct) >= 1:
        return f"{pct:+.2f}%"
    decimals = min(12, max(2, 1 - math.floor(math.log10(abs(pct)))))
    return f"{pct:+.{decimals}f}%"


def _delta(delta: int | float) -> str:
    if isinstance(delta, int):
        return f"{delta:+,}"
    return f"{delta:+,.6g}"


def share(ratio: float | None) -> str:
    return "absent" if ratio is None else f"{ratio * 100:.2f}%"


def mover(m: Mover) -> str:
    return f"{m.key}: {share(m.old)} -> {share(m.new)} ({m.pp:+.2f} pp)"


def _size(size: int | None) -> str:
    return "?" if size is None else f"{size:,} bytes"


# -- a diff as neutral sections ------------------------------------------------------------------


@dataclass
class Row:
    tone: Tone
    path: str
    detail: str
    children: list[str] = field(default_factory=list)


@dataclass
class Block:
    heading: str | None
    rows: list[Row] = field(default_factory=list)
    hidden: int = 0


@dataclass
class Section:
    title: str
    status: str
    blocks: list[Block] = field(default_factory=list)
    files: list[Row] = field(default_factory=list)
    volatile: list[Row] = field(default_factory=list)
    volatile_hidden: int = 0
    text_diffs: list[tuple[str, str]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def _change_row(change: Change, prefix: str = "") -> Row:
    path = prefix + change.path
    kind = change.change
    if kind == "changed":
        detail = f"{value(change.old)} -> {value(change.new)}"
        if change.delta is not None:
            extra = _delta(change.delta)
            if change.relative is not None:
                extra += f", {percent(change.relative)}"
            detail += f" ({extra})"
        return Row("change", path, detail)
    if kind == "added":
        row = Row("add", path, f"added {value(change.new)}")
        if change.movers:
            row.children.append(
                f"weights vs {change.baseline} ({len(change.movers)} moved, biggest first):"
            )
            row.children.extend("  " + mover(m) for m in change.movers[:MAX_MOVERS])
            if len(change.movers) > MAX_MOVERS:
                row.children.append(f"  ... and {len(change.movers) - MAX_MOVERS} more")
        return row
    if kind == "removed":
        return Row("remove", path, f"removed (was {value(change.old)})")
    if kind == "set":
        bits = [f"+{value(v, 40)}" for v in change.added or []]
        bits += [f"-{value(v, 40)}" for v in change.removed or []]
        return Row("change", path, ", ".join(bits))
    if kind == "reordered":
        return Row("change", path, "same items, new order")
    if kind == "weights":
        moved = change.movers or []
        row = Row(
            "change", path, f"{len(moved)} weight(s) moved, biggest first (percentage points)"
        )
        row.children.extend(mover(m) for m in moved[:MAX_MOVERS])
        if len(moved) > MAX_MOVERS:
            row.children.append(f"... and {len(moved) - MAX_MOVERS} more")
        return row
    assert_never(kind)


def _file_row(f: FileChange) -> Row:
    if f.change == "added":
        return Row("add", f.path, f"added ({_size(f.new_size)})")
    if f.change == "removed":
        return Row("remove", f.path, f"removed (was {_size(f.old_size)})")
    detail = f"{_size(f.old_size)} -> {_size(f.new_size)}"
    if f.old_size is not None and f.new_size is not None:
        detail = f"{f.old_size:,} -> {f.new_size:,} bytes ({f.new_size - f.old_size:+,})"
    if f.old_mode != f.new_mode:
        detail += f", mode {f.old_mode} -> {f.new_mode}"
    if f.content == "digest-only":
        detail += ", content not at hand"
    return Row("change", f.path, detail)


def _prefix(document: DocumentDiff) -> str:
    return "request." if document.name == "request" else ""


def _heading(document: DocumentDiff) -> str:
    if document.name.startswith("constants:"):
        return f"constants in {document.name.removeprefix('constants:')}"
    return f"in {document.name.removeprefix('file:')}"


def section(capture: CaptureDiff) -> Section:
    out = Section(f"{capture.source} [{capture.kind}]", capture.status)
    if capture.status == "added":
        out.blocks.append(Block(None, [Row("add", capture.source, "new source in B")]))
    elif capture.status == "removed":
        out.blocks.append(Block(None, [Row("remove", capture.source, "source absent from B")]))
    main = Block(None)
    for document in capture.documents:
        inline = document.name in ("capture", "request", "data")
        block = main if inline else Block(_heading(document))
        for change in document.changes:
            row = _change_row(change, _prefix(document))
            if change.volatile:
                if len(out.volatile) < MAX_VOLATILE:
                    if not inline:
                        row.path = f"{document.name.removeprefix('file:')}: {row.path}"
                    out.volatile.append(row)
                else:
                    out.volatile_hidden += 1
            elif len(block.rows) < MAX_ROWS:
                block.rows.append(row)
            else:
                block.hidden += 1
        if document.text_diff:
            lines = document.text_diff.splitlines()
            text = "\n".join(lines[:MAX_DIFF_LINES])
            if len(lines) > MAX_DIFF_LINES:
                text += f"\n... {len(lines) - MAX_DIFF_LINES} more lines (see --format json)"
            out.text_diffs.append((document.name.removeprefix("file:"), text))
        if not inline and (block.rows or block.hidden):
            out.blocks.append(block)
    if main.rows or main.hidden:
        out.blocks.insert(0, main)
    out.files = [_file_row(f) for f in capture.files]
    out.notices = list(capture.notices)
    return _inert(out)


def _inert(out: Section) -> Section:
    """Every captured string with its control characters escaped (see render.escape): a file
    name holding a terminal escape sequence prints as ``\\x1b[...``, in every format."""
    t = escape.text

    def row(r: Row) -> Row:
        return Row(r.tone, t(r.path), t(r.detail), [t(c) for c in r.children])

    out.title = t(out.title)
    out.blocks = [
        Block(t(b.heading) if b.heading else None, [row(r) for r in b.rows], b.hidden)
        for b in out.blocks
    ]
    out.files = [row(r) for r in out.files]
    out.volatile = [row(r) for r in out.volatile]
    out.text_diffs = [(t(name), escape.block(text)) for name, text in out.text_diffs]
    out.notices = [t(n) for n in out.notices]
    return out


def _summary(diff: Diff) -> str:
    counts = diff.counts
    volatile = f"; {counts.volatile} volatile change(s) not counted" if counts.volatile else ""
    if diff.equal:
        return f"no differences between {diff.a.label} and {diff.b.label}{volatile}"
    return (
        f"{counts.sources_changed} of {len(diff.captures)} source(s) changed: "
        f"{counts.changes} change(s){volatile}"
    )


def _note_line(note: NoteRef) -> str:
    text = f"{note.created[:19]}Z  note {note.id[:12]} on {note.snapshot}: {note.text}"
    if note.supersedes:
        text += f"  (supersedes: {', '.join(note.supersedes)})"
    return escape.text(text)


# -- text -----------------------------------------------------------------------------------------

_ANSI = {
    "add": "\033[32m",
    "remove": "\033[31m",
    "change": "\033[33m",
    "info": "",
    "bold": "\033[1m",
    "dim": "\033[2m",
    "reset": "\033[0m",
}
_MARK: dict[Tone, str] = {"add": "+", "remove": "-", "change": "~", "info": " "}


class _Paint:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, text: str, style: str) -> str:
        if not self.colour or not _ANSI.get(style):
            return text
        return f"{_ANSI[style]}{text}{_ANSI['reset']}"


def _text_diff(diff: Diff, colour: bool) -> str:
    paint = _Paint(colour)
    lines = [paint(f"prov diff: {diff.a.label} -> {diff.b.label}", "bold")]
    for side, ref in (("A", diff.a), ("B", diff.b)):
        lines.append(
            f"  {side}  {ref.label}  sha256:{ref.sha256[:12]}  {ref.created}{_origin(ref)}"
        )
    unchanged = [c.source for c in diff.captures if c.status == "unchanged" and not c.documents]
    for capture in diff.captures:
        if capture.status == "unchanged" and not capture.documents:
            continue
        part = section(capture)
        lines.append("")
        lines.append(paint(f"{part.title}: {part.status}", "bold"))
        for block in part.blocks:
            indent = "  "
            if block.heading:
                lines.append(f"  {block.heading}:")
                indent = "    "
            for row in block.rows:
                lines.extend(_text_row(row, indent, paint))
            if block.hidden:
                lines.append(f"{indent}... {block.hidden} more change(s) (see --format json)")
        if part.files:
            lines.append(f"  {_files_word(capture)}: {_file_counts(capture.files)}")
            for row in part.files:
                lines.extend(_text_row(row, "    ", paint))
        for name, text in part.text_diffs:
            lines.append(f"  {name}:")
            for line in text.splitlines():
                style = (
                    "add"
                    if line.startswith("+") and not line.startswith("+++")
                    else "remove"
                    if line.startswith("-") and not line.startswith("---")
                    else "dim"
                    if line.startswith("@@")
                    else "info"
                )
                lines.append("    " + paint(line, style))
        for notice in part.notices:
            lines.append(f"  note: {notice}")
        if part.volatile:
            lines.append(paint("  volatile (not counted as differences):", "dim"))
            for row in part.volatile:
                lines.append(paint(f"    {row.path}: {row.detail}", "dim"))
            if part.volatile_hidden:
                lines.append(paint(f"    ... and {part.volatile_hidden} more", "dim"))
    if unchanged:
        lines.append("")
        lines.append(f"unchanged: {', '.join(unchanged)}")
    if diff.notes:
        lines.append("")
        lines.append(paint("notes in this span:", "bold"))
        lines.extend("  " + _note_line(note) for note in diff.notes)
    lines.append("")
    lines.append(paint(_summary(diff), "bold"))
    return "\n".join(lines) + "\n"


def _text_row(row: Row, indent: str, paint: _Paint) -> list[str]:
    head = paint(f"{_MARK[row.tone]} {row.path}", row.tone)
    out = [f"{indent}{head}: {row.detail}"]
    out.extend(f"{indent}    {child}" for child in row.children)
    return out


def _files_word(capture: CaptureDiff) -> str:
    return "objects" if capture.kind == "listing" else "files"


def _file_counts(files: Sequence[FileChange]) -> str:
    counts = {
        kind: sum(1 for f in files if f.change == kind) for kind in ("added", "removed", "changed")
    }
    return ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)


# -- markdown -------------------------------------------------------------------------------------


def _md(text: str) -> str:
    """Text for Markdown prose that no captured string can turn into markup."""
    return escape.md_text(text)


def _code(text: str) -> str:
    return escape.md_code(text)


def _md_row(row: Row) -> list[str]:
    out = [f"- {_code(row.path)}: {_md(row.detail)}"]
    out.extend(f"  - {_md(child.strip())}" for child in row.children)
    return out


def _markdown_diff(diff: Diff) -> str:
    lines = [f"## prov diff: {_code(diff.a.label)} → {_code(diff.b.label)}", ""]
    lines += ["| | label | sha256 | created |", "|---|---|---|---|"]
    for side, ref in (("A", diff.a), ("B", diff.b)):
        lines.append(f"| {side} | {_code(ref.label)} | {_code(ref.sha256[:12])} | {ref.created} |")
    lines += ["", f"**{_md(_summary(diff))}**"]
    for capture in diff.captures:
        if capture.status == "unchanged" and not capture.documents:
            continue
        part = section(capture)
        lines += ["", f"### {_md(part.title)}: {part.status}", ""]
        for block in part.blocks:
            if block.heading:
                word, _, where = block.heading.rpartition(" ")
                lines += ["", f"{word.capitalize()} {_code(where)}:", ""]
            for row in block.rows:
                lines.extend(_md_row(row))
            if block.hidden:
                lines.append(f"- … {block.hidden} more change(s) (see the JSON output)")
        if part.files:
            lines += ["", "| file | change | size |", "|---|---|---|"]
            for row in part.files:
                lines.append(f"| {_code(row.path)} | {row.tone} | {_md(row.detail)} |")
        for name, text in part.text_diffs:
            lines += ["", f"{_code(name)}:", "", *escape.md_fence(text, "diff")]
        for notice in part.notices:
            lines += ["", f"> {_md(notice)}"]
        if part.volatile:
            lines += ["", "<details><summary>volatile (not counted as differences)</summary>", ""]
            lines.extend(f"- {_code(row.path)}: {_md(row.detail)}" for row in part.volatile)
            if part.volatile_hidden:
                lines.append(f"- … and {part.volatile_hidden} more")
            lines += ["", "</details>"]
    unchanged = [c.source for c in diff.captures if c.status == "unchanged" and not c.documents]
    if unchanged:
        lines += ["", f"Unchanged: {', '.join(_code(s) for s in unchanged)}"]
    if diff.notes:
        lines += ["", "### Notes in this span", ""]
        lines.extend(f"- {_md(_note_line(note))}" for note in diff.notes)
    return "\n".join(lines) + "\n"


# -- html -----------------------------------------------------------------------------------------

_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:72rem;
padding:0 1rem;color:#1b1f24;background:#fff}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse;margin:.5rem 0;max-width:100%}td,th{border:1px solid #d0d7de;
padding:.2rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
ul{margin:.3rem 0;padding-left:1.3rem}li{margin:.15rem 0}
.add{color:#116329}.remove{color:#a40e26}.change{color:#7d4e00}.muted{color:#57606a}
.status{font-weight:normal;color:#57606a;font-size:.9em}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto}
pre .add{background:#dafbe1}pre .remove{background:#ffebe9}
.summary{font-weight:600;padding:.5rem .8rem;background:#f6f8fa;border-left:4px solid #0969da}
.pass{color:#116329;font-weight:600}.fail{color:#a40e26;font-weight:600}
.error{color:#7d4e00;font-weight:600}
"""


def _page(title: str, body: list[str]) -> str:
    e = html.escape
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            # No fetch of any kind: the page is evidence and must read the same offline.
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; img-src data:\">",
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{e(title)}</title>",
            f"<style>{_CSS}</style>",
            "</head>",
            "<body>",
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


def _html_row(row: Row) -> str:
    e = html.escape
    children = ""
    if row.children:
        children = "<ul>" + "".join(f"<li>{e(c.strip())}</li>" for c in row.children) + "</ul>"
    return (
        f'<li class="{row.tone}"><code>{e(_MARK[row.tone])} {e(row.path)}</code>: '
        f"{e(row.detail)}{children}</li>"
    )


def _html_diff(diff: Diff) -> str:
    title = f"prov diff: {diff.a.label} -> {diff.b.label}"
    return _page(title, [f"<h1>{html.escape(title)}</h1>", *_html_diff_body(diff)])


def _html_diff_body(diff: Diff) -> list[str]:
    e = html.escape
    body = [
        "<table><tr><th></th><th>label</th><th>sha256</th><th>created</th><th>from</th></tr>",
    ]
    for side, ref in (("A", diff.a), ("B", diff.b)):
        body.append(
            f"<tr><td>{side}</td><td><code>{e(ref.label)}</code></td>"
            f"<td><code>{e(ref.sha256)}</code></td><td>{e(ref.created)}</td>"
            f"<td>{e(ref.origin)}</td></tr>"
        )
    body += ["</table>", f'<p class="summary">{e(_summary(diff))}</p>']
    for capture in diff.captures:
        if capture.status == "unchanged" and not capture.documents:
            continue
        part = section(capture)
        body.append(f'<h2>{e(part.title)} <span class="status">{e(part.status)}</span></h2>')
        for block in part.blocks:
            if block.heading:
                body.append(f"<h3><code>{e(block.heading)}</code></h3>")
            body.append("<ul>" + "".join(_html_row(row) for row in block.rows) + "</ul>")
            if block.hidden:
                body.append(
                    f'<p class="muted">… {block.hidden} more change(s) in the JSON output</p>'
                )
        if part.files:
            body.append("<table><tr><th>file</th><th>change</th><th>size</th></tr>")
            for row in part.files:
                body.append(
                    f'<tr class="{row.tone}"><td><code>{e(row.path)}</code></td>'
                    f"<td>{e(row.tone)}</td><td>{e(row.detail)}</td></tr>"
                )
            body.append("</table>")
        for name, text in part.text_diffs:
            body.append(f"<h3><code>{e(name)}</code></h3><pre>")
            for line in text.splitlines():
                tone = (
                    "add"
                    if line.startswith("+") and not line.startswith("+++")
                    else "remove"
                    if line.startswith("-") and not line.startswith("---")
                    else "muted"
                )
                body.append(f'<span class="{tone}">{e(line)}</span>')
            body.append("</pre>")
        for notice in part.notices:
            body.append(f'<p class="muted">{e(notice)}</p>')
        if part.volatile:
            body.append("<details><summary>volatile (not counted as differences)</summary><ul>")
            body.extend(
                f'<li class="muted"><code>{e(row.path)}</code>: {e(row.detail)}</li>'
                for row in part.volatile
            )
            if part.volatile_hidden:
                body.append(f'<li class="muted">… and {part.volatile_hidden} more</li>')
            body.append("</ul></details>")
    unchanged = [c.source for c in diff.captures if c.status == "unchanged" and not c.documents]
    if unchanged:
        body.append(f'<p class="muted">unchanged: {e(", ".join(unchanged))}</p>')
    if diff.notes:
        body.append("<h2>Notes in this span</h2><ul>")
        body.extend(f"<li>{e(_note_line(note))}</li>" for note in diff.notes)
        body.append("</ul>")
    return body


def render_diff(diff: Diff, fmt: Format, *, colour: bool = False) -> str:
    if fmt is Format.TEXT:
        return _text_diff(diff, colour)
    if fmt is Format.JSON:
        return json.dumps(diff.to_json(), indent=2, ensure_ascii=False) + "\n"
    if fmt is Format.MARKDOWN:
        return _markdown_diff(diff)
    if fmt is Format.HTML:
        return _html_diff(diff)
    assert_never(fmt)


# -- claims ---------------------------------------------------------------------------------------


def _claim_numbers(result: ClaimResult) -> tuple[str, str, str]:
    """derived, gap and tolerance as text."""
    derived = value(result.derived)
    if result.gap is None:
        gap = (
            "—" if result.status == "error" else ("equal" if result.status == "pass" else "differs")
        )
    else:
        gap = _delta(result.gap) if result.gap else "0 (exact)"
        if result.relative_gap is not None and result.gap:
            gap += f" ({percent(result.relative_gap)})"
    tolerance = []
    if result.tolerance:
        tolerance.append(f"{result.tolerance * 100:g}%")
    if result.abs_tolerance:
        tolerance.append(f"±{value(result.abs_tolerance)}")
    return derived, gap, " or ".join(tolerance) or "exact"


_VERDICT = {"pass": "holds", "fail": "FAILS", "error": "ERROR"}


def _one_line(expression: str) -> str:
    return " ".join(expression.split())


def _origin(ref: SnapshotRef) -> str:
    """Where a snapshot was read from, unless that is just its label in the store."""
    same = ref.origin == ref.label or ref.origin.startswith(f"{ref.label} (")
    return "" if same else f"  ({ref.origin})"


def _claims_summary(report: ClaimsReport) -> str:
    total = len(report.results)
    text = f"{total} claim(s): {report.passed} hold, {report.failed} fail"
    return text + (f", {report.errors} could not be evaluated" if report.errors else "")


def _text_claims(report: ClaimsReport, colour: bool) -> str:
    paint = _Paint(colour)
    ref = report.snapshot
    lines = [
        paint(f"prov check: {report.claims_file} against {ref.label}", "bold"),
        f"  snapshot sha256:{ref.sha256[:12]}  {ref.created}{_origin(ref)}",
    ]
    tones = {"pass": "add", "fail": "remove", "error": "change"}
    for result in report.results:
        derived, gap, tolerance = _claim_numbers(result)
        lines.append("")
        lines.append(paint(f"{_VERDICT[result.status]:<6} {result.name}", tones[result.status]))
        source = f"  ({result.source})" if result.source else ""
        lines.append(f"       published {result.claimed_text}{source}")
        if result.status == "error":
            lines.append(f"       error     {result.error}")
        else:
            lines.append(f"       derived   {derived}")
            lines.append(f"       gap       {gap}; tolerance {tolerance}")
        lines.append(paint(f"       from      {_one_line(result.expression)}", "dim"))
        lines.extend(f"       superseded by {escape.text(n)}" for n in result.superseded_by)
    lines += ["", paint(_claims_summary(report), "bold")]
    return "\n".join(lines) + "\n"


def _markdown_claims(report: ClaimsReport) -> str:
    ref = report.snapshot
    lines = [
        f"## prov check: {_code(report.claims_file)} against {_code(ref.label)}",
        "",
        f"Snapshot sha256 {_code(ref.sha256[:12])}, created {ref.created}.",
        "",
        "| claim | published | source | derived | gap | tolerance | result |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in report.results:
        derived, gap, tolerance = _claim_numbers(result)
        if result.status == "error":
            derived = f"error: {result.error}"
        lines.append(
            f"| {_md(result.name)} | {_md(result.claimed_text)} | {_md(result.source or '')} "
            f"| {_md(derived)} | {_md(gap)} | {_md(tolerance)} | **{_VERDICT[result.status]}** |"
        )
    superseded = [(r.name, note) for r in report.results for note in r.superseded_by]
    if superseded:
        lines += [""]
        lines.extend(f"- {_md(name)}: superseded by {_md(note)}" for name, note in superseded)
    lines += ["", f"**{_md(_claims_summary(report))}**"]
    return "\n".join(lines) + "\n"


def _html_claims(report: ClaimsReport) -> str:
    title = f"prov check: {report.claims_file} against {report.snapshot.label}"
    return _page(title, [f"<h1>{html.escape(title)}</h1>", *_html_claims_body(report)])


def _html_claims_body(report: ClaimsReport) -> list[str]:
    e = html.escape
    ref = report.snapshot
    body = [
        f'<p class="muted">snapshot sha256 <code>{e(ref.sha256)}</code>, '
        f"created {e(ref.created)}</p>",
        "<table><tr><th>claim</th><th>published</th><th>source</th><th>derived</th><th>gap</th>"
        "<th>tolerance</th><th>result</th></tr>",
    ]
    for result in report.results:
        derived, gap, tolerance = _claim_numbers(result)
        if result.status == "error":
            derived = f"error: {result.error}"
        body.append(
            f"<tr><td>{e(result.name)}<br>"
            f'<code class="muted">{e(_one_line(result.expression))}</code></td>'
            f"<td>{e(result.claimed_text)}</td><td>{e(result.source or '')}</td>"
            f"<td>{e(derived)}</td><td>{e(gap)}</td><td>{e(tolerance)}</td>"
            f'<td class="{result.status}">{e(_VERDICT[result.status])}</td></tr>'
        )
    body += ["</table>", f'<p class="summary">{e(_claims_summary(report))}</p>']
    return body


def render_claims(report: ClaimsReport, fmt: Format, *, colour: bool = False) -> str:
    if fmt is Format.TEXT:
        return _text_claims(report, colour)
    if fmt is Format.JSON:
        return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
    if fmt is Format.MARKDOWN:
        return _markdown_claims(report)
    if fmt is Format.HTML:
        return _html_claims(report)
    assert_never(fmt)


def render_report(diff: Diff, report: ClaimsReport, fmt: Format) -> str:
    """One page for a milestone: whether the published claims hold, and what changed since."""
    title = f"prov report: {diff.a.label} -> {diff.b.label}"
    if fmt is Format.HTML:
        claims_heading = f"Claims against {report.snapshot.label} ({report.claims_file})"
        body = [
            f"<h1>{html.escape(title)}</h1>",
            f"<h2>{html.escape(claims_heading)}</h2>",
            *_html_claims_body(report),
            f"<h2>{html.escape(f'What changed: {diff.a.label} -> {diff.b.label}')}</h2>",
            *_html_diff_body(diff),
        ]
        return _page(title, body)
    if fmt is Format.MARKDOWN:
        return f"# {title}\n\n{_markdown_claims(report)}\n{_markdown_diff(diff)}"
    if fmt is Format.TEXT:
        return f"{_text_claims(report, False)}\n{_text_diff(diff, False)}"
    if fmt is Format.JSON:
        document = {
            "schema": "https://prov.dev/report/v1",
            "claims": report.to_json(),
            "diff": diff.to_json(),
        }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert_never(fmt)


# -- the timeline ---------------------------------------------------------------------------------


def _log_change_line(item: LogItem) -> str:
    if item.problem:
        return escape.text(f"not compared: {item.problem}")
    if item.previous is None:
        return "first snapshot"
    if not item.changes:
        return f"no differences since {item.previous}"
    return escape.text(f"changed since {item.previous}: " + "; ".join(item.changes))


def _witness_line(witness: WitnessRef) -> str:
    where = witness.operator + (f" ({witness.region})" if witness.region else "")
    key = f"; key {witness.signers[0][:16]}" if witness.signers else ""
    if witness.problem:
        return escape.text(
            f"{witness.created[:19]}Z  witness index entry ({where}) refused: {witness.problem}"
        )
    return escape.text(
        f"{witness.created[:19]}Z  witness {where}: {len(witness.witnessed)} capture(s) "
        f"witnessed{key}"
    )


def _recheck_line(recheck: RecheckRef) -> str:
    key = f"; signed by {recheck.signers[0][:16]}" if recheck.signers else ""
    return escape.text(
        f"{recheck.created[:19]}Z  recheck {recheck.label}: {recheck.summary()}{key}"
    )


def _events(item: LogItem) -> list[str]:
    """Notes, witnesses and rechecks of one timeline item, oldest first."""
    dated = [(n.created, _note_line(n)) for n in item.notes]
    dated += [(w.created, _witness_line(w)) for w in item.witnesses]
    dated += [(r.created, _recheck_line(r)) for r in item.rechecks]
    return [line for _, line in sorted(dated, key=lambda pair: pair[0])]


def _log_head(entry: SnapshotEntry) -> str:
    failed = f"  FAILED: {', '.join(entry.failed)}" if entry.failed else ""
    return (
        f"{entry.created[:19]}Z  {entry.sha256[:12]}  {entry.label}  "
        f"sources: {', '.join(entry.sources)}  signers: {len(entry.signers)}{failed}"
    )


def render_log(items: Sequence[LogItem], fmt: Format, *, colour: bool = False) -> str:
    if fmt is Format.JSON:
        document = {"schema": LOG_SCHEMA, "snapshots": [item.to_json() for item in items]}
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if fmt is Format.TEXT:
        paint = _Paint(colour)
        if not items:
            return "no snapshots yet\n"
        lines = []
        for item in items:
            lines.append(paint(_log_head(item.entry), "bold"))
            lines.append(f"    {_log_change_line(item)}")
            lines.extend(f"    {line}" for line in _events(item))
        return "\n".join(lines) + "\n"
    if fmt is Format.MARKDOWN:
        lines = ["## Snapshots", ""]
        if not items:
            lines.append("No snapshots yet.")
        for item in items:
            lines.append(
                f"- **{_md(item.entry.label)}** {_code(item.entry.sha256[:12])} "
                f"{item.entry.created}: {_md(_log_change_line(item))}"
            )
            lines.extend(f"  - {_md(line)}" for line in _events(item))
        return "\n".join(lines) + "\n"
    if fmt is Format.HTML:
        e = html.escape
        body = ["<h1>Snapshots</h1>", "<ul>"]
        for item in items:
            notes = "".join(f"<li>{e(line)}</li>" for line in _events(item))
            body.append(
                f"<li><code>{e(_log_head(item.entry))}</code><br>{e(_log_change_line(item))}"
                + (f"<ul>{notes}</ul>" if notes else "")
                + "</li>"
            )
        body.append("</ul>")
        return _page("prov log", body)
    assert_never(fmt)
