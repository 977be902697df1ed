"""Comparing two snapshots: what changed between two milestones (docs/diff-and-claims.md).

Captures are matched by source name and compared by kind (``kinds.COMPARERS``); every capture is
seen as a few JSON documents (``capture``: status, error, establishes; ``request``; ``data``;
and, when the blobs are at hand, the structured files it holds), which ``document_diff`` walks.
The result is a ``diffmodel.Diff``. This module is the entry point and names the public parts:
``diffmodel`` (the wire format), ``document_diff`` (the differ and volatile paths), ``kinds``
(per-kind comparers), ``listing_merge`` (manifests of object-store listings).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from provenance._internal.files import write_new
from provenance.attest.signing import Attester
from provenance.compare.diffmodel import (
    SCHEMA,
    CaptureDiff,
    Change,
    ChangeKind,
    ClaimChange,
    Counts,
    Diff,
    DocumentDiff,
    FileChange,
    Mover,
    NoteRef,
    SnapshotRef,
)
from provenance.compare.document_diff import (
    COMMON_VOLATILE,
    VOLATILE,
    Volatile,
    diff_document,
    is_weights,
    movers,
    volatile_for,
)
from provenance.compare.evidence import Evidence, NoBlobs
from provenance.compare.kinds import (
    COMPARERS,
    IMPORTANT_HEADERS,
    MAX_OBJECTS,
    Comparer,
    Context,
    Parts,
    compare_generic,
    envelope_documents,
)
from provenance.compare.listing_merge import ObjectStep, merge_entries, merge_manifests
from provenance.model import Capture, Snapshot

__all__ = [
    "COMMON_VOLATILE",
    "COMPARERS",
    "IMPORTANT_HEADERS",
    "MAX_OBJECTS",
    "SCHEMA",
    "VOLATILE",
    "CaptureDiff",
    "Change",
    "ChangeKind",
    "ClaimChange",
    "Comparer",
    "Context",
    "Counts",
    "Diff",
    "DocumentDiff",
    "FileChange",
    "Mover",
    "NoteRef",
    "ObjectStep",
    "Parts",
    "SnapshotRef",
    "Volatile",
    "compare",
    "compare_captures",
    "compare_snapshots",
    "diff_document",
    "headline",
    "is_weights",
    "merge_entries",
    "merge_manifests",
    "movers",
    "select",
    "statement",
    "volatile_for",
    "write_signed",
]


def compare_captures(a: Capture | None, b: Capture | None, context: Context) -> CaptureDiff:
    if a is None or b is None:
        present = a or b
        assert present is not None
        return CaptureDiff(
            source=present.source,
            kind=present.kind,
            status="added" if a is None else "removed",
            digest_a=a.digest if a else None,
            digest_b=b.digest if b else None,
        )
    base = {"source": a.source, "digest_a": a.digest, "digest_b": b.digest}
    if a.kind != b.kind:
        return CaptureDiff(
            **base,
            kind=f"{a.kind} -> {b.kind}",
            status="changed",
            notices=("the kind changed: the captures are not compared field by field",),
        )
    if a.digest == b.digest:
        return CaptureDiff(**base, kind=a.kind, status="unchanged")
    comparer = COMPARERS.get(a.kind, compare_generic)
    parts = comparer(a, b, context)
    docs = envelope_documents(a, b, context) + parts.documents
    changed = bool(docs or parts.files)
    return CaptureDiff(
        **base,
        kind=a.kind,
        status="changed" if changed else "unchanged",
        documents=tuple(docs),
        files=tuple(parts.files),
        notices=tuple(parts.notices),
    )


def _ref(evidence: Evidence) -> SnapshotRef:
    snapshot = evidence.snapshot
    return SnapshotRef(
        label=snapshot.label,
        sha256=snapshot.sha256().hex,
        created=snapshot.created,
        origin=evidence.origin,
    )


def compare(a: Evidence, b: Evidence, notes: Sequence[NoteRef] = ()) -> Diff:
    """Compare two snapshots, source by source."""
    captures_a = {c.source: c for c in a.snapshot.captures}
    captures_b = {c.source: c for c in b.snapshot.captures}
    results = []
    for source in sorted(set(captures_a) | set(captures_b)):
        capture_a, capture_b = captures_a.get(source), captures_b.get(source)
        context = Context(a.blobs, b.blobs, volatile_for(capture_a, capture_b))
        results.append(compare_captures(capture_a, capture_b, context))
    counts = _counts(results)
    return Diff(
        a=_ref(a),
        b=_ref(b),
        equal=counts.sources_changed == 0,
        counts=counts,
        captures=tuple(results),
        notes=tuple(notes),
    )


def _counts(results: Sequence[CaptureDiff]) -> Counts:
    return Counts(
        sources_changed=sum(1 for r in results if r.differs),
        changes=sum(r.real_changes + (r.status in ("added", "removed")) for r in results),
        volatile=sum(r.volatile_changes for r in results),
    )


def select(diff: Diff, sources: Sequence[str] = (), paths: Sequence[str] = ()) -> Diff:
    """The part of a diff about some sources and some paths (``prov diff --source / --path``),
    its counts and ``equal`` recomputed. Both are shell patterns: ``sources`` on the source name,
    ``paths`` on a file's path (a changed file keeps its documents and constants) or a change's
    readable path (``config.trainer.*``, ``phases[*]``)."""
    captures = [
        c
        for c in diff.captures
        if not sources or any(fnmatch.fnmatchcase(c.source, p) for p in sources)
    ]
    if paths:
        captures = [_within(c, paths) for c in captures]
    counts = _counts(captures)
    return diff.model_copy(
        update={"captures": tuple(captures), "counts": counts, "equal": counts.sources_changed == 0}
    )


def _within(capture: CaptureDiff, paths: Sequence[str]) -> CaptureDiff:
    def matches(path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, p) for p in paths)

    documents = []
    for document in capture.documents:
        where = document.name.partition(":")[2] if ":" in document.name else None
        if where is not None:
            if matches(where):
                documents.append(document)
            continue
        changes = tuple(c for c in document.changes if matches(c.path))
        if changes:
            documents.append(document.model_copy(update={"changes": changes}))
    files = tuple(f for f in capture.files if matches(f.path))
    status = capture.status
    if status == "changed" and not documents and not files:
        status = "unchanged"
    return capture.model_copy(
        update={"documents": tuple(documents), "files": files, "status": status}
    )


def compare_snapshots(a: Snapshot, b: Snapshot) -> Diff:
    """Compare two snapshots with no blobs at hand (file contents by digest only)."""
    return compare(Evidence(a, a.label, 0, NoBlobs()), Evidence(b, b.label, 0, NoBlobs()))


DIFF_HINT = "choose another path with -o"


def write_signed(diff: Diff, attester: Attester, output: Path | None = None) -> Path:
    """Sign the diff's statement and write it (never over a file); where it went."""
    target = output or Path(f"diff-{diff.a.label}-{diff.b.label}.intoto.jsonl")
    write_new(target, attester.attest(statement(diff)), "signed diff", hint=DIFF_HINT)
    return target


