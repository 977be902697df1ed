"""Which objects of a store the evidence refers to: what ``prov gc`` keeps and ``fsck`` counts.

The roots are the two indexes a store keeps: every snapshot (``snapshots/``) and every change
note (``notes/``), by the attestation object each names. A snapshot's attestation refers to the
blobs of its captures, and a manifest among them (a git capture over many files, a listing's
content manifest) to the blobs its entries name. Anything that cannot be read makes the walk
fail: a collector that guessed would delete evidence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from provenance.attest import statement as statements
from provenance.digest import Digest
from provenance.errors import IntegrityError, ProvError, StoreError
from provenance.model import Snapshot
from provenance.store.manifest import referenced_blobs
from provenance.store.objects import Store


@dataclass
class Reachable:
    """The live objects (blake3 hex) and, of those, the attestation objects."""

    live: set[str] = field(default_factory=set)
    attestations: set[str] = field(default_factory=set)
    snapshots: int = 0
    notes: int = 0


def reachable(store: Store) -> Reachable:
    found = Reachable()
    for entry in store.snapshots():
        digest = _digest(entry.attestation, f"snapshot {entry.label!r}")
        found.attestations.add(digest.hex)
        found.live.add(digest.hex)
        snapshot = _snapshot(store, digest, entry.label)
        for capture in snapshot.captures:
            for blob in capture.blobs:
                found.live.add(Digest.parse(blob.digest).hex)
            for _, hexdigest, _ in referenced_blobs(store, capture):
                found.live.add(hexdigest)
        found.snapshots += 1
    notes = store.root / "notes"
    for path in sorted(notes.glob("*.json")) if notes.is_dir() else []:
        try:
            attestation = json.loads(path.read_bytes())["attestation"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise StoreError(
                f"the note index entry {path} is unreadable: nothing can be collected",
                cause=str(e),
            ) from e
        digest = _digest(str(attestation), f"note {path.name}")
        found.attestations.add(digest.hex)
        found.live.add(digest.hex)
        found.notes += 1
    return found


def _digest(text: str, what: str) -> Digest:
    try:
        digest = Digest.parse(text)
    except ValueError as e:
        raise StoreError(f"the index entry of {what} names no object", cause=str(e)) from e
    if digest.algorithm != "blake3":
        raise StoreError(f"the index entry of {what} names a {digest.algorithm} object")
    return digest


def _snapshot(store: Store, digest: Digest, label: str) -> Snapshot:
    from provenance.attest import dsse, sigstore

    try:
        data = store.read(digest)
        if sigstore.is_bundle(data):
            _, payload, _ = sigstore.dsse_content(data, label)
        else:
            payload = dsse.parse(data.strip(), origin=label).payload
        return Snapshot.model_validate(statements.parse(payload).predicate)
    except (ProvError, ValueError) as e:
        raise IntegrityError(
            f"the attestation of snapshot {label!r} cannot be read: nothing can be collected",
            cause=getattr(e, "message", str(e)),
            hint="run `prov fsck`; restore the attestation or remove its index entry first",
        ) from e
