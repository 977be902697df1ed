"""The pages of a provenance site, drawn from its ``site.json`` document (``site_model.Site``).

Static and self-contained: one inline style sheet allowed by its hash in a Content-Security-
Policy that forbids every fetch and every script, so a page reads the same from ``file://``, a
static host or an archive, and a captured string that slipped markup in could load nothing.
Every captured or user-supplied string is HTML-escaped. Semantic HTML (header, nav, main,
ordered timeline, tables with headers, details for folded detail), readable from 375 px wide up,
dark when the reader's system is.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import quote

from provenance.compare.diff import Diff
from provenance.render import escape, svgplot
from provenance.render.html import diff_body
from provenance.render.site_model import ClaimItem, Interval, Milestone, NoteItem, Site

__all__ = ["CSS", "csp", "write", "write_index"]

e = escape.html

CSS = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;
--panel:#f6f8fa;--ok:#116329;--okbg:#dafbe1;--bad:#a40e26;--badbg:#ffebe9;--warn:#7d4e00;
--warnbg:#fff8c5;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;
--line:#3d444d;--panel:#161b22;--ok:#3fb950;--okbg:#12261e;--bad:#ff7b72;--badbg:#2d1214;
--warn:#d29922;--warnbg:#272115;--accent:#4493f8}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;
color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
header.site,main,footer{max-width:72rem;margin:0 auto;padding:0 1rem}
header.site{display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;align-items:baseline;
padding-top:.8rem;padding-bottom:.6rem;border-bottom:1px solid var(--line)}
header.site .home{font-weight:700;text-decoration:none;color:var(--fg)}
nav ul{display:flex;flex-wrap:wrap;gap:.2rem 1rem;list-style:none;margin:0;padding:0}
h1{font-size:1.6rem;line-height:1.25;margin:1.2rem 0 .6rem}
h2{font-size:1.25rem;margin:2.2rem 0 .6rem;padding-bottom:.2rem;border-bottom:1px solid var(--line)}
h3{font-size:1.05rem;margin:0 0 .3rem}
p,li,dd,summary{overflow-wrap:anywhere}td,th{overflow-wrap:break-word}
code,pre,kbd{font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{overflow-wrap:anywhere;word-break:break-word}
pre{background:var(--panel);padding:.6rem .8rem;border-radius:6px;overflow-x:auto;max-width:100%}
pre.cmd{white-space:pre-wrap;overflow-wrap:anywhere}
.lede{font-size:1.05rem;max-width:48rem}
.muted,.meta{color:var(--muted)}
.meta{font-size:.92rem;margin:.2rem 0}
.badge{display:inline-block;font-size:.8rem;font-weight:700;letter-spacing:.02em;
padding:.05rem .5rem;border-radius:1rem;vertical-align:middle;border:1px solid currentColor}
.ok,.holds,.pass{color:var(--ok)}.bad,.fails,.fail,.remove{color:var(--bad)}
.gap,.warn,.error,.change{color:var(--warn)}.add{color:var(--ok)}
.badge.ok{background:var(--okbg)}.badge.bad{background:var(--badbg)}.badge.gap{background:var(--warnbg)}
.summary{font-weight:600;padding:.5rem .8rem;background:var(--panel);
border-left:4px solid var(--accent);border-radius:0 6px 6px 0}
.summary.bad{border-left-color:var(--bad)}
ol.timeline{list-style:none;margin:0;padding:0 0 0 1rem;border-left:3px solid var(--line)}
ol.timeline>li{position:relative;margin:0 0 1rem;padding:.6rem .8rem;border:1px solid var(--line);
border-radius:8px;background:var(--bg)}
ol.timeline>li::before{content:"";position:absolute;left:-1.55rem;top:1rem;width:.8rem;
height:.8rem;border-radius:50%;background:var(--line);border:2px solid var(--bg)}
ol.timeline>li.milestone.verified::before{background:var(--ok)}
ol.timeline>li.milestone.failed{border-color:var(--bad);background:var(--badbg)}
ol.timeline>li.milestone.failed::before{background:var(--bad)}
ol.timeline>li.interval{background:var(--panel);border-style:dashed}
ol.timeline>li.interval::before{background:var(--accent)}
ul.verdicts{list-style:none;padding:0;margin:.3rem 0;display:grid;
grid-template-columns:repeat(auto-fill,minmax(16rem,1fr));gap:.1rem 1rem}
.v{display:inline-block;min-width:3.4rem;font-weight:700}
table{border-collapse:collapse;margin:.5rem 0;width:100%}
th,td{border:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:var(--panel)}
.scroll{overflow-x:auto;max-width:100%}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
td.sha{font-size:.8rem}
.diff table{display:block;overflow-x:auto;max-width:100%}.diff h2{font-size:1.1rem}
ul.reads{margin:.3rem 0 0;padding-left:1.1rem;font-size:.92rem}
details{margin:.4rem 0}summary{cursor:pointer;font-weight:600}
dl.facts{display:grid;grid-template-columns:minmax(7rem,max-content) 1fr;gap:.15rem .8rem;
margin:.4rem 0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;min-width:0}
section.capture{border-top:1px solid var(--line);padding:.6rem 0}
.verify-box{border:2px solid var(--accent);border-radius:8px;padding:.4rem 1rem;margin:1rem 0}
.verify-box h3{margin-top:.6rem}
dl.meaning dt{font-weight:700;margin-top:.7rem}dl.meaning dd{margin:.1rem 0 0 0}
.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,22rem),1fr));gap:1rem}
figure{margin:0;border:1px solid var(--line);border-radius:8px;padding:.5rem;min-width:0}
figcaption{font-size:.92rem;margin-bottom:.3rem}
svg.chart{display:block;width:100%;height:auto}
svg.grid-chart{width:auto;max-width:none}
svg .grid{stroke:var(--line);stroke-width:1}
svg .tick{fill:var(--muted);font:11px system-ui,sans-serif}
svg .count{fill:var(--fg);font:12px system-ui,sans-serif;font-weight:700}
svg .published{fill:none;stroke:var(--muted);stroke-width:2;stroke-dasharray:6 4}
svg .derived{fill:none;stroke:var(--accent);stroke-width:2}
svg .pt{stroke:var(--bg);stroke-width:1.5}
svg .pt.holds{fill:var(--ok)}svg .pt.fails{fill:var(--bad)}svg .pt.gap{fill:var(--warn)}
svg .heat{stroke:var(--line)}svg .h0{fill:var(--bg)}svg .h1{fill:#b6d4fe}svg .h2{fill:#6ea8fe}
svg .h3{fill:#3d8bfd}svg .h4{fill:#0a58ca}
footer{margin-top:3rem;padding-top:1rem;padding-bottom:2rem;border-top:1px solid var(--line);
color:var(--muted);font-size:.92rem}
@media (max-width:40rem){
h1{font-size:1.35rem}
table.stack,table.stack tbody,table.stack tr,table.stack td{display:block;width:100%}
table.stack thead{display:none}
table.stack tr{border:1px solid var(--line);border-radius:6px;margin:.5rem 0;padding:.2rem 0}
table.stack td{border:none;padding:.15rem .6rem}
table.stack td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-weight:600}
td.num{white-space:normal}
dl.facts{grid-template-columns:1fr}dl.facts dd{margin-bottom:.3rem}
}
"""