def statement(diff: Diff) -> bytes:
    """An in-toto statement whose subjects are both snapshots and whose predicate is the diff."""
    from provenance.attest.statement import subject_name, wrap

    subjects = []
    for ref in (diff.a, diff.b):
        subject = {"name": subject_name(ref.label), "digest": {"sha256": ref.sha256}}
        if subject not in subjects:
            subjects.append(subject)
    return wrap(subjects, SCHEMA, diff.to_json())


def headline(capture: CaptureDiff, limit: int = 3) -> str:
    """One short phrase of what changed in a capture, for ``prov log``."""
    if capture.status in ("added", "removed"):
        return f"{capture.source} {capture.status}"
    bits: list[str] = []
    # What was observed first, what was asked for last (a new ref implies a new commit).
    rank = {"data": 0, "capture": 1, "request": 3}
    for document in sorted(capture.documents, key=lambda d: rank.get(d.name, 2)):
        for change in document.changes:
            if change.volatile or len(bits) >= limit:
                continue
            if change.change == "changed" and not isinstance(change.old, (dict, list)):
                bits.append(f"{change.path} {_short(change.old)} -> {_short(change.new)}")
            elif change.change == "added" and document.name in ("data", "request"):
                bits.append(f"+{change.path}")
            elif change.change == "removed" and document.name in ("data", "request"):
                bits.append(f"-{change.path}")
            elif change.change in ("weights", "set"):
                bits.append(f"{change.path} {change.change}")
    if capture.files:
        bits.append(f"{len(capture.files)} file(s)")
    real = capture.real_changes
    return f"{capture.source} ({'; '.join(bits) or f'{real} change(s)'})"


def _short(value: Any) -> str:
    if isinstance(value, str) and len(value) == 40 and all(c in "0123456789abcdef" for c in value):
        return value[:8]
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:37] + "..."
