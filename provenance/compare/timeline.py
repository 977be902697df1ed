"""The timeline of a store: its snapshots in order, what changed between neighbours, notes.

Neighbours are compared from their predicates alone (no blobs are read), which keeps ``prov log``
fast on large stores; ``prov diff`` gives the full comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from provenance.compare import notes as change_notes
from provenance.compare.diff import NoteRef, compare_snapshots, headline
from provenance.digest import Digest
from provenance.errors import ProvError
from provenance.model import Snapshot
from provenance.store.objects import SnapshotEntry, Store
from provenance.verify.resolve import load_attestation


@dataclass(frozen=True)
class LogItem:
    """One snapshot of the timeline, with what changed since the one before and its notes."""

    entry: SnapshotEntry
    previous: str | None
    changes: tuple[str, ...] = ()
    notes: tuple[NoteRef, ...] = ()
    problem: str | None = None  # the attestation could not be read for a comparison

    def to_json(self) -> dict[str, Any]:
        return {
            **self.entry.model_dump(mode="json"),
            "since": self.previous,
            "changes": list(self.changes),
            "notes": [note.model_dump(mode="json") for note in self.notes],
            "problem": self.problem,
        }


def timeline(store: Store) -> list[LogItem]:
    notes = [entry.ref() for entry in change_notes.entries(store)]
    items: list[LogItem] = []
    previous: Snapshot | None = None
    for entry in store.snapshots():
        tied = tuple(note for note in notes if note.snapshot_sha256 == entry.sha256)
        try:
            digest = Digest.parse(entry.attestation)
            store.check(digest)
            snapshot = load_attestation(store.object_path(digest)).snapshot
        except (ProvError, ValueError) as e:
            message = e.message if isinstance(e, ProvError) else str(e)
            items.append(LogItem(entry, None, notes=tied, problem=message))
            continue
        if previous is None:
            items.append(LogItem(entry, None, notes=tied))
        else:
            diff = compare_snapshots(previous, snapshot)
            changed = tuple(headline(c) for c in diff.captures if c.differs)
            items.append(LogItem(entry, previous.label, changed, tied))
        previous = snapshot
    return items
