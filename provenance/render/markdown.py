"""Diffs, claims reports and the timeline as Markdown, for release notes and PR comments.

Every captured string goes through ``render.escape`` (prose, code spans, fences), so none can open
a tag or a link or leave its code span.
"""

from __future__ import annotations

from collections.abc import Sequence

from provenance.compare.claims import ClaimsReport
from provenance.compare.diff import Diff
from provenance.compare.timeline import LogItem
from provenance.render import escape
from provenance.render.sections import (
    MAX_LINES,
    VERDICT,
    Budget,
    Row,
    Section,
    claim_cells,
    claims_summary,
    events,
    hidden_line,
    log_change_line,
    note_line,
    section,
    summary,
    summary_lines,
)


def md(text: str) -> str:
    """Text for Markdown prose that no captured string can turn into markup."""
    return escape.md_text(text)


def code(text: str) -> str:
    return escape.md_code(text)


def md_row(row: Row) -> list[str]:
    out = [f"- {code(row.path)}: {md(row.detail)}"]
    out.extend(f"  - {md(child.strip())}" for child in row.children)
    return out


def diff_markdown(diff: Diff, *, stat: bool = False, max_lines: int | None = MAX_LINES) -> str:
    """The summary first, then the detail within ``max_lines``; ``stat``: the summary alone."""
    lines = [f"## prov diff: {code(diff.a.label)} → {code(diff.b.label)}", ""]
    lines += ["| | label | sha256 | created |", "|---|---|---|---|"]
    for side, ref in (("A", diff.a), ("B", diff.b)):
        lines.append(f"| {side} | {code(ref.label)} | {code(ref.sha256[:12])} | {ref.created} |")
    lines += ["", f"**{md(summary(diff))}**", ""]
    lines.extend(f"- {md(line)}" for line in summary_lines(diff))
    if stat:
        return "\n".join(lines) + "\n"
    budget = Budget(max_lines)
    for capture in diff.captures:
        if capture.status == "unchanged" and not capture.documents:
            continue
        lines += _section_markdown(section(capture, budget))
    if diff.notes:
        lines += ["", "### Notes in this span", ""]
        lines.extend(f"- {md(note_line(note))}" for note in diff.notes)
    return "\n".join(lines) + "\n"


def _section_markdown(part: Section) -> list[str]:
    lines = ["", f"### {md(part.title)}: {part.status}", ""]
    for block in part.blocks:
        if block.heading:
            word, _, where = block.heading.rpartition(" ")
            lines += ["", f"{word.capitalize()} {code(where)}:", ""]
        for row in block.rows:
            lines.extend(md_row(row))
        if block.hidden:
            lines.append(f"- {md(hidden_line(block.hidden))}")
    if part.files or part.files_hidden:
        lines += ["", "| file | change | size |", "|---|---|---|"]
        for row in part.files:
            lines.append(f"| {code(row.path)} | {row.tone} | {md(row.detail)} |")
        if part.files_hidden:
            lines += ["", md(hidden_line(part.files_hidden))]
    for name, text in part.text_diffs:
        lines += ["", f"{code(name)}:", "", *escape.md_fence(text, "diff")]
    for notice in part.notices:
        lines += ["", f"> {md(notice)}"]
    if part.volatile:
        lines += ["", "<details><summary>volatile (not counted as differences)</summary>", ""]
        lines.extend(f"- {code(row.path)}: {md(row.detail)}" for row in part.volatile)
        if part.volatile_hidden:
            lines.append(f"- … and {part.volatile_hidden} more")
        lines += ["", "</details>"]
    return lines


def claims_markdown(report: ClaimsReport) -> str:
    ref = report.snapshot
    lines = [
        f"## prov check: {code(report.claims_file)} against {code(ref.label)}",
        "",
        f"Snapshot sha256 {code(ref.sha256[:12])}, created {ref.created}.",
        "",
        "| claim | published | source | derived | gap | tolerance | result |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in report.results:
        derived, gap, tolerance = claim_cells(result)
        lines.append(
            f"| {md(result.name)} | {md(result.claimed_text)} | {md(result.source or '')} "
            f"| {md(derived)} | {md(gap)} | {md(tolerance)} | **{VERDICT[result.status]}** |"
        )
    superseded = [(r.name, note) for r in report.results for note in r.superseded_by]
    if superseded:
        lines += [""]
        lines.extend(f"- {md(name)}: superseded by {md(note)}" for name, note in superseded)
    lines += ["", f"**{md(claims_summary(report))}**"]
    return "\n".join(lines) + "\n"


def log_markdown(items: Sequence[LogItem]) -> str:
    lines = ["## Snapshots", ""]
    if not items:
        lines.append("No snapshots yet.")
    for item in items:
        lines.append(
            f"- **{md(item.entry.label)}** {code(item.entry.sha256[:12])} "
            f"{item.entry.created}: {md(log_change_line(item))}"
        )
        lines.extend(f"  - {md(line)}" for line in events(item))
    return "\n".join(lines) + "\n"
