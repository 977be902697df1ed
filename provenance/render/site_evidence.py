"""The evidence a provenance site is built from, copied into its ``files/`` and verified there.

Attestations and evidence packs come from the store or from folders; each is copied first and the
copy is what is verified, under the builder's trust policy only (``verify.policy``: keys,
identity, trusted root, TSA chain; never what a pack brings), with the label the offered file's
name implies. A pack's blobs serve its snapshot's claims and diffs; a pack and an attestation of
the same snapshot become one milestone. Witness statements found beside them are staged too.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from provenance.attest import dsse, sigstore, timestamp
from provenance.attest import statement as statements
from provenance.attest.envelope import read_envelope
from provenance.attest.keys import VerifyingKey
from provenance.compare import notes as change_notes
from provenance.compare.evidence import BlobSource, Evidence, NoBlobs, StoreBlobs
from provenance.compare.witness import entries as witness_entries
from provenance.digest import Digest
from provenance.errors import IntegrityError, ProvError, StoreError, UsageError, VerificationError
from provenance.model import Snapshot
from provenance.store.objects import Store
from provenance.store.pack import OpenedPack, PackInput, PackPolicy, is_pack, open_pack, write_pack
from provenance.verify.audit import run
from provenance.verify.policy import TrustOptions, TrustPolicy, from_auditor
from provenance.verify.steps import Report, label_from_filename

if TYPE_CHECKING:
    from provenance.attest.sigstore import IdentityPolicy


__all__ = [
    "SAFE",
    "SUFFIXES",
    "WITNESS",
    "Build",
    "Item",
    "SiteTrust",
    "evidence_of",
    "from_path",
    "from_store",
    "key_name",
    "merge",
    "milestone_id",
    "note_problem",
    "place",
    "sha256_of",
    "verify_item",
    "write_evidence_pack",
]


SUFFIXES = (".intoto.jsonl", ".sigstore.json")


WITNESS = ".witness."  # LABEL.witness.NAME.intoto.jsonl, prov witness's naming


SAFE = re.compile(r"[^A-Za-z0-9._+-]")


@dataclass(frozen=True)
class SiteTrust:
    """The builder's trust, the auditor's policy and never a pack's: what every verdict rests on."""

    options: TrustOptions
    policy: TrustPolicy

    @classmethod
    def of(cls, options: TrustOptions) -> SiteTrust:
        """Raises UsageError when the options trust nobody (``verify.policy.from_auditor``)."""
        if options.trust_pack:
            raise UsageError(
                "a site states verdicts for its readers: it never trusts what the packs bring",
                hint="pass the publisher's --key, or --cert-identity / --repository",
            )
        return cls(options, from_auditor(options))

    @property
    def keys(self) -> tuple[Path, ...]:
        return self.options.keys

    @property
    def threshold(self) -> int:
        return self.policy.threshold

    @property
    def identity(self) -> IdentityPolicy | None:
        return self.policy.identity

    @property
    def trusted_root(self) -> Path | None:
        return self.options.trusted_root

    @property
    def tsa_certs(self) -> Path | None:
        return self.options.tsa_certs


@dataclass
class Item:
    """One attestation or pack on its way into the site."""

    staged: Path  # the copy in files/, which is what is verified
    origin: str
    is_pack: bool
    blobs: Store | None = None
    expect: str | None = None
    report: Report | None = None
    error: str | None = None
    opened: OpenedPack | None = None
    pack: Path | None = None  # a pack of the same snapshot, offered beside the attestation
    attestation: Path | None = None  # the attestation file offered for download

    def __post_init__(self) -> None:
        if not self.is_pack:
            self.attestation = self.staged

    @property
    def snapshot(self) -> Snapshot | None:
        return self.report.snapshot if self.report is not None and self.error is None else None


