"""``prov snapshot``'s summary: what was written, who signed, each source; warnings apart."""

from __future__ import annotations

from provenance.capture.signed import Taken

__all__ = ["taken_text", "taken_warnings"]


def taken_text(taken: Taken) -> str:
    """The lines for stdout."""
    result = taken.result
    snap = result.snapshot
    lines = [f"snapshot {snap.label}  sha256:{snap.sha256().hex}"]
    lines.append(f"  attestation: {result.attestation}")
    if taken.timestamp is not None:
        lines.append(f"  timestamp: {taken.timestamp}")
    lines.append(f"  store: {taken.store.root}")
    lines.append(f"  signed by: {', '.join(taken.signed_by) or '(unsigned)'}")
    for capture in snap.captures:
        mark = (
            "ok"
            if capture.status == "ok"
            else f"FAILED: {capture.error.message if capture.error else ''}"
        )
        lines.append(f"  {capture.source} [{capture.kind}] {capture.digest[:19]}... {mark}")
    return "".join(f"{line}\n" for line in lines)


def taken_warnings(taken: Taken) -> list[str]:
    """The lines for stderr: what a person should know, and the sources that failed."""
    result = taken.result
    lines = [f"warning: {warning}" for warning in result.warnings]
    lines += [
        f"warning: cross-check {key}: {check.detail}"
        for key, check in sorted(result.snapshot.cross_checks.items())
        if check.result == "mismatch"
    ]
    if result.partial:
        lines.append(
            f"warning: {len(result.failed)} source(s) failed and were recorded as such: "
            + ", ".join(result.failed)
        )
    return lines
