"""Which objects of a store the evidence refers to: what ``prov gc`` keeps and ``fsck`` counts.

The roots are the indexes a store keeps, each entry naming a signed statement in the store by
its blake3: snapshots (``snapshots/``), change notes (``notes/``) and witness statements
(``witnesses/``). A statement refers to every ``blake3:`` address in its predicate (a snapshot's
capture blobs, say), and a capture among them that keeps a file manifest (a git capture over
many files) to the blobs the manifest's entries name. Anything that cannot be read makes the
walk fail: a collector that guessed would delete evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from provenance._internal import strictjson
from provenance.attest import statement as statements
from provenance.digest import Digest
from provenance.errors import IntegrityError, ProvError, StoreError
from provenance.model import Capture
from provenance.store.manifest import referenced_blobs
from provenance.store.objects import Store

__all__ = ["INDEXES", "Reachable", "reachable"]

INDEXES = ("snapshots", "notes", "witnesses")
"""The store's folders of index entries, each ``<id>.json`` with an ``attestation`` address."""
_ADDRESS = re.compile(r"^blake3:([0-9a-f]{64})$")


@dataclass
class Reachable:
    """The live objects (blake3 hex) and, of those, the signed statements the indexes name."""

    live: set[str] = field(default_factory=set)
    attestations: set[str] = field(default_factory=set)
    entries: dict[str, int] = field(default_factory=dict)  # index folder -> entries read

    @property
    def snapshots(self) -> int:
        return self.entries.get("snapshots", 0)

    @property
    def notes(self) -> int:
        return self.entries.get("notes", 0)


def reachable(store: Store) -> Reachable:
    found = Reachable()
    for folder in INDEXES:
        directory = store.root / folder
        for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
            try:
                attestation = strictjson.loads(path.read_bytes()).get("attestation")
            except (OSError, ValueError, AttributeError) as e:
                raise StoreError(
                    f"the index entry {path} is unreadable: nothing can be collected",
                    cause=str(e),
                ) from e
            found.entries[folder] = found.entries.get(folder, 0) + 1
            if attestation is None:  # a witness statement kept only as a file
                continue
            digest = _digest(str(attestation), f"{folder}/{path.name}")
            found.attestations.add(digest.hex)
            found.live.add(digest.hex)
            predicate = _predicate(store, digest, f"{folder}/{path.name}")
            found.live.update(_referenced(store, predicate))
    return found


def _digest(text: str, what: str) -> Digest:
    try:
        digest = Digest.parse(text)
    except ValueError as e:
        raise StoreError(f"the index entry {what} names no object", cause=str(e)) from e
    if digest.algorithm != "blake3":
        raise StoreError(f"the index entry {what} names a {digest.algorithm} object")
    return digest


def _predicate(store: Store, digest: Digest, what: str) -> Any:
    from provenance.attest import dsse, sigstore

    try:
        data = store.read(digest)
        if sigstore.is_bundle(data):
            _, payload, _ = sigstore.dsse_content(data, what)
        else:
            payload = dsse.parse(data.strip(), origin=what).payload
        return statements.parse(payload).predicate
    except (ProvError, ValueError) as e:
        raise IntegrityError(
            f"the statement {what} names cannot be read: nothing can be collected",
            cause=getattr(e, "message", str(e)),
            hint="run `prov fsck`; restore the attestation or remove its index entry first",
        ) from e


def _referenced(store: Store, value: Any) -> Iterator[str]:
    """Every blake3 address in a predicate, and the files of each file manifest in it."""
    if isinstance(value, str):
        match = _ADDRESS.match(value)
        if match:
            yield match.group(1)
    elif isinstance(value, list):
        for item in value:
            yield from _referenced(store, item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _referenced(store, item)
        if {"kind", "data", "blobs", "digest"} <= value.keys():
            try:
                capture = Capture.model_validate(value)
            except ValueError:
                return
            for _, hexdigest, _ in referenced_blobs(store, capture):
                yield hexdigest
