"""Diffs, claims reports and the timeline for a terminal (ANSI colour only when asked)."""

from __future__ import annotations

from collections.abc import Sequence

from provenance.compare.claims import ClaimsReport
from provenance.compare.diff import CaptureDiff, Diff
from provenance.compare.timeline import LogItem
from provenance.render import escape
from provenance.render.sections import (
    MARK,
    MAX_LINES,
    VERDICT,
    Budget,
    Row,
    Section,
    claim_numbers,
    claims_summary,
    diff_line_tone,
    events,
    file_counts,
    files_word,
    hidden_line,
    log_change_line,
    log_head,
    note_line,
    one_line,
    origin,
    section,
    summary,
    summary_lines,
)

ANSI = {
    "add": "\033[32m",
    "remove": "\033[31m",
    "change": "\033[33m",
    "info": "",
    "bold": "\033[1m",
    "dim": "\033[2m",
    "reset": "\033[0m",
}


class Paint:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, text: str, style: str) -> str:
        if not self.colour or not ANSI.get(style):
            return text
        return f"{ANSI[style]}{text}{ANSI['reset']}"


def diff_text(
    diff: Diff, colour: bool, *, stat: bool = False, max_lines: int | None = MAX_LINES
) -> str:
    """The summary first (what changed, source by source), then the detail within
    ``max_lines``; ``stat``: the summary alone."""
    paint = Paint(colour)
    lines = [paint(f"prov diff: {diff.a.label} -> {diff.b.label}", "bold")]
    for side, ref in (("A", diff.a), ("B", diff.b)):
        lines.append(f"  {side}  {ref.label}  sha256:{ref.sha256[:12]}  {ref.created}{origin(ref)}")
    lines += ["", paint(summary(diff), "bold")]
    lines.extend(f"  {line}" for line in summary_lines(diff))
    if stat:
        return "\n".join(lines) + "\n"
    budget = Budget(max_lines)
    for capture in diff.captures:
        if capture.status == "unchanged" and not capture.documents:
            continue
        lines += ["", *_section_lines(section(capture, budget), capture, paint)]
    if diff.notes:
        lines.append("")
        lines.append(paint("notes in this span:", "bold"))
        lines.extend("  " + note_line(note) for note in diff.notes)
    return "\n".join(lines) + "\n"


def _section_lines(part: Section, capture: CaptureDiff, paint: Paint) -> list[str]:
    lines = [paint(f"{part.title}: {part.status}", "bold")]
    for block in part.blocks:
        indent = "  "
        if block.heading:
            lines.append(f"  {block.heading}:")
            indent = "    "
        for row in block.rows:
            lines.extend(row_lines(row, indent, paint))
        if block.hidden:
            lines.append(f"{indent}{hidden_line(block.hidden)}")
    if part.files or part.files_hidden:
        lines.append(f"  {files_word(capture)}: {file_counts(capture.files)}")
        for row in part.files:
            lines.extend(row_lines(row, "    ", paint))
        if part.files_hidden:
            lines.append(f"    {hidden_line(part.files_hidden)}")
    for name, text in part.text_diffs:
        lines.append(f"  {name}:")
        for line in text.splitlines():
            tone = diff_line_tone(line)
            style = {"hunk": "dim"}.get(tone, tone)
            lines.append("    " + paint(line, style))
    for notice in part.notices:
        lines.append(f"  note: {notice}")
    if part.volatile:
        lines.append(paint("  volatile (not counted as differences):", "dim"))
        for row in part.volatile:
            lines.append(paint(f"    {row.path}: {row.detail}", "dim"))
        if part.volatile_hidden:
            lines.append(paint(f"    ... and {part.volatile_hidden} more", "dim"))
    return lines


def row_lines(row: Row, indent: str, paint: Paint) -> list[str]:
    head = paint(f"{MARK[row.tone]} {row.path}", row.tone)
    out = [f"{indent}{head}: {row.detail}"]
    out.extend(f"{indent}    {child}" for child in row.children)
    return out


def claims_text(report: ClaimsReport, colour: bool) -> str:
    paint = Paint(colour)
    ref = report.snapshot
    lines = [
        paint(f"prov check: {report.claims_file} against {ref.label}", "bold"),
        f"  snapshot sha256:{ref.sha256[:12]}  {ref.created}{origin(ref)}",
    ]
    tones = {"pass": "add", "fail": "remove", "error": "change"}
    for result in report.results:
        derived, gap, tolerance = claim_numbers(result)
        lines.append("")
        lines.append(paint(f"{VERDICT[result.status]:<6} {result.name}", tones[result.status]))
        source = f"  ({result.source})" if result.source else ""
        lines.append(f"       published {result.claimed_text}{source}")
        if result.status == "error":
            lines.append(f"       error     {result.error}")
        else:
            lines.append(f"       derived   {derived}")
            lines.append(f"       gap       {gap}; tolerance {tolerance}")
        lines.append(paint(f"       from      {one_line(result.expression)}", "dim"))
        lines.extend(f"       superseded by {escape.text(n)}" for n in result.superseded_by)
    lines += ["", paint(claims_summary(report), "bold")]
    return "\n".join(lines) + "\n"


def log_text(items: Sequence[LogItem], colour: bool) -> str:
    paint = Paint(colour)
    if not items:
        return "no snapshots yet\n"
    lines = []
    for item in items:
        lines.append(paint(log_head(item.entry), "bold"))
        lines.append(f"    {log_change_line(item)}")
        lines.extend(f"    {line}" for line in events(item))
    return "\n".join(lines) + "\n"