MEANINGS: tuple[tuple[str, str, str], ...] = (
    (
        "verified",
        "The attestation was signed by a key (or Sigstore identity) the builder of this site "
        "trusts, the snapshot inside is exactly the one that was signed, and every stored file "
        "it names has the recorded hash. Checked when the site was built, on the very files "
        "offered below.",
        "It does not mean the sources told the truth: a W&B value or an HTTP answer is the "
        "provider's word as one observer saw it, at one moment. It says who vouches for the "
        "observation, not that the observation is right.",
    ),
    (
        "FAILED verification",
        "The file does not verify with the trusted keys: it was altered, signed by someone "
        "else, replayed under another name, or damaged. Nothing from it is used on this site.",
        "It does not say who altered it, or that the run itself is wrong.",
    ),
    (
        "holds",
        "The value derived from the captured evidence, by the expression shown, is within the "
        "stated tolerance of the published value.",
        "It does not prove the published number right for reasons beyond the captured sources; "
        "only that those sources, as captured, agree with it.",
    ),
    (
        "fails",
        "The derived value is outside the tolerance of the published value: the evidence and the "
        "publication disagree by the gap shown.",
        "It does not say which side is wrong: the publication, or the source that was captured.",
    ),
    (
        "gap",
        "The expression could not be evaluated on this milestone's evidence (a field or file it "
        "reads is missing), so the claim neither holds nor fails.",
        "It is not a failure of the claim; it is a gap in what was captured.",
    ),
    (
        "changed",
        "Between two milestones, a source's captured content differs. Timestamps, heartbeats, "
        "step counters and request ids are listed apart as volatile and are not counted.",
        "A change is not an error: runs move on. It says what moved, and by how much.",
    ),
)


