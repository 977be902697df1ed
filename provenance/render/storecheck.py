"""``prov fsck``'s lines: what was removed or left, what is corrupt, and the counts."""

from __future__ import annotations

from provenance.verify.fsck import StoreCheck

__all__ = ["fsck_text"]


def fsck_text(check: StoreCheck) -> str:
    report = check.report
    lines = [f"removed an interrupted write: {name}" for name in check.removed]
    lines += [f"left alone (a write in progress, or not removable): {n}" for n in check.in_flight]
    lines += [f"CORRUPT: {name}" for name in check.corrupt]
    lines += [f"DAMAGED: {problem}" for problem in report.damaged]
    packs = f" ({report.packs} pack(s))" if report.packs else ""
    lines.append(
        f"checked {report.checked} object(s), {report.bytes:,} bytes{packs} in {check.root}: "
        f"{len(report.corrupt)} corrupt"
    )
    if check.not_counted is not None:
        lines.append(f"unreferenced objects not counted: {check.not_counted}")
    elif check.unreferenced is not None and check.unreferenced[0]:
        count, size = check.unreferenced
        lines.append(
            f"{count} object(s), {size:,} bytes, referenced by no snapshot "
            "or note: `prov gc` removes them"
        )
    return "".join(f"{line}\n" for line in lines)
