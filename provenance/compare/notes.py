"""Change notes: signed, timestamped statements about a snapshot, kept beside it.

A note says what changed, why, and which earlier claim or assumption no longer holds (say, "the
mix changed at step 108,000 (PR #9162); 'total training tokens' is superseded"). It is an in-toto
statement of its own (predicateType ``PREDICATE_TYPE``) whose subject is the snapshot, signed like
a snapshot and stored in the content store. The snapshot's attestation is never touched: notes are
added evidence, not edits. The store keeps an index of notes under ``notes/<id>.json``, where the
id is the sha256 of the statement bytes; ``prov log`` and ``prov diff`` read it.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from provenance._internal import canonical
from provenance._internal.files import atomic_write, write_new
from provenance.attest import dsse
from provenance.attest import statement as statements
from provenance.attest.signing import Attester
from provenance.compare.diff import NoteRef
from provenance.digest import Digest, sha256_bytes
from provenance.errors import ProvError, StoreError, UsageError, VerificationError
from provenance.model import NOTE_MAX_TEXT as MAX_TEXT
from provenance.model import NOTE_PREDICATE_TYPE, Note, NoteSubject, Snapshot, utc_now
from provenance.store.objects import Store
from provenance.verify.policy import TrustOptions, TrustPolicy, from_auditor
from provenance.verify.predicates import check_statement

PREDICATE_TYPE = NOTE_PREDICATE_TYPE


class NoteEntry(BaseModel):
    """One note in the store's index."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="sha256 of the note's statement bytes")
    note: Note
    attestation: str = Field(description="blake3 address of the signed note in the store")
    path: str | None = Field(default=None, description="where the note file was also written")
    signers: list[str] = Field(default_factory=list)

    def ref(self) -> NoteRef:
        return NoteRef(
            id=self.id,
            snapshot=self.note.snapshot.label,
            snapshot_sha256=self.note.snapshot.sha256,
            created=self.note.created,
            text=self.note.text,
            supersedes=list(self.note.supersedes),
            signers=self.signers,
        )


def _notes_dir(store: Store) -> Path:
    return store.root / "notes"


def build(snapshot: Snapshot, text: str, supersedes: tuple[str, ...] = ()) -> bytes:
    """The statement bytes of a note about ``snapshot``."""
    if not text.strip():
        raise UsageError("a note needs text", hint='pass --text "what changed and why"')
    if len(text) > MAX_TEXT:
        raise UsageError(f"the note is {len(text):,} characters; the limit is {MAX_TEXT:,}")
    sha = snapshot.sha256().hex
    note = Note(
        snapshot=NoteSubject(label=snapshot.label, sha256=sha, created=snapshot.created),
        created=utc_now(),
        text=text,
        supersedes=tuple(dict.fromkeys(s for s in supersedes if s)),
    )
    subject = {"name": statements.subject_name(snapshot.label), "digest": {"sha256": sha}}
    return statements.wrap([subject], PREDICATE_TYPE, note.model_dump(mode="json"))


def record(
    store: Store,
    snapshot: Snapshot,
    text: str,
    attester: Attester,
    *,
    supersedes: tuple[str, ...] = (),
    output: Path | None = None,
) -> NoteEntry:
    """Sign a note, keep it in the store (and at ``output``), and index it."""
    if not attester.signer_ids():
        raise UsageError("a note must be signed", hint="pass --key keys/NAME.key")
    statement = build(snapshot, text, supersedes)
    document = attester.attest(statement)
    store.init()
    written = store.put_bytes(document)
    if output is not None:
        write_new(output, document, "note")
    predicate = canonical.loads(statement)["predicate"]
    entry = NoteEntry(
        id=sha256_bytes(statement).hex,
        note=Note.model_validate(predicate),
        attestation=str(written.digest),
        path=str(output) if output else None,
        signers=attester.signer_ids(),
    )
    directory = _notes_dir(store)
    try:
        directory.mkdir(exist_ok=True)
        atomic_write(directory / f"{entry.id}.json", entry.model_dump_json(indent=2).encode())
    except OSError as e:
        raise StoreError(f"cannot write the note index in {directory}", cause=str(e)) from e
    return entry


def entries(store: Store, trust: TrustOptions | None = None) -> list[NoteEntry]:
    """Every note in the store that its signed statement backs, oldest first.

    The index is unsigned, so each entry is read against the signed note it names (the object
    hashes to its address, its statement to the entry's id, its predicate is the entry's note,
    its subject the snapshot). With the auditor's trust options the signatures are verified
    and ``signers`` are the keys that verified; without, ``signers`` is empty: a note is never
    shown as signed by anyone prov did not check. A note that fails is left out, with a warning.
    """
    directory = _notes_dir(store)
    if not directory.is_dir():
        return []
    # --trust-pack alone trusts a pack's signers, never the store's notes: those stay unchecked.
    policy = from_auditor(trust) if trust is not None and trust.given else None
    found = []
    for path in sorted(directory.glob("*.json")):
        try:
            entry = NoteEntry.model_validate_json(path.read_bytes())
        except (OSError, ValueError) as e:
            raise StoreError(f"the note index entry {path} is unreadable", cause=str(e)) from e
        try:
            found.append(_backed(store, entry, policy))
        except (ProvError, ValueError) as e:
            reason = e.message if isinstance(e, ProvError) else str(e)
            logging.getLogger(__name__).warning("note %s left out: %s", _short(entry.id), reason)
    return sorted(found, key=lambda n: (n.note.created, n.id))


def _short(value: str) -> str:
    return value[:12] if re.fullmatch(r"[0-9a-f]{64}", value) else repr(value[:64])


def _backed(store: Store, entry: NoteEntry, policy: TrustPolicy | None) -> NoteEntry:
    """The entry as its signed note says it, signers only as verified under ``policy``."""
    data = store.read(Digest.parse(entry.attestation))
    envelope = dsse.parse(data.strip(), origin=f"note {entry.id[:12]}")
    if sha256_bytes(envelope.payload).hex != entry.id:
        raise VerificationError("its statement is not the one the index names")
    parsed = statements.parse(envelope.payload)
    predicate, checked = check_statement(parsed)
    if checked.note != entry.note:
        raise VerificationError("the index does not say what the signed note says")
    predicate.subject(parsed, checked)
    signers: list[str] = []
    if policy is not None:
        results = dsse.verify(envelope, policy.keys, policy.threshold)
        signers = sorted({r.verified_by for r in results if r.verified_by})
    return entry.model_copy(update={"signers": signers})


def spanning(
    store: Store | None, a: Snapshot, b: Snapshot, trust: TrustOptions | None = None
) -> list[NoteRef]:
    """Notes on snapshots from A's time to B's, both included (either order)."""
    if store is None or not store.exists():
        return []
    low, high = sorted((a.created, b.created))
    ends = {a.sha256().hex, b.sha256().hex}
    return [
        entry.ref()
        for entry in entries(store, trust)
        if entry.note.snapshot.sha256 in ends or low <= entry.note.snapshot.created <= high
    ]


def up_to(
    store: Store | None, snapshot: Snapshot, trust: TrustOptions | None = None
) -> list[NoteRef]:
    """Notes on this snapshot or an earlier one: what a reader of it should know."""
    if store is None or not store.exists():
        return []
    sha = snapshot.sha256().hex
    return [
        entry.ref()
        for entry in entries(store, trust)
        if entry.note.snapshot.sha256 == sha or entry.note.snapshot.created <= snapshot.created
    ]
