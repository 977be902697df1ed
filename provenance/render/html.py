"""Diffs, claims reports and the timeline as one self-contained HTML page.

Inline CSS (``CSS``: the one stylesheet of these pages), a Content-Security-Policy that forbids
every fetch, no script; every captured string escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from provenance.compare.claims import ClaimsReport
from provenance.compare.diff import Diff
from provenance.compare.timeline import LogItem
from provenance.render.sections import (
    MARK,
    MAX_LINES,
    VERDICT,
    Budget,
    Row,
    claim_cells,
    claims_summary,
    diff_line_tone,
    events,
    hidden_line,
    log_change_line,
    log_head,
    note_line,
    one_line,
    section,
    summary,
    summary_lines,
)

CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:72rem;
padding:0 1rem;color:#1b1f24;background:#fff}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse;margin:.5rem 0;max-width:100%}td,th{border:1px solid #d0d7de;
padding:.2rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th,td:nth-last-child(-n+3){overflow-wrap:normal}
ul{margin:.3rem 0;padding-left:1.3rem}li{margin:.15rem 0}
.add{color:#116329}.remove{color:#a40e26}.change{color:#7d4e00}.muted{color:#57606a}
.status{font-weight:normal;color:#57606a;font-size:.9em}
pre{background:#f6f8fa;padding:.6rem;overflow-x:auto}
pre .add{background:#dafbe1}pre .remove{background:#ffebe9}
.summary{font-weight:600;padding:.5rem .8rem;background:#f6f8fa;border-left:4px solid #0969da}
.pass{color:#116329;font-weight:600}.fail{color:#a40e26;font-weight:600}
.error{color:#7d4e00;font-weight:600}
"""


def page(title: str, body: list[str]) -> str:
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
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


def html_row(row: Row) -> str:
    e = html.escape
    children = ""
    if row.children:
        # one member a line: a long list stays readable in the page source too
        items = "\n".join(f"<li>{e(c.strip())}</li>" for c in row.children)
        children = f"<ul>\n{items}\n</ul>"
    return (
        f'<li class="{row.tone}"><code>{e(MARK[row.tone])} {e(row.path)}</code>: '
        f"{e(row.detail)}{children}</li>"
    )


def diff_page(diff: Diff, *, stat: bool = False, max_lines: int | None = MAX_LINES) -> str:
    title = f"prov diff: {diff.a.label} -> {diff.b.label}"
    body = diff_body(diff, stat=stat, max_lines=max_lines)
    return page(title, [f"<h1>{html.escape(title)}</h1>", *body])


def diff_body(diff: Diff, *, stat: bool = False, max_lines: int | None = MAX_LINES) -> list[str]:
    """The summary first, then the detail within ``max_lines``; ``stat``: the summary alone."""
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
    body += ["</table>", f'<p class="summary">{e(summary(diff))}</p>', '<ul class="stat">']
    body.extend(f"<li>{e(line)}</li>" for line in summary_lines(diff))
    body.append("</ul>")
    if stat:
        return body
    budget = Budget(max_lines)
    for capture in diff.captures:
        if capture.status == "unchanged" and not capture.documents:
            continue
        part = section(capture, budget)
        body.append(f'<h2>{e(part.title)} <span class="status">{e(part.status)}</span></h2>')
        for block in part.blocks:
            if block.heading:
                body.append(f"<h3><code>{e(block.heading)}</code></h3>")
            body.append("<ul>" + "".join(html_row(row) for row in block.rows) + "</ul>")
            if block.hidden:
                body.append(f'<p class="muted">{e(hidden_line(block.hidden))}</p>')
        if part.files:
            body.append("<table><tr><th>file</th><th>change</th><th>size</th></tr>")
            for row in part.files:
                body.append(
                    f'<tr class="{row.tone}"><td><code>{e(row.path)}</code></td>'
                    f"<td>{e(row.tone)}</td><td>{e(row.detail)}</td></tr>"
                )
            body.append("</table>")
        if part.files_hidden:
            body.append(f'<p class="muted">{e(hidden_line(part.files_hidden))}</p>')
        for name, text in part.text_diffs:
            body.append(f"<h3><code>{e(name)}</code></h3><pre>")
            for line in text.splitlines():
                tone = {"hunk": "muted", "info": "muted"}.get(
                    diff_line_tone(line), diff_line_tone(line)
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
    if diff.notes:
        body.append("<h2>Notes in this span</h2><ul>")
        body.extend(f"<li>{e(note_line(note))}</li>" for note in diff.notes)
        body.append("</ul>")
    return body


def claims_page(report: ClaimsReport) -> str:
    title = f"prov check: {report.claims_file} against {report.snapshot.label}"
    return page(title, [f"<h1>{html.escape(title)}</h1>", *claims_body(report)])


def claims_body(report: ClaimsReport) -> list[str]:
    e = html.escape
    ref = report.snapshot
    body = [
        f'<p class="muted">snapshot sha256 <code>{e(ref.sha256)}</code>, '
        f"created {e(ref.created)}</p>",
        "<table><tr><th>claim</th><th>published</th><th>source</th><th>derived</th><th>gap</th>"
        "<th>tolerance</th><th>result</th></tr>",
    ]
    for result in report.results:
        derived, gap, tolerance = claim_cells(result)
        body.append(
            f"<tr><td>{e(result.name)}<br>"
            f'<code class="muted">{e(one_line(result.expression))}</code></td>'
            f"<td>{e(result.claimed_text)}</td><td>{e(result.source or '')}</td>"
            f"<td>{e(derived)}</td><td>{e(gap)}</td><td>{e(tolerance)}</td>"
            f'<td class="{result.status}">{e(VERDICT[result.status])}</td></tr>'
        )
    body += ["</table>", f'<p class="summary">{e(claims_summary(report))}</p>']
    return body


def log_page(items: Sequence[LogItem]) -> str:
    e = html.escape
    body = ["<h1>Snapshots</h1>", "<ul>"]
    for item in items:
        notes = "".join(f"<li>{e(line)}</li>" for line in events(item))
        body.append(
            f"<li><code>{e(log_head(item.entry))}</code><br>{e(log_change_line(item))}"
            + (f"<ul>{notes}</ul>" if notes else "")
            + "</li>"
        )
    body.append("</ul>")
    return page("prov log", body)
