"""Evidence to read: a snapshot plus somewhere to fetch the blobs it references.

``prov diff`` and ``prov check`` read snapshots, never live sources. A snapshot comes from an
attestation file, a label or id in the store, or (later) an evidence pack that carries its own
blobs. ``open_evidence`` is the one seam where a pack loader plugs in: add a ``"module:function"``
line to ``PACK_LOADERS``; the function takes a path and returns ``Evidence``, or ``None`` when the
file is not its format (then the next loader, and finally the attestation reader, is tried).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from provenance.digest import Digest
from provenance.model import Snapshot
from provenance.resolve import load
from provenance.store import Store

PACK_LOADERS: tuple[str, ...] = ()
"""Loaders of evidence packs, tried in order on a file path before it is read as an attestation."""


class BlobSource(Protocol):
    """Where the bytes a snapshot references can be read from (a store, a pack)."""

    def get(self, digest: str) -> bytes | None:
        """The bytes at a ``blake3:<hex>`` address, checked; ``None`` when not held here."""
        ...


@dataclass(frozen=True)
class NoBlobs:
    """A source that holds nothing: comparisons fall back to digests."""

    def get(self, digest: str) -> bytes | None:
        return None


@dataclass(frozen=True)
class StoreBlobs:
    """Blobs in a content store; a corrupt object raises IntegrityError rather than lying."""

    store: Store

    def get(self, digest: str) -> bytes | None:
        try:
            parsed = Digest.parse(digest)
        except ValueError:
            return None
        if not self.store.has(parsed):
            return None
        return self.store.read(parsed)


@dataclass(frozen=True)
class Evidence:
    snapshot: Snapshot
    origin: str
    signatures: int
    blobs: BlobSource


PackLoader = Callable[[Path], "Evidence | None"]


def _pack_loaders() -> list[PackLoader]:
    loaders = []
    for target in PACK_LOADERS:
        module_name, _, function_name = target.partition(":")
        loaders.append(getattr(importlib.import_module(module_name), function_name))
    return loaders


def open_evidence(reference: str, store: Store | None) -> Evidence:
    """An evidence pack, an attestation file, or a label / sha256 prefix in the store."""
    path = Path(reference)
    if path.is_file():
        for loader in _pack_loaders():
            evidence: Evidence | None = loader(path)
            if evidence is not None:
                return evidence
    loaded = load(reference, store)
    blobs: BlobSource = StoreBlobs(store) if store is not None and store.exists() else NoBlobs()
    return Evidence(loaded.snapshot, loaded.origin, loaded.signatures, blobs)
