"""Evidence to read: a snapshot plus somewhere to fetch the blobs it references.

``prov diff`` and ``prov check`` read snapshots, never live sources. A snapshot comes from an
attestation file, a label or id in the store, or an evidence pack that carries its own blobs
(``resolve.load`` tells them apart and says where the blobs are).
"""

from __future__ import annotations

import contextlib
import mmap
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from provenance.digest import Digest
from provenance.model import Snapshot
from provenance.store.objects import Store
from provenance.verify.policy import TrustOptions
from provenance.verify.resolve import load


class BlobSource(Protocol):
    """Where the bytes a snapshot references can be read from (a store, a pack)."""

    def get(self, digest: str) -> bytes | None:
        """The bytes at a ``blake3:<hex>`` address, checked; ``None`` when not held here."""
        ...

    def mapped(self, digest: str) -> AbstractContextManager[mmap.mmap | bytes | None]:
        """Like ``get`` for one pass over a large blob: a store maps the file, not a copy."""
        ...


@dataclass(frozen=True)
class NoBlobs:
    """A source that holds nothing: comparisons fall back to digests."""

    def get(self, digest: str) -> bytes | None:
        return None

    def mapped(self, digest: str) -> AbstractContextManager[mmap.mmap | bytes | None]:
        return contextlib.nullcontext()


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

    @contextlib.contextmanager
    def mapped(self, digest: str) -> Iterator[mmap.mmap | bytes | None]:
        try:
            parsed = Digest.parse(digest)
        except ValueError:
            parsed = None
        if parsed is None or not self.store.has(parsed):
            yield None
            return
        with self.store.mapped(parsed) as view:
            yield view


@dataclass(frozen=True)
class Evidence:
    snapshot: Snapshot
    origin: str
    signatures: int
    blobs: BlobSource
    verified: tuple[str, ...] | None = None
    """Signers verified under the auditor's trust options; None: signatures not checked."""


def open_evidence(
    reference: str, store: Store | None, trust: TrustOptions | None = None
) -> Evidence:
    """An evidence pack, an attestation file, or a label / sha256 prefix in the store; with
    ``trust``, verified first (``verify.resolve.load``)."""
    loaded = load(reference, store, trust)
    blobs: BlobSource = StoreBlobs(loaded.store) if loaded.store is not None else NoBlobs()
    return Evidence(loaded.snapshot, loaded.origin, loaded.signatures, blobs, loaded.verified)
