"""Finding a snapshot from what a user typed: an attestation path (DSSE or Sigstore bundle), an
evidence pack, or a label / sha256 prefix of a snapshot in the store.

These readers do not verify signatures (that is ``prov verify``'s job); they do check that the
statement parses and that its subject digest matches, so what they show is at least self-consistent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from provenance.attest import statement as statements
from provenance.attest.envelope import read_envelope
from provenance.attest.statement import check_subject
from provenance.digest import Digest
from provenance.errors import InputError, IntegrityError, UsageError
from provenance.model import Snapshot
from provenance.store.objects import Store
from provenance.verify.steps import check_predicate


@dataclass(frozen=True)
class Loaded:
    snapshot: Snapshot
    origin: str
    signatures: int
    store: Store | None = None  # where this snapshot's blobs can be read, when known


def load_attestation(path: Path, store: Store | None = None) -> Loaded:
    from provenance.attest import sigstore

    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise InputError(f"{path}: file not found", hint="check the path") from e
    except OSError as e:
        raise InputError(f"cannot read {path}", cause=str(e)) from e
    if sigstore.is_bundle(data):
        _, payload, signatures = sigstore.dsse_content(data, str(path))
        count = len(signatures)
    else:
        envelope = read_envelope(path)
        payload, count = envelope.payload, len(envelope.signatures)
    parsed = statements.parse(payload)
    snapshot = check_predicate(parsed)
    check_subject(parsed)
    return Loaded(snapshot, str(path), count, store)


def load_pack(path: Path) -> Loaded:
    """The snapshot in an evidence pack; its blobs stay readable through ``Loaded.store``.

    The pack is checked and extracted into a temporary folder that lives as long as that store.
    """
    from provenance.store.pack import open_pack

    opened = open_pack(path)
    loaded = load_attestation(opened.attestation, opened.store)
    return Loaded(loaded.snapshot, f"{path} (evidence pack)", loaded.signatures, opened.store)


_FILE_SUFFIXES = (".jsonl", ".json", ".tar")


def _missing_file(reference: str) -> None:
    """`show nope.intoto.jsonl` names a missing file, not an unknown label: say so (exit 3)."""
    if "/" in reference or reference.endswith(_FILE_SUFFIXES):
        raise InputError(
            f"{reference}: file not found",
            hint="check the path; a label or id is looked up in the store (`prov log`)",
        )


def load(reference: str, store: Store | None) -> Loaded:
    """An attestation file, an evidence pack, or a label / sha256 prefix of a stored snapshot."""
    from provenance.store.pack import is_pack

    path = Path(reference)
    if path.is_file():
        if is_pack(path):
            return load_pack(path)
        return load_attestation(path, store if store is not None and store.exists() else None)
    if store is None or not store.exists():
        _missing_file(reference)
        raise UsageError(
            f"{reference!r} is not a file, and there is no store to look it up in",
            hint="pass an attestation path, or --store / PROV_STORE",
        )
    matches = [
        entry
        for entry in store.snapshots()
        if entry.label == reference or (len(reference) >= 6 and entry.sha256.startswith(reference))
    ]
    if not matches:
        _missing_file(reference)
        raise UsageError(
            f"no snapshot {reference!r} in the store at {store.root}",
            hint="`prov log` lists the snapshots by label and id",
        )
    if len(matches) > 1:
        ids = ", ".join(m.sha256[:12] for m in matches)
        raise UsageError(
            f"{reference!r} names {len(matches)} snapshots ({ids})", hint="use a longer id"
        )
    entry = matches[0]
    try:
        digest = Digest.parse(entry.attestation)
    except ValueError as e:
        raise IntegrityError(
            f"the index entry of {entry.label!r} names no attestation object", cause=str(e)
        ) from e
    store.check(digest)
    loaded = load_attestation(store.object_path(digest))
    # The index is unsigned: an edited entry could present an older snapshot under a newer label.
    snap = loaded.snapshot
    if snap.label != entry.label or snap.sha256().hex != entry.sha256:
        raise IntegrityError(
            f"the index entry of {entry.label!r} ({entry.sha256[:12]}) points at the attestation "
            f"of {snap.label!r} ({snap.sha256().hex[:12]})",
            cause="the store's index was edited or damaged",
            hint="verify the attestation file itself with `prov verify`",
        )
    return Loaded(snap, f"{entry.label} ({entry.sha256[:12]})", loaded.signatures, store)
