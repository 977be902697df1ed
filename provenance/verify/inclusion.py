"""``prov prove`` as calls: an inclusion proof for one file of a manifest, and its check.

Making a proof needs the manifest (a store or an evidence pack); checking one needs only the
attestation, whose signed Merkle root the proof must lead to (``store.manifest.verify_proof``).
Neither checks signatures: ``prov verify`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from provenance._internal import strictjson
from provenance.errors import InputError, UsageError
from provenance.model import Capture, Snapshot
from provenance.store.manifest import InclusionProof, ManifestInfo, prove, verify_proof
from provenance.store.objects import Store
from provenance.verify.resolve import load

__all__ = ["SCHEMA", "Proven", "check", "make"]

SCHEMA: Final = "https://prov.dev/inclusion-proof/v1"


@dataclass(frozen=True)
class Proven:
    """A proof that led to the signed root: the entry it proves and where it sits."""

    entry: dict[str, Any]
    index: int
    count: int
    source: str
    label: str
    root: str


def make(reference: str, store: Store, path: str | None, source: str | None) -> dict[str, Any]:
    """The proof document (``SCHEMA``) that ``path`` is in the snapshot's manifest."""
    loaded = load(reference, store)
    if path is None:
        raise UsageError("name the PATH to prove", hint="prov prove SNAPSHOT PATH")
    if loaded.store is None:
        raise UsageError(
            "proving needs the manifest: give a store (--store) or an evidence pack",
            hint="checking a proof needs only the attestation: prov prove SNAPSHOT --check FILE",
        )
    capture, info = _manifest(loaded.snapshot, source)
    try:
        proof = prove(loaded.store, info, path.strip("/"))
    except KeyError:
        raise UsageError(
            f"{path!r} is not in the manifest of {capture.source!r} ({info.count:,} entries)"
        ) from None
    return {
        "schema": SCHEMA,
        "snapshot": {"label": loaded.snapshot.label, "sha256": loaded.snapshot.sha256().hex},
        "source": capture.source,
        "manifest": info.to_json(),
        "proof": proof.to_json(),
    }


def check(reference: str, store: Store, proof_file: Path) -> Proven:
    """Check a proof file against the snapshot's signed root; VerificationError if it fails."""
    loaded = load(reference, store)
    try:
        document = strictjson.loads(proof_file.read_bytes())
    except OSError as e:
        raise InputError(f"cannot read {proof_file}", cause=str(e)) from e
    except ValueError as e:
        raise UsageError(f"{proof_file} is not JSON", cause=str(e)) from e
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise UsageError(f"{proof_file} is not a prov inclusion proof ({SCHEMA})")
    capture, info = _manifest(loaded.snapshot, str(document.get("source") or ""))
    entry = verify_proof(InclusionProof.from_json(document["proof"]), info.root, info.count)
    return Proven(
        entry=entry,
        index=document["proof"]["index"],
        count=info.count,
        source=capture.source,
        label=loaded.snapshot.label,
        root=info.root,
    )


def _manifest(snapshot: Snapshot, source: str | None) -> tuple[Capture, ManifestInfo]:
    with_manifest = [
        c
        for c in snapshot.captures
        if c.status == "ok" and isinstance(c.data.get("manifest"), dict)
    ]
    if source:
        with_manifest = [c for c in with_manifest if c.source == source]
    if len(with_manifest) != 1:
        names = ", ".join(c.source for c in with_manifest) or "none"
        raise UsageError(
            f"snapshot {snapshot.label!r}: {len(with_manifest)} capture(s) with a manifest "
            f"match ({names})",
            hint="name one with --source; small git captures list their files instead",
        )
    capture = with_manifest[0]
    return capture, ManifestInfo.from_capture(capture)