@dataclass
class Build:
    root: Path
    trust: SiteTrust
    verifiers: list[VerifyingKey] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    witnesses: list[Path] = field(default_factory=list)  # statements, staged in files/

    @property
    def files(self) -> Path:
        return self.root / "files"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def place(build: Build, source: Path | bytes, name: str) -> Path:
    """Copy a file into files/ under ``name``; two different files may not share a name."""
    name = SAFE.sub("_", name).lstrip("._-") or "file"
    target = build.files / name
    if target.exists():
        # Streamed, never read whole: a pack can be gigabytes.
        same = (
            hashlib.sha256(source).hexdigest() == sha256_of(target)
            if isinstance(source, bytes)
            else sha256_of(source) == sha256_of(target)
        )
        if same:
            return target
        raise UsageError(
            f"two different files would both be published as {name}",
            hint="keep one attestation per label in the folders you build from",
        )
    try:
        if isinstance(source, bytes):
            target.write_bytes(source)
        else:
            shutil.copyfile(source, target)
    except OSError as e:
        raise StoreError(f"cannot copy {name} into the site", cause=str(e)) from e
    return target


def _attestation_name(entry_path: str, label: str, data: bytes) -> str:
    name = Path(entry_path).name
    if name.endswith(SUFFIXES) and label_from_filename(Path(name)) == label:
        return name
    return f"{label}.sigstore.json" if sigstore.is_bundle(data) else f"{label}.intoto.jsonl"


def from_store(build: Build, store: Store) -> None:
    for entry in store.snapshots():
        try:
            digest = Digest.parse(entry.attestation)
            data = store.read(digest)  # the bytes published are the bytes re-hashed
        except (ValueError, OSError, IntegrityError) as e:
            message = e.message if isinstance(e, ProvError) else str(e)
            raise IntegrityError(
                f"the store's attestation of {entry.label!r} is unreadable: {message}",
                hint="`prov fsck` finds damaged objects",
            ) from e
        staged = place(build, data, _attestation_name(entry.path, entry.label, data))
        original = Path(entry.path)
        sidecar = timestamp.sidecar_path(original)
        with contextlib.suppress(OSError):
            if sidecar.is_file() and original.read_bytes() == data:
                place(build, sidecar, staged.name + ".tsr")
        build.items.append(Item(staged, f"store: {entry.label}", False, store, entry.label))
    for witness in witness_entries(store):
        if witness.attestation is None:
            continue
        digest = Digest.parse(witness.attestation)
        name = f"{witness.witness.snapshot.label}{WITNESS}{witness.id[:12]}.intoto.jsonl"
        build.witnesses.append(place(build, store.read(digest), name))


def from_path(build: Build, path: Path, store: Store | None) -> None:
    if path.is_dir():
        found = sorted(p for p in path.iterdir() if p.is_file())
        chosen = [p for p in found if p.name.endswith(SUFFIXES) or is_pack(p)]
        if not chosen:
            raise UsageError(
                f"{path} holds no attestation (*.intoto.jsonl, *.sigstore.json) or evidence pack"
            )
        for item in chosen:
            from_path(build, item, store)
        return
    if not path.is_file():
        raise UsageError(f"{path} does not exist", hint="name a folder, an attestation or a pack")
    if WITNESS in path.name:
        build.witnesses.append(place(build, path, path.name))
        return
    if is_pack(path):
        staged = place(build, path, path.name)
        expect = path.name.removesuffix(".evidence.tar") if path.name.endswith(".tar") else None
        build.items.append(Item(staged, str(path), True, expect=expect))
        return
    staged = place(build, path, path.name)
    sidecar = timestamp.sidecar_path(path)
    if sidecar.is_file():
        place(build, sidecar, staged.name + ".tsr")
    build.items.append(Item(staged, str(path), False, store, label_from_filename(path)))


def verify_item(build: Build, item: Item, stack: contextlib.ExitStack) -> None:
    policy = replace(build.trust.policy, keys=tuple(build.verifiers))
    target, blobs = item.staged, item.blobs
    try:
        if item.is_pack:
            item.opened = stack.enter_context(open_pack(item.staged))
            target, blobs = item.opened.attestation, item.opened.store
            item.blobs = blobs
            # The attestation inside is offered on its own too: the same bytes that verify.
            item.attestation = place(build, target, target.name)
            inner = timestamp.sidecar_path(target)
            if inner.is_file():
                place(build, inner, item.attestation.name + ".tsr")
        # The label is checked against the name of the file offered for download.
        item.report = run(
            target,
            policy,
            store=blobs,
            expect_label=item.expect,
            implied_label=label_from_filename(item.staged),
        )
        if item.opened is not None:
            _check_manifest(item.opened, item.report)
    except VerificationError as e:
        item.report = e.report if isinstance(e.report, Report) else None
        item.error = e.message


