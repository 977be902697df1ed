"""Recheck reports, witness runs and observer counts as text."""

from __future__ import annotations

from pathlib import Path

from provenance.compare.recheck import RecheckReport, SourceCheck
from provenance.model import Vantage
from provenance.render import escape
from provenance.render.sections import section
from provenance.render.text import Paint, row_lines
from provenance.verify.observers import CaptureEvidence, ObserverReport

__all__ = ["observer_lines", "render_recheck", "render_witness"]

MAX_ROWS = 8  # changes shown per changed source; `prov diff` and --format json have them all
MAX_CHILDREN = 3

_SHOWN = {"same": "same", "changed": "changed", "gone": "gone", "failed-now": "failed now"}


def _join(lines: list[str]) -> str:
    """Captured and signed strings (source names, labels, values) shown inert."""
    return "".join(escape.text(line) + "\n" for line in lines)


def _source_lines(check: SourceCheck) -> list[str]:
    lines = [f"  {_SHOWN[check.outcome]:<11} {check.source} [{check.kind}]: {check.detail}"]
    if check.outcome == "changed" and check.diff is not None:
        paint = Paint(False)
        rows = [row for block in section(check.diff).blocks for row in block.rows]
        for row in rows[:MAX_ROWS]:
            row.children = row.children[:MAX_CHILDREN]
            lines.extend(row_lines(row, "      ", paint))
        if len(rows) > MAX_ROWS:
            lines.append(f"      ... {len(rows) - MAX_ROWS} more change(s): see --format json")
    return lines


def _counts(report: RecheckReport) -> str:
    return ", ".join(f"{n} {_SHOWN[outcome]}" for outcome, n in report.counts.items())


def render_recheck(report: RecheckReport) -> str:
    snap = report.snapshot
    lines = [
        f"recheck of {snap.label} (sha256:{snap.sha256[:12]}, created {snap.created}), "
        f"checked {report.checked}"
    ]
    for check in report.sources:
        lines.extend(_source_lines(check))
    lines.append(_counts(report))
    if report.recheck is not None:
        lines.append(
            f"signed recheck: {report.attestation} "
            f"(label {report.recheck.label}, sha256:{report.recheck.sha256[:12]})"
        )
    return _join(lines)


def render_witness(report: RecheckReport, vantage: Vantage, statement: Path | None) -> str:
    snap = report.snapshot
    where = vantage.operator + (f", {vantage.region}" if vantage.region else "")
    if vantage.reported_ip:
        where += f", seen as {vantage.reported_ip} by {vantage.reported_by}"
    lines = [f"witness of {snap.label} (sha256:{snap.sha256[:12]}) from {where}"]
    for check in report.sources:
        mark = "witnessed" if check.outcome == "same" else f"NOT signed ({_SHOWN[check.outcome]})"
        lines.append(f"  {mark:<24} {check.source} [{check.kind}]: {check.detail}")
    signed = sum(1 for c in report.sources if c.outcome == "same")
    if statement is not None:
        lines.append(f"signed {signed} of {len(report.sources)} capture(s): {statement}")
    else:
        lines.append("nothing matched: no witness statement was written")
    return _join(lines)


def _observers(capture: CaptureEvidence) -> str:
    publisher = sum(1 for o in capture.observers if o.role == "publisher")
    parts = []
    for o in capture.observers:
        if o.role == "witness":
            label = " ".join(p for p in (o.operator, o.region) if p) or o.keyid[:16]
            parts.append(label)
    who = f"publisher x{publisher}" if publisher != 1 else "publisher"
    if parts:
        who += f" + {len(parts)} witness(es): {', '.join(parts)}"
    return f"{capture.signers} signer(s) ({who})"


def observer_lines(report: ObserverReport) -> list[str]:
    """Per capture: the strongest level, who observed it, the quorum; then what was not proven
    (once for what holds of every capture, such as a missing timestamp)."""
    lines = []
    for check in report.witnesses:
        if not check.verified:
            lines.append(f"  witness {check.path}: not counted: {check.problem}")
    common = (
        set.intersection(*(set(c.not_proven) for c in report.captures))
        if len(report.captures) > 1
        else set()
    )
    for capture in report.captures:
        level = capture.level or "nothing"
        mark = "" if capture.met else "  BELOW QUORUM"
        quorum = f"; {capture.quorum}" if capture.quorum else ""
        lines.append(
            f"  {capture.source} [{capture.kind}]: {level}; {_observers(capture)}{quorum}{mark}"
        )
        lines.extend(
            f"      not proven: {text}" for text in capture.not_proven if text not in common
        )
    lines.extend(f"  not proven for every capture: {text}" for text in sorted(common))
    lines.append(f"  {report.summary}")
    return [escape.text(line) for line in lines]
