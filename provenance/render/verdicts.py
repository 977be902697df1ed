"""``prov verify``'s text: each step, what was trusted because a pack said so, the verdict."""

from __future__ import annotations

from typing import Any

from provenance.render.escape import text
from provenance.render.witnesses import observer_lines
from provenance.verify.audit import Audit
from provenance.verify.oci import ImageAudit
from provenance.verify.steps import Report

__all__ = ["audit_text", "image_text"]

MARKS = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}


def _steps(report: Report) -> list[str]:
    return [
        text(f"[{MARKS[step.status]}] {step.number}. {step.name}: {step.detail}")
        for step in report.steps
    ]


def _verified_line(report: Report) -> str:
    snap, checked = report.snapshot, report.checked
    if snap is not None:
        return f"verified: {snap.label} ({len(snap.captures)} captures, created {snap.created})"
    assert checked is not None, "a verified report holds a snapshot or a signed document"
    about = ", ".join(label for label, _ in checked.about)
    return f"verified: a signed {checked.kind} about {about}"


def audit_text(result: Audit) -> str:
    """A file or pack's verification, one line per step (the error goes to stderr apart)."""
    report = result.report
    lines = [f"trusted from the pack (--trust-pack): {text(line)}" for line in result.trusted]
    lines += [f"note: {text(note)}" for note in result.notes]
    lines += _steps(report)
    if report.observers is not None:
        lines += ["evidence per capture:", "\n".join(observer_lines(report.observers))]
    if result.error is None:
        lines.append(_verified_line(report))
    return "".join(f"{line}\n" for line in lines)


def image_text(audit: ImageAudit) -> str:
    """Every attestation attached to an image, each with its steps and verdict."""
    where = "the referrers API" if audit.method == "referrers-api" else "the referrers tag scheme"
    lines = [
        f"image {audit.image} is {audit.subject}",
        f"  {len(audit.results)} attestation(s) found through {where}",
    ]
    for entry in audit.results:
        lines += ["", f"{entry['filename']}  (manifest {entry['manifest']})"]
        lines += _attached(entry)
    return "".join(f"{line}\n" for line in lines)


def _attached(entry: dict[str, Any]) -> list[str]:
    report = entry["report"]
    lines = _steps(report) if report is not None else []
    if not entry["verified"]:
        return [*lines, text(f"FAILED: {entry['error']}")]
    snap = report.snapshot
    lines.append(f"verified: {snap.label} ({len(snap.captures)} captures)")
    if entry["expected_label"] is None:
        lines.append(
            "  note: its name is not LABEL.intoto.jsonl: the signed label was not "
            "checked (pass --expect-label)"
        )
    if entry["captures_image"]:
        lines.append(
            f"  the snapshot captured this image: source {', '.join(entry['captures_image'])}"
        )
    else:
        lines.append("  note: the snapshot holds no capture of this image's digest")
    return lines