def _check_manifest(opened: OpenedPack, report: Report) -> None:
    """A pack's manifest is unsigned: it must name what the signed statement names."""
    snapshot = report.snapshot
    manifest = opened.manifest
    if snapshot is None:
        return
    if manifest.label != snapshot.label or manifest.snapshot_sha256 != snapshot.sha256().hex:
        raise VerificationError(
            f"the pack's manifest names {manifest.label!r}, its attestation {snapshot.label!r}",
            hint="the pack was altered after it was made",
            report=report,
        )


def merge(items: list[Item]) -> list[Item]:
    """One milestone per snapshot: a verified pack stands for the attestations it holds.

    The pack comes first because its verification also checked the blobs.
    """
    by_sha: dict[str, Item] = {}
    out: list[Item] = []
    for item in sorted(items, key=lambda i: not i.is_pack):
        snapshot = item.snapshot
        if snapshot is None:
            out.append(item)
            continue
        sha = snapshot.sha256().hex
        if sha in by_sha:
            kept = by_sha[sha]
            if item.is_pack:
                kept.pack = item.staged
                if kept.blobs is None:
                    kept.blobs = item.blobs
            continue
        by_sha[sha] = item
        if item.is_pack:
            item.pack = item.staged
        out.append(item)
    return out


def write_evidence_pack(build: Build, item: Item, store: Store) -> Path | None:
    snapshot = item.snapshot
    assert snapshot is not None
    target = build.files / f"{snapshot.label}.evidence.tar"
    if target.exists():
        return target
    bundle = item.report is not None and item.report.kind == "sigstore"
    identity = build.trust.identity
    sidecar = timestamp.sidecar_path(item.staged)
    write_pack(
        PackInput(
            attestation=item.staged,
            kind="sigstore" if bundle else "dsse",
            snapshot=snapshot,
            policy=PackPolicy(
                threshold=build.trust.threshold,
                identity=identity.identity if identity else None,
                issuer=identity.issuer if identity else None,
                repository=identity.repository if identity else None,
                ref=identity.ref if identity else None,
            ),
            keys=build.trust.keys,
            trusted_root=(build.trust.trusted_root or sigstore.production_trusted_root_path())
            if bundle
            else None,
            tsa_chain=build.trust.tsa_certs,
            timestamp=sidecar if sidecar.is_file() else None,
        ),
        store,
        target,
    )
    return target


def key_name(path: Path) -> str:
    stem = SAFE.sub("_", path.name.removesuffix(".pub")).lstrip("._-") or "key"
    return f"{stem}.pub"


def milestone_id(item: Item) -> str:
    snapshot = item.report.snapshot if item.report is not None else None
    if snapshot is not None:
        return snapshot.label
    name = item.staged.name
    for suffix in (*SUFFIXES, ".evidence.tar", ".tar"):
        name = name.removesuffix(suffix)
    return SAFE.sub("_", name) or "milestone"


def evidence_of(item: Item) -> Evidence:
    assert item.snapshot is not None
    blobs: BlobSource = StoreBlobs(item.blobs) if item.blobs is not None else NoBlobs()
    return Evidence(item.snapshot, item.origin, 1, blobs)


def note_problem(build: Build, store: Store, entry: change_notes.NoteEntry) -> str | None:
    """Why the note cannot be trusted, or None when a trusted key signed exactly this note."""
    try:
        digest = Digest.parse(entry.attestation)
        store.check(digest)
        envelope = read_envelope(store.object_path(digest))
        dsse.verify(envelope, build.verifiers, build.trust.threshold)
        parsed = statements.parse(envelope.payload)
    except (ValueError, ProvError) as e:
        return e.message if isinstance(e, ProvError) else str(e)
    if parsed.predicate_type != change_notes.PREDICATE_TYPE:
        return f"the signed statement is a {parsed.predicate_type}, not a note"
    if parsed.predicate != entry.note.model_dump(mode="json"):
        return "the store's note index does not match the signed note"
    return None
