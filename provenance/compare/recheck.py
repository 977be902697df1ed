"""Is what was attested still what is served? A snapshot's captures against the same sources now.

Each source comes out as one of four outcomes:

* ``same``: no real change (volatile fields such as Date headers and step counters apart, and
  what depends only on who asked and from where: the User-Agent prov sends, TLS parameters,
  whether a credential was used);
* ``changed``: a real change, with the diff;
* ``gone``: what was asked for no longer exists (HTTP 404 / 410, a ref, revision or run the
  source no longer knows);
* ``failed-now``: it could not be observed now (a timeout, a 5xx, a request that cannot be
  replayed): nothing is known either way.

A recheck can be signed: it is then a snapshot of its own (the captures made now), whose
``recheck`` field links it to the snapshot it rechecked and records the outcomes, so drift found
later is evidence too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal, get_args

from pydantic import Field

from provenance.capture import crosscheck
from provenance.capture.recheck import Recollected, is_gone
from provenance.compare.diff import CaptureDiff, Context, compare_captures, headline, volatile_for
from provenance.compare.evidence import BlobSource
from provenance.model import (
    BlobDigest,
    Outcome,
    Recheck,
    Snapshot,
    SnapshotLink,
    Timestamp,
    WireModel,
    utc_now,
)

__all__ = [
    "SCHEMA",
    "RecheckRef",
    "RecheckReport",
    "SourceCheck",
    "classify",
    "recheck_snapshot",
    "report",
]

SCHEMA: Final = "https://prov.dev/recheck-report/v1"

VANTAGE_VOLATILE: tuple[str, ...] = (
    "request_headers",
    "tls",
    "http_version",
    "server_ip",
    "authenticated",
)
"""What differs with who asks and from where, not with what is served."""


class SourceCheck(WireModel):
    """One source of the snapshot, observed again."""

    source: str
    kind: str
    outcome: Outcome
    detail: str = Field(description="one line: what changed, or why it failed")
    attested: BlobDigest = Field(description="the content digest in the snapshot")
    observed: BlobDigest = Field(description="the content digest of the capture made now")
    match: Literal["digest", "content"] | None = Field(
        default=None,
        description="for same: the same content digest, or the same content apart from "
        "volatile fields",
    )
    diff: CaptureDiff | None = Field(default=None, description="for changed: the diff")


class RecheckReport(WireModel):
    """``prov recheck --format json``: every source of a snapshot against the same source now."""

    schema_: Literal["https://prov.dev/recheck-report/v1"] = Field(default=SCHEMA, alias="schema")
    snapshot: SnapshotLink
    checked: Timestamp
    same: bool = Field(description="every source is the same")
    counts: dict[str, int] = Field(description="sources per outcome")
    sources: tuple[SourceCheck, ...]
    recheck: SnapshotLink | None = Field(
        default=None, description="the signed recheck snapshot, when one was written"
    )
    attestation: str | None = Field(default=None, description="its file")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class RecheckRef(WireModel):
    """A signed recheck as ``prov log`` shows it, under the snapshot it rechecked."""

    label: str
    sha256: str
    created: str
    of: SnapshotLink
    outcomes: dict[str, Outcome]
    signers: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        parts = []
        for outcome in get_args(Outcome):
            names = sorted(s for s, o in self.outcomes.items() if o == outcome)
            if names and outcome == "same":
                parts.append(f"{len(names)} same")
            elif names:
                parts.append(f"{len(names)} {outcome.replace('-', ' ')} ({', '.join(names)})")
        return ", ".join(parts) or "no sources"


def link(snapshot: Snapshot) -> SnapshotLink:
    return SnapshotLink(
        label=snapshot.label, sha256=snapshot.sha256().hex, created=snapshot.created
    )


def classify(item: Recollected, attested: BlobSource, observed: BlobSource) -> SourceCheck:
    """The outcome for one source: the attested capture against the one made now."""
    a, b = item.original, item.fresh
    volatile = volatile_for(a, b).plus(VANTAGE_VOLATILE)
    diff = compare_captures(a, b, Context(attested, observed, volatile))
    base: dict[str, Any] = {
        "source": a.source,
        "kind": a.kind,
        "attested": a.digest,
        "observed": b.digest,
    }
    if item.replayed and not diff.differs:
        match = "digest" if a.digest == b.digest else "content"
        volatile_count = diff.volatile_changes
        detail = (
            "the same content digest"
            if match == "digest"
            else (f"the same content; {volatile_count} volatile field(s) differ")
        )
        return SourceCheck(**base, outcome="same", detail=detail, match=match)
    error = b.error.message if b.error else None
    if item.attested_commit_gone:
        commit = str(a.data.get("commit"))
        detail = (
            f"the attested commit {commit[:12]} no longer exists; the ref now names "
            f"{str(b.data.get('commit'))[:12]} (a force-push?)"
        )
        return SourceCheck(**base, outcome="gone", detail=detail, diff=diff)
    if item.gone or (is_gone(b) and not is_gone(a)):
        status = b.data.get("status") if b.error is None else None
        detail = error or f"HTTP {status} now"
        return SourceCheck(**base, outcome="gone", detail=detail, diff=diff)
    if not item.replayed or b.status == "failed":
        # Failing now (however the snapshot fared) says nothing about what is served.
        return SourceCheck(**base, outcome="failed-now", detail=error or "failed")
    detail = headline(diff)
    if item.attested_commit_gone is False:
        detail += f"; the attested commit {str(a.data.get('commit'))[:12]} still exists"
    return SourceCheck(**base, outcome="changed", detail=detail, diff=diff)


def report(
    snapshot: Snapshot,
    checks: Sequence[SourceCheck],
    checked: str,
    recheck: Snapshot | None = None,
    attestation: str | None = None,
) -> RecheckReport:
    counts = {outcome: 0 for outcome in get_args(Outcome)}
    for check in checks:
        counts[check.outcome] += 1
    return RecheckReport(
        snapshot=link(snapshot),
        checked=checked,
        same=all(c.outcome == "same" for c in checks),
        counts=counts,
        sources=tuple(checks),
        recheck=link(recheck) if recheck else None,
        attestation=attestation,
    )


def recheck_label(label: str, when: datetime | None = None) -> str:
    """``LABEL.recheck-<UTC time>``, cut so that it stays a valid label."""
    stamp = (when or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    suffix = f".recheck-{stamp}"
    return label[: 200 - len(suffix)] + suffix


def recheck_snapshot(
    original: Snapshot, items: Sequence[Recollected], checks: Sequence[SourceCheck], label: str
) -> Snapshot:
    """The captures made now, as a snapshot linked to the one rechecked."""
    captures = sorted((item.fresh for item in items), key=lambda c: c.source)
    return Snapshot(
        label=label,
        created=utc_now(),
        captures=tuple(captures),
        cross_checks=crosscheck.run(captures),
        recheck=Recheck(of=link(original), outcomes={c.source: c.outcome for c in checks}),
    )
