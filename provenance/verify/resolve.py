"""Finding a snapshot from what a user typed: an attestation path (DSSE or Sigstore bundle), an
evidence pack, or a label / sha256 prefix of a snapshot in the store.

Given the auditor's trust options (``verify.policy``), a reader verifies first, as ``prov verify``
would (signatures, statement, subject, every capture digest, the label the file name or the store
index gives) and refuses what fails. Without them it still checks that the statement parses, that
its subject digest matches and that every capture's digest is its content's, and says that the
signatures were not checked (``Loaded.verified`` is None).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from provenance.attest import statement as statements
from provenance.attest.envelope import read_envelope
from provenance.attest.statement import check_subject
from provenance.digest import Digest
from provenance.errors import InputError, IntegrityError, UsageError, VerificationError
from provenance.model import PREDICATE_TYPE, Snapshot
from provenance.store.objects import SnapshotEntry, Store
from provenance.verify.audit import run
from provenance.verify.policy import TrustOptions, TrustPolicy, for_pack, from_auditor
from provenance.verify.steps import check_predicate, label_from_filename

__all__ = [
    "Foreign",
    "Loaded",
    "foreign_statement",
    "load",
    "load_attestation",
    "load_entry",
    "load_pack",
]


@dataclass(frozen=True)
class Foreign:
    """An in-toto statement that is not a prov snapshot (SLSA provenance, an npm attestation)."""

    origin: str
    predicate_type: str
    subjects: list[dict[str, Any]]
    signatures: int
    verified: tuple[str, ...] | None = None
    """The signers that verified under the auditor's policy; None: signatures not checked."""


@dataclass(frozen=True)
class Loaded:
    snapshot: Snapshot
    origin: str
    signatures: int
    store: Store | None = None  # where this snapshot's blobs can be read, when known
    verified: tuple[str, ...] | None = None
    """The signers that verified under the auditor's policy; None: signatures not checked."""


def _verified(
    loaded: Loaded, path: Path, policy: TrustPolicy | None, label: str | None, implied: bool
) -> Loaded:
    """Verify the attestation at ``path`` first, when there is a policy; raises on failure."""
    if policy is None:
        return loaded
    if implied:
        report = run(path, policy, implied_label=label)
    else:
        report = run(path, policy, expect_label=label)
    return replace(loaded, verified=tuple(report.signers))


def _policy(trust: TrustOptions | None) -> TrustPolicy | None:
    return from_auditor(trust) if trust is not None and trust.asked else None


def load_attestation(path: Path, store: Store | None = None) -> Loaded:
    parsed, count = _read_statement(path)
    snapshot = check_predicate(parsed)
    check_subject(parsed)
    return Loaded(snapshot, str(path), count, store)


def foreign_statement(reference: str, trust: TrustOptions | None = None) -> Foreign | None:
    """The statement in an attestation file when it is an in-toto statement but not prov's.

    With the auditor's trust options its signature is verified first, as ``prov verify``
    would: every step before the statement's must pass (the statement step then refuses it).
    """
    from provenance.store.pack import is_pack

    path = Path(reference)
    if not path.is_file() or is_pack(path):
        return None
    try:
        parsed, count = _read_statement(path)
    except VerificationError:
        return None  # not a readable statement: `load` reports why
    if parsed.predicate_type == PREDICATE_TYPE:
        return None
    foreign = Foreign(str(path), parsed.predicate_type, parsed.subjects, count)
    policy = _policy(trust)
    if policy is None:
        return foreign
    try:
        run(path, policy)
    except VerificationError as e:
        report = e.report
        steps = getattr(report, "steps", [])
        failed = [step for step in steps if step.status == "failed"]
        if not failed or failed[0].name != "statement":
            raise  # the envelope, the signature or the timestamp did not hold
        return replace(foreign, verified=tuple(getattr(report, "signers", ())))
    return foreign


def _read_statement(path: Path) -> tuple[statements.ParsedStatement, int]:
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
    return statements.parse(payload), count


def load_pack(path: Path, trust: TrustOptions | None = None) -> Loaded:
    """The snapshot in an evidence pack; its blobs stay readable through ``Loaded.store``.

    The pack is checked and extracted into a temporary folder that lives as long as that store.
    With trust options it is verified under ``for_pack`` (the pack's own trust only with
    ``--trust-pack``), for the label the pack's file name gives.
    """
    from provenance.store.pack import open_pack

    opened = open_pack(path)
    policy = for_pack(trust, opened) if trust is not None and trust.asked else None
    loaded = load_attestation(opened.attestation, opened.store)
    loaded = Loaded(loaded.snapshot, f"{path} (evidence pack)", loaded.signatures, opened.store)
    return _verified(loaded, opened.attestation, policy, label_from_filename(path), True)


_FILE_SUFFIXES = (".jsonl", ".json", ".tar")


def _missing_file(reference: str) -> None:
    """`show nope.intoto.jsonl` names a missing file, not an unknown label: say so (exit 3)."""
    if "/" in reference or reference.endswith(_FILE_SUFFIXES):
        raise InputError(
            f"{reference}: file not found",
            hint="check the path; a label or id is looked up in the store (`prov log`)",
        )


def load(reference: str, store: Store | None, trust: TrustOptions | None = None) -> Loaded:
    """An attestation file, an evidence pack, or a label / sha256 prefix of a stored snapshot.

    With ``trust`` (the auditor's options) it is verified first; see the module's docstring.
    """
    from provenance.store.pack import is_pack

    path = Path(reference)
    if path.is_file():
        if is_pack(path):
            return load_pack(path, trust)
        held = store if store is not None and store.exists() else None
        loaded = load_attestation(path, held)
        return _verified(loaded, path, _policy(trust), label_from_filename(path), True)
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
    return load_entry(store, matches[0], trust)


def load_entry(store: Store, entry: SnapshotEntry, trust: TrustOptions | None = None) -> Loaded:
    """The snapshot an index entry names, checked against the entry (and verified, with trust).

    The index is unsigned: an edited entry could present an older snapshot under a newer label,
    so the attestation it points at must be of that label and that sha256.
    """
    try:
        digest = Digest.parse(entry.attestation)
    except ValueError as e:
        raise IntegrityError(
            f"the index entry of {entry.label!r} names no attestation object", cause=str(e)
        ) from e
    store.check(digest)
    path = store.object_path(digest)
    loaded = load_attestation(path)
    snap = loaded.snapshot
    if snap.label != entry.label or snap.sha256().hex != entry.sha256:
        raise IntegrityError(
            f"the index entry of {entry.label!r} ({entry.sha256[:12]}) points at the attestation "
            f"of {snap.label!r} ({snap.sha256().hex[:12]})",
            cause="the store's index was edited or damaged",
            hint="verify the attestation file itself with `prov verify`",
        )
    loaded = Loaded(snap, f"{entry.label} ({entry.sha256[:12]})", loaded.signatures, store)
    return _verified(loaded, path, _policy(trust), entry.label, False)
