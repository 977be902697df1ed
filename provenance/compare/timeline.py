"""The timeline of a store: its snapshots in order, what changed between neighbours, notes.

Neighbours are compared from their predicates alone (no blobs are read), which keeps ``prov log``
fast on large stores; ``prov diff`` gives the full comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from provenance.compare import notes as change_notes
from provenance.compare.diff import NoteRef, compare_snapshots, headline
from provenance.compare.recheck import RecheckRef
from provenance.compare.witness import WitnessRef
from provenance.compare.witness import entries as witness_entries
from provenance.errors import ProvError
from provenance.model import Snapshot
from provenance.store.objects import SnapshotEntry, Store
from provenance.verify.policy import TrustOptions, from_auditor
from provenance.verify.resolve import load_entry


@dataclass(frozen=True)
class LogItem:
    """One snapshot of the timeline, with what changed since the one before and its notes."""

    entry: SnapshotEntry
    previous: str | None
    changes: tuple[str, ...] = ()
    notes: tuple[NoteRef, ...] = ()
    problem: str | None = None
    witnesses: tuple[WitnessRef, ...] = ()
    rechecks: tuple[RecheckRef, ...] = ()  # the attestation could not be read for a comparison

    def to_json(self) -> dict[str, Any]:
        return {
            **self.entry.model_dump(mode="json"),
            "since": self.previous,
            "changes": list(self.changes),
            "notes": [note.model_dump(mode="json") for note in self.notes],
            "problem": self.problem,
            "witnesses": [w.model_dump(mode="json") for w in self.witnesses],
            "rechecks": [r.model_dump(mode="json") for r in self.rechecks],
        }


def timeline(store: Store, trust: TrustOptions | None = None) -> list[LogItem]:
    """Every snapshot of the store, each read against its index entry (the label and sha256
    the entry names must be the attestation's) and, with the auditor's trust options, verified
    first: one that fails is shown with its problem, never compared."""
    notes = [entry.ref() for entry in change_notes.entries(store, trust)]
    # As for notes: signatures are checked with the auditor's keys only; the index is unsigned.
    keys = from_auditor(trust).keys if trust is not None and trust.given else ()
    witnesses = [entry.ref(store, keys) for entry in witness_entries(store)]
    items: list[LogItem] = []
    where: dict[str, int] = {}  # snapshot sha256 -> its item, for rechecks that come later
    previous: Snapshot | None = None
    for entry in store.snapshots():
        tied = tuple(note for note in notes if note.snapshot_sha256 == entry.sha256)
        seen = tuple(w for w in witnesses if w.snapshot_sha256 == entry.sha256)
        try:
            snapshot = load_entry(store, entry, trust).snapshot
        except (ProvError, ValueError) as e:
            message = e.message if isinstance(e, ProvError) else str(e)
            items.append(LogItem(entry, None, notes=tied, problem=message))
            continue
        if snapshot.recheck is not None and snapshot.recheck.of.sha256 in where:
            # A recheck is not a milestone: it is shown under the snapshot it rechecked.
            index = where[snapshot.recheck.of.sha256]
            ref = RecheckRef(
                label=entry.label,
                sha256=entry.sha256,
                created=entry.created,
                of=snapshot.recheck.of,
                outcomes=snapshot.recheck.outcomes,
                signers=entry.signers if keys else [],  # verified above only with trust
            )
            items[index] = replace(items[index], rechecks=(*items[index].rechecks, ref))
            continue
        where[entry.sha256] = len(items)
        if previous is None:
            items.append(LogItem(entry, None, notes=tied, witnesses=seen))
        else:
            diff = compare_snapshots(previous, snapshot)
            changed = tuple(headline(c) for c in diff.captures if c.differs)
            items.append(LogItem(entry, previous.label, changed, tied, witnesses=seen))
        previous = snapshot
    return items