def _digest(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def csp() -> str:
    """No fetch of any kind and no script: only this page's own style sheet, by its hash."""
    return (
        f"default-src 'none'; style-src 'sha256-{_digest(CSS)}'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def _page(site: Site, title: str, body: Iterable[str], depth: int = 0) -> str:
    up = "../" * depth
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{e(csp())}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="color-scheme" content="light dark">',
            '<meta name="referrer" content="no-referrer">',
            f"<title>{e(title)}</title>",
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            '<header class="site">',
            f'<a class="home" href="{up}index.html">{e(site.title)}</a>',
            '<nav aria-label="site"><ul>'
            f'<li><a href="{up}index.html#timeline">Timeline</a></li>'
            f'<li><a href="{up}index.html#plots">Plots</a></li>'
            f'<li><a href="{up}index.html#downloads">Downloads</a></li>'
            f'<li><a href="{up}index.html#meaning">What the verdicts mean</a></li>'
            "</ul></nav>",
            "</header>",
            "<main>",
            *body,
            "</main>",
            "<footer>",
            f"<p>Built {_time(site.built)} by {e(site.tool)} with the trust named on the "
            f'<a href="{up}index.html#trust">first page</a>. The same content as JSON: '
            f'<a href="{up}site.json">site.json</a> (schema '
            f'<a href="{up}site.schema.json">site.schema.json</a>).</p>',
            "</footer>",
            "</body>",
            "</html>",
            "",
        ]
    )


def _time(stamp: str | None) -> str:
    if not stamp:
        return '<span class="muted">unknown time</span>'
    shown = stamp[:16].replace("T", " ") + " UTC"
    return f'<time datetime="{e(stamp)}">{e(shown)}</time>'


def _href(path: str, depth: int = 0) -> str:
    return e("../" * depth + quote(path, safe="/#-._~+"))


def anchor(prefix: str, name: str) -> str:
    """A fragment id for any string: the safe characters, plus a short hash when some were not."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", name)
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{prefix}-{safe}"


def _badge(milestone: Milestone) -> str:
    if milestone.verification.verified:
        return '<span class="badge ok">verified</span>'
    return '<span class="badge bad">FAILED verification</span>'


def _verdict(verdict: str) -> str:
    return f'<span class="v {e(verdict)}">{e(verdict)}</span>'


def _claims_line(milestone: Milestone) -> str:
    claims = milestone.claims
    if claims is None:
        return ""
    return (
        f'<p>Claims ({e(claims.file)}): <span class="holds">{claims.holds} hold</span>, '
        f'<span class="fails">{claims.fails} fail</span>, '
        f'<span class="gap">{claims.gaps} gap(s)</span></p>'
    )


def _note(note: NoteItem, depth: int) -> str:
    tone = "ok" if note.verified else "bad"
    link = f' <a href="{_href(note.download, depth)}">signed note</a>' if note.download else ""
    supersedes = f" Supersedes: {e(', '.join(note.supersedes))}." if note.supersedes else ""
    return (
        f'<li class="note">Note {_time(note.created)}: {escape.html_block(note.text)}{supersedes} '
        f'<span class="{tone}">({e(note.detail)})</span>{link}</li>'
    )


def _timeline_milestone(site: Site, milestone: Milestone) -> list[str]:
    v = milestone.verification
    out = [
        f'<li class="milestone {"verified" if v.verified else "failed"}" '
        f'id="{anchor("m", milestone.id)}"><article>',
        f'<h3><a href="{_href(milestone.page)}">{e(milestone.label)}</a> {_badge(milestone)}</h3>',
        f'<p class="meta">{_time(milestone.created)}'
        + (
            f" · snapshot sha256 <code>{e(milestone.snapshot_sha256[:16])}…</code>"
            if milestone.snapshot_sha256
            else ""
        )
        + "</p>",
        f'<p class="{"" if v.verified else "bad"}">{e(v.summary)}</p>',
        _claims_line(milestone),
    ]
    if milestone.claims is not None:
        out.append('<ul class="verdicts">')
        out.extend(f"<li>{_verdict(c.verdict)} {e(c.name)}</li>" for c in milestone.claims.results)
        out.append("</ul>")
    extra = [_note(n, 0) for n in milestone.notes]
    extra += [
        f'<li class="{"ok" if w.verified else "bad"}">Witness {e(w.signer)} ({e(w.vantage)}), '
        f"{_time(w.time)}: {e(w.detail)}</li>"
        for w in site.witnesses
        if w.milestone == milestone.id
    ]
    extra += [
        f'<li class="{"bad" if r.drift or not r.verified else "ok"}">Recheck {_time(r.time)}: '
        + e(r.detail)
        + (f" (changed: {e(', '.join(r.changed))})" if r.changed else "")
        + "</li>"
        for r in site.rechecks
        if r.milestone == milestone.id
    ]
    if extra:
        out += ["<ul>", *extra, "</ul>"]
    out.append("</article></li>")
    return out


def _timeline_interval(interval: Interval) -> list[str]:
    rows = [
        f'<tr><td data-label="source">{e(s.source)}</td><td data-label="status">'
        f'{e(s.status)}</td><td data-label="changes" class="num">{s.changes}</td>'
        f'<td data-label="in short">{e(s.headline)}</td></tr>'
        for s in interval.sources
    ]
    return [
        '<li class="interval">',
        f'<p class="diff-summary"><strong>{e(interval.a)} → {e(interval.b)}:</strong> '
        f"{e(interval.summary)}</p>",
        "<details><summary>What changed, source by source</summary>",
        '<table class="stack"><thead><tr><th>source</th><th>status</th><th>changes</th>'
        "<th>in short</th></tr></thead><tbody>",
        *rows,
        "</tbody></table></details>",
        f'<p><a href="{_href(interval.page)}">Full diff</a> · '
        f'<a href="{_href(interval.json_)}">as JSON</a></p>',
        "</li>",
    ]


def _plots(site: Site) -> list[str]:
    out = ['<section id="plots" aria-labelledby="plots-h">', '<h2 id="plots-h">Plots</h2>']
    verified = [m for m in site.milestones if m.verification.verified and m.claims is not None]
    names: list[str] = []
    for m in verified:
        assert m.claims is not None
        names.extend(c.name for c in m.claims.results if c.name not in names)
    figures = []
    for index, name in enumerate(names):
        points = []
        for m in verified:
            assert m.claims is not None
            claim = next((c for c in m.claims.results if c.name == name), None)
            if claim is None:
                continue
            published, derived = _number(claim.published_value), _number(claim.derived)
            if published is None and derived is None:
                continue
            points.append(svgplot.ClaimPoint(m.label, published, derived, claim.verdict))
        if not points or all(p.derived is None for p in points):
            continue
        figures.append(
            f"<figure><figcaption>{e(name)}</figcaption>"
            f"{svgplot.claim_chart(name, points, f'claim{index}')}</figure>"
        )
    out.append("<h3>Numeric claims: published against derived, per milestone</h3>")
    if figures:
        out += ['<div class="figures">', *figures, "</div>"]
    else:
        out.append('<p class="muted">No numeric claim was checked on a verified milestone.</p>')
    out.append("<h3>Real changes per source, between milestones</h3>")
    if site.intervals:
        sources: list[str] = []
        counts: dict[tuple[str, str], int] = {}
        columns = [f"{i.a} → {i.b}" for i in site.intervals]
        for column, interval in zip(columns, site.intervals, strict=True):
            for s in interval.sources:
                if s.source not in sources:
                    sources.append(s.source)
                counts[(s.source, column)] = s.changes
        out.append(
            "<figure><figcaption>Darker: more changes (volatile fields not counted)</figcaption>"
            f'<div class="scroll">{svgplot.changes_chart(sources, columns, counts, "changes")}'
            "</div></figure>"
        )
    else:
        out.append('<p class="muted">Fewer than two verified milestones: nothing to compare.</p>')
    out.append("</section>")
    return out


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _downloads(site: Site, depth: int = 0, milestone: str | None = None) -> list[str]:
    rows = [
        f'<tr><td data-label="file"><a href="{_href(d.path, depth)}" download>'
        f"{e(Path(d.path).name)}</a></td>"
        f'<td data-label="what">{e(d.role)}</td>'
        f'<td data-label="milestone">{e(d.milestone or "")}</td>'
        f'<td data-label="bytes" class="num">{d.size:,}</td>'
        f'<td data-label="sha256" class="sha"><code>{e(d.sha256)}</code></td></tr>'
        for d in site.downloads
        if milestone is None or d.milestone in (milestone, None)
    ]
    return [
        '<div class="scroll"><table class="stack"><thead><tr><th>file</th><th>what</th>'
        "<th>milestone</th>"
        "<th>bytes</th><th>sha256</th></tr></thead><tbody>",
        *rows,
        "</tbody></table></div>",
    ]


def _verify_box(site: Site, milestones: Sequence[Milestone], depth: int = 0) -> list[str]:
    out = [
        '<div class="verify-box">',
        "<h3>Verify it yourself</h3>",
        "<p>Install prov (<code>pip install prov</code>), save the files above into one folder, "
        "check their hashes, then verify each attestation or pack with the same trust this "
        "site was built with:</p>",
        '<pre class="cmd"><code>sha256sum -c SHA256SUMS    # macOS: shasum -a 256 -c SHA256SUMS'
        "</code></pre>",
    ]
    for m in milestones:
        out.append(f"<p>{e(m.label)}:</p>")
        out.append(
            '<pre class="cmd"><code>' + "\n".join(e(c) for c in m.commands) + "</code></pre>"
        )
    out.append(
        f'<p class="muted">Compare the key fingerprints with the ones the publisher announced: '
        f"{e(', '.join(k.keyid[:16] for k in site.trust.keys) or 'none')}.</p>"
    )
    out.append("</div>")
    return out


def _meaning() -> list[str]:
    out = [
        '<section id="meaning" aria-labelledby="meaning-h">',
        '<h2 id="meaning-h">What the verdicts mean, and what they do not</h2>',
        '<dl class="meaning">',
    ]
    for word, means, not_means in MEANINGS:
        out.append(f"<dt>{e(word)}</dt><dd>{e(means)}</dd><dd><em>Not:</em> {e(not_means)}</dd>")
    out += ["</dl>", "</section>"]
    return out


def write_index(root: Path, site: Site) -> None:
    """index.html and site.json (the downloads must be known by then)."""
    verified = sum(1 for m in site.milestones if m.verification.verified)
    failed = len(site.milestones) - verified
    status = (
        f"{len(site.milestones)} milestone(s): {verified} verified"
        + (f", {failed} FAILED verification" if failed else "")
        + f"; checked {_time(site.built)}."
    )
    timeline: list[str] = []
    intervals = {(i.a, i.b): i for i in site.intervals}
    shown = [m for m in site.milestones]
    previous: Milestone | None = None
    for milestone in shown:
        if previous is not None and (previous.label, milestone.label) in intervals:
            timeline += _timeline_interval(intervals[(previous.label, milestone.label)])
        timeline += _timeline_milestone(site, milestone)
        if milestone.verification.verified:
            previous = milestone
    body = [
        f"<h1>{e(site.title)}</h1>",
        '<p class="lede">The provenance of this run, milestone by milestone: what each source '
        "said, who signed it, which published numbers the evidence supports, and what changed "
        "in between. Every verdict was computed when this page was built, from the files "
        "offered for download below, which anyone can check again.</p>",
        f'<p class="summary{" bad" if failed else ""}">{status}</p>',
        f'<p id="trust">{e(site.trust.words)}</p>',
        '<section id="timeline" aria-labelledby="timeline-h">',
        '<h2 id="timeline-h">Timeline</h2>',
        '<ol class="timeline">',
        *timeline,
        "</ol>",
        "</section>",
        *_plots(site),
        '<section id="downloads" aria-labelledby="downloads-h">',
        '<h2 id="downloads-h">Downloads</h2>',
        "<p>Every attestation, evidence pack and public key, with its sha256 (also in "
        f'<a href="{_href("files/SHA256SUMS")}" download>SHA256SUMS</a>).</p>',
        *_downloads(site),
        *_verify_box(site, site.milestones),
        "</section>",
        *_meaning(),
    ]
    (root / "index.html").write_text(_page(site, site.title, body), encoding="utf-8")
    (root / "site.json").write_text(site.to_json(), encoding="utf-8")


def _claims_table(milestone: Milestone) -> list[str]:
    claims = milestone.claims
    if claims is None:
        return []
    out = [
        '<section id="claims" aria-labelledby="claims-h">',
        f'<h2 id="claims-h">Claims ({e(claims.file)})</h2>',
        _claims_line(milestone),
        '<div class="scroll"><table class="stack"><thead><tr><th>claim</th><th>published</th>'
        "<th>derived</th>"
        "<th>gap</th><th>tolerance</th><th>verdict</th></tr></thead><tbody>",
    ]
    for claim in claims.results:
        out.append(_claim_row(claim))
    out += ["</tbody></table></div>", "</section>"]
    return out


def _claim_row(claim: ClaimItem) -> str:
    reads = []
    for r in claim.reads:
        target = (
            f' from <a href="#{anchor("capture", r.source)}">{e(r.source)}</a>' if r.source else ""
        )
        shown = (
            f"<code>{e(r.shown)}</code>"
            if r.error is None
            else f'<span class="muted">not read here: {e(r.error)}</span>'
        )
        reads.append(f"<li><code>{e(r.path)}</code> = {shown}{target}</li>")
    published_in = (
        f'<br><span class="muted">{e(claim.published_in)}</span>' if claim.published_in else ""
    )
    error = f'<br><span class="gap">{e(claim.error)}</span>' if claim.error else ""
    superseded = "".join(
        f'<br><span class="warn">superseded by {e(s)}</span>' for s in claim.superseded_by
    )
    return (
        f'<tr><td data-label="claim"><strong>{e(claim.name)}</strong><br>'
        f'<code class="muted">{e(claim.expression)}</code>'
        + (f'<ul class="reads">{"".join(reads)}</ul>' if reads else "")
        + f"{error}{superseded}</td>"
        f'<td data-label="published">{e(claim.published)}{published_in}</td>'
        f'<td data-label="derived" class="num">{e(claim.derived_shown)}</td>'
        f'<td data-label="gap" class="num">{e(claim.gap)}</td>'
        f'<td data-label="tolerance" class="num">{e(claim.tolerance)}</td>'
        f'<td data-label="verdict">{_verdict(claim.verdict)}</td></tr>'
    )


def _milestone_page(site: Site, milestone: Milestone) -> str:
    v = milestone.verification
    facts = [
        ("label", e(milestone.label)),
        ("created", _time(milestone.created)),
        ("snapshot sha256", f"<code>{e(milestone.snapshot_sha256 or 'unknown')}</code>"),
        ("signed by", e(", ".join(v.signers) or "no trusted signer")),
        ("read from", e(milestone.origin)),
    ]
    if v.times:
        facts.append(("times", e("; ".join(v.times))))
    tones = {"passed": "ok", "failed": "bad", "skipped": "muted"}
    steps = [
        f'<tr><td data-label="step">{s.number}. {e(s.name)}</td>'
        f'<td data-label="result" class="{tones[s.status]}">{e(s.status)}</td>'
        f'<td data-label="detail">{e(s.detail)}</td></tr>'
        for s in v.steps
    ]
    body = [
        f"<h1>Milestone {e(milestone.label)} {_badge(milestone)}</h1>",
        f'<p class="summary{"" if v.verified else " bad"}">{e(v.summary)}</p>',
        '<dl class="facts">',
        *(f"<dt>{k}</dt><dd>{val}</dd>" for k, val in facts),
        "</dl>",
        "<h2>Verification, step by step</h2>",
        '<table class="stack"><thead><tr><th>step</th><th>result</th><th>detail</th></tr>'
        "</thead><tbody>",
        *steps,
        "</tbody></table>",
    ]
    if not v.verified:
        body.append(
            '<p class="bad">Nothing from this file is used on the site: no claims are checked '
            "against it and no diff is drawn from it.</p>"
        )
    body += _claims_table(milestone)
    if milestone.captures:
        body += [
            '<section id="captures" aria-labelledby="captures-h">',
            '<h2 id="captures-h">Captures</h2>',
        ]
        for c in milestone.captures:
            locator = "".join(
                f"<dt>{e(k)}</dt><dd><code>{e(val)}</code></dd>" for k, val in c.locator
            )
            tone = "ok" if c.status == "ok" else "bad"
            body.append(
                f'<section class="capture" id="{anchor("capture", c.source)}">'
                f'<h3>{e(c.source)} <span class="muted">[{e(c.kind)}]</span> '
                f'<span class="{tone}">{e(c.status)}</span></h3>'
                f"<p>{e(c.meaning)}.</p>"
                f'<dl class="facts"><dt>captured</dt><dd>{_time(c.started)}</dd>'
                f"<dt>establishes</dt><dd>{e(', '.join(c.establishes) or 'nothing')}</dd>"
                f"{locator}<dt>content digest</dt><dd><code>{e(c.digest)}</code></dd></dl>"
                "</section>"
            )
        body.append("</section>")
    if milestone.notes:
        body += ["<h2>Notes</h2>", "<ul>", *(_note(n, 1) for n in milestone.notes), "</ul>"]
    body += _observers(site, milestone)
    body += [
        '<section id="files" aria-labelledby="files-h">',
        '<h2 id="files-h">Files</h2>',
        *_downloads(site, 1, milestone.id),
        *_verify_box(site, [milestone], 1),
        "</section>",
    ]
    return _page(site, f"{milestone.label} · {site.title}", body, depth=1)


def _observers(site: Site, milestone: Milestone) -> list[str]:
    """Witnesses and rechecks of this milestone: who saw the same again, and what drifted."""
    witnesses = [w for w in site.witnesses if w.milestone == milestone.id]
    rechecks = [r for r in site.rechecks if r.milestone == milestone.id]
    if not witnesses and not rechecks:
        return []
    out = [
        '<section id="observers" aria-labelledby="observers-h">',
        '<h2 id="observers-h">Witnesses and rechecks</h2>',
        "<ul>",
    ]
    for w in witnesses:
        link = f' <a href="{_href(w.download, 1)}">statement</a>' if w.download else ""
        out.append(
            f'<li class="{"ok" if w.verified else "bad"}">Witness {e(w.signer)} from '
            f"{e(w.vantage)}, {_time(w.time or None)}: {e(w.detail)}{link}</li>"
        )
    for r in rechecks:
        link = f' <a href="{_href(r.download, 1)}">signed recheck</a>' if r.download else ""
        out.append(
            f'<li class="{"bad" if r.drift else "ok"}">Recheck {_time(r.time)}: '
            f"{e(r.detail)}{link}</li>"
        )
    out += ["</ul>", "</section>"]
    return out


def _diff_page(site: Site, interval: Interval, diff: Diff) -> str:
    body = [
        f"<h1>What changed: {e(interval.a)} → {e(interval.b)}</h1>",
        f'<p class="summary">{e(interval.summary)}</p>',
        f'<p><a href="{_href(f"m/{interval.a}.html", 1)}">{e(interval.a)}</a> → '
        f'<a href="{_href(f"m/{interval.b}.html", 1)}">{e(interval.b)}</a> · '
        f'<a href="{_href(interval.json_, 1)}">this diff as JSON</a></p>',
        '<div class="diff">',
        *diff_body(diff),
        "</div>",
    ]
    return _page(site, f"{interval.a} → {interval.b} · {site.title}", body, depth=1)


def write(root: Path, site: Site, diffs: Sequence[Diff]) -> None:
    """The milestone pages, the diff pages and their JSON, and the site's schema."""
    from provenance.render.schemas import render as render_schema
    from provenance.render.schemas import site_schema

    (root / "m").mkdir(exist_ok=True)
    (root / "diff").mkdir(exist_ok=True)
    for milestone in site.milestones:
        (root / milestone.page).write_text(_milestone_page(site, milestone), encoding="utf-8")
    for interval, diff in zip(site.intervals, diffs, strict=True):
        (root / interval.page).write_text(_diff_page(site, interval, diff), encoding="utf-8")
        (root / interval.json_).write_text(
            json.dumps(diff.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    (root / "site.schema.json").write_text(render_schema(site_schema()), encoding="utf-8")


def write_sums(root: Path, site: Site) -> None:
    lines = [f"{d.sha256}  {Path(d.path).name}" for d in site.downloads]
    (root / "files" / "SHA256SUMS").write_text("\n".join(lines) + "\n", encoding="utf-8")
