"""``prov site``: a static provenance site for a run, built from the store or a folder of evidence.

Every attestation and evidence pack is first copied into the site's ``files/`` folder, and the
copy is what gets verified, with the builder's trust only (keys, identity, trusted root, TSA
chain; never keys found in the evidence): the verdict a page shows is about the very bytes it
offers for download. A milestone that fails verification stops the build unless the builder asks
to publish it, and then it is shown failed, in red, with no claims or diff drawn from it.

The site is built in a temporary folder beside the target and moved into place at the end, so a
refused build leaves the previous site as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import re
import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provenance import __version__
from provenance.attest import dsse, sigstore, timestamp
from provenance.attest import statement as statements
from provenance.attest.envelope import read_envelope
from provenance.attest.keys import VerifyingKey
from provenance.compare import claims as claims_module
from provenance.compare import notes as change_notes
from provenance.compare.diff import Diff, NoteRef, compare, headline
from provenance.compare.evidence import BlobSource, Evidence, NoBlobs, StoreBlobs
from provenance.compare.reads import reads
from provenance.compare.witness import entries as witness_entries
from provenance.digest import Digest
from provenance.errors import IntegrityError, ProvError, UsageError, VerificationError
from provenance.model import Capture, Snapshot, utc_now
from provenance.render import site_html
from provenance.render.report import _claim_numbers, value
from provenance.render.site_model import (
    CaptureItem,
    ClaimItem,
    ClaimsSummary,
    Download,
    Interval,
    KeyItem,
    Milestone,
    NoteItem,
    Read,
    Recheck,
    Site,
    SourceChange,
    Step,
    Trust,
    Verification,
    Witness,
)
from provenance.store.objects import Store
from provenance.store.pack import OpenedPack, PackInput, PackPolicy, is_pack, open_pack, write_pack
from provenance.verify.audit import run
from provenance.verify.observers import check_witness
from provenance.verify.policy import TrustOptions, TrustPolicy, from_auditor
from provenance.verify.steps import Report, label_from_filename

if TYPE_CHECKING:
    from provenance.attest.sigstore import IdentityPolicy

__all__ = ["Built", "SiteTrust", "build_site"]

SUFFIXES = (".intoto.jsonl", ".sigstore.json")
WITNESS = ".witness."  # LABEL.witness.NAME.intoto.jsonl, prov witness's naming
_VERDICT = {"pass": "holds", "fail": "fails", "error": "gap"}
_SAFE = re.compile(r"[^A-Za-z0-9._+-]")


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


@dataclass(frozen=True)
class Built:
    site: Site
    output: Path

    @property
    def failed(self) -> list[Milestone]:
        return [m for m in self.site.milestones if not m.verification.verified]


@dataclass
class _Item:
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
class _Build:
    root: Path
    trust: SiteTrust
    verifiers: list[VerifyingKey] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    witnesses: list[Path] = field(default_factory=list)  # statements, staged in files/

    @property
    def files(self) -> Path:
        return self.root / "files"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _place(build: _Build, source: Path | bytes, name: str) -> Path:
    """Copy a file into files/ under ``name``; two different files may not share a name."""
    name = _SAFE.sub("_", name).lstrip("._-") or "file"
    target = build.files / name
    data = source if isinstance(source, bytes) else source.read_bytes()
    if target.exists():
        if target.read_bytes() == data:
            return target
        raise UsageError(
            f"two different files would both be published as {name}",
            hint="keep one attestation per label in the folders you build from",
        )
    target.write_bytes(data)
    return target


def _attestation_name(entry_path: str, label: str, data: bytes) -> str:
    name = Path(entry_path).name
    if name.endswith(SUFFIXES) and label_from_filename(Path(name)) == label:
        return name
    return f"{label}.sigstore.json" if sigstore.is_bundle(data) else f"{label}.intoto.jsonl"


def _from_store(build: _Build, store: Store) -> None:
    for entry in store.snapshots():
        try:
            digest = Digest.parse(entry.attestation)
            store.check(digest)
            data = store.object_path(digest).read_bytes()
        except (ValueError, OSError, IntegrityError) as e:
            message = e.message if isinstance(e, ProvError) else str(e)
            raise IntegrityError(
                f"the store's attestation of {entry.label!r} is unreadable: {message}",
                hint="`prov fsck` finds damaged objects",
            ) from e
        staged = _place(build, data, _attestation_name(entry.path, entry.label, data))
        original = Path(entry.path)
        sidecar = timestamp.sidecar_path(original)
        with contextlib.suppress(OSError):
            if sidecar.is_file() and original.read_bytes() == data:
                _place(build, sidecar, staged.name + ".tsr")
        build.items.append(_Item(staged, f"store: {entry.label}", False, store, entry.label))
    for witness in witness_entries(store):
        if witness.attestation is None:
            continue
        digest = Digest.parse(witness.attestation)
        store.check(digest)
        name = f"{witness.witness.snapshot.label}{WITNESS}{witness.id[:12]}.intoto.jsonl"
        build.witnesses.append(_place(build, store.object_path(digest).read_bytes(), name))


def _from_path(build: _Build, path: Path, store: Store | None) -> None:
    if path.is_dir():
        found = sorted(p for p in path.iterdir() if p.is_file())
        chosen = [p for p in found if p.name.endswith(SUFFIXES) or is_pack(p)]
        if not chosen:
            raise UsageError(
                f"{path} holds no attestation (*.intoto.jsonl, *.sigstore.json) or evidence pack"
            )
        for item in chosen:
            _from_path(build, item, store)
        return
    if not path.is_file():
        raise UsageError(f"{path} does not exist", hint="name a folder, an attestation or a pack")
    if WITNESS in path.name:
        build.witnesses.append(_place(build, path, path.name))
        return
    if is_pack(path):
        staged = _place(build, path, path.name)
        expect = path.name.removesuffix(".evidence.tar") if path.name.endswith(".tar") else None
        build.items.append(_Item(staged, str(path), True, expect=expect))
        return
    staged = _place(build, path, path.name)
    sidecar = timestamp.sidecar_path(path)
    if sidecar.is_file():
        _place(build, sidecar, staged.name + ".tsr")
    build.items.append(_Item(staged, str(path), False, store, label_from_filename(path)))


def _verify(build: _Build, item: _Item, stack: contextlib.ExitStack) -> None:
    policy = replace(build.trust.policy, keys=tuple(build.verifiers))
    target, blobs = item.staged, item.blobs
    try:
        if item.is_pack:
            item.opened = stack.enter_context(open_pack(item.staged))
            target, blobs = item.opened.attestation, item.opened.store
            item.blobs = blobs
            # The attestation inside is offered on its own too: the same bytes that verify.
            item.attestation = _place(build, target, target.name)
            inner = timestamp.sidecar_path(target)
            if inner.is_file():
                _place(build, inner, item.attestation.name + ".tsr")
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


def _steps(report: Report | None) -> tuple[Step, ...]:
    if report is None:
        return ()
    return tuple(
        Step(number=s.number, name=s.name, status=s.status, detail=s.detail) for s in report.steps
    )


def _verification(item: _Item) -> Verification:
    report = item.report
    if item.error is not None:
        return Verification(
            verified=False,
            summary="FAILED verification: " + item.error,
            steps=_steps(report),
            error=item.error,
        )
    assert report is not None
    signers = tuple(report.signers)
    skipped = [s.name for s in report.steps if s.status == "skipped" and s.name != "timestamp"]
    words = f"verified: signed by {', '.join(signers)}, the key(s) the builder trusts"
    if "blobs" in skipped:
        words += "; the stored files it names were not at hand and were not checked"
    else:
        words += "; every stored file it names has the recorded blake3"
    return Verification(
        verified=True,
        summary=words,
        signers=signers,
        times=tuple(report.times),
        steps=_steps(report),
    )


_MEANING = {
    "observed": "prov received these bytes itself and hashed them",
    "provider-asserted": "ids and digests the provider reported (commit, ETag, LFS sha256) "
    "are the provider's word, kept as given",
    "tls-bound": "the answer came over TLS with the recorded certificate",
    "time-anchored": "a timestamp authority vouches for the time",
}
_KIND = {
    "wandb": "a W&B value is the provider's word: configs can be edited after a run, "
    "and this is what W&B answered at that moment",
    "http": "this is what this observer received; TLS gives no proof that the server sent it",
    "huggingface": "the Hub's answer at that moment; a branch can move later",
    "git": "the files at that commit, read and hashed by prov",
    "listing": "the store's own listing: object names, sizes and checksums as the provider "
    "gave them",
    "oci": "the image manifest, checked against its digest",
}
_LOCATORS = ("url", "repo", "ref", "run", "revision", "repo_type", "image", "prefix", "path")
_DATA = ("commit", "tree", "status", "final_url", "digest", "root")


def _capture(capture: Capture) -> CaptureItem:
    said = [_MEANING[e] for e in capture.establishes if e in _MEANING]
    meaning = "; ".join([*said, _KIND.get(capture.kind, "")]).strip("; ")
    error = None
    if capture.status == "failed":
        detail = f"{capture.error.type}: {capture.error.message}" if capture.error else "failed"
        meaning = f"the source did not answer as asked; the failure is the evidence ({detail})"
        error = detail
    locator: list[tuple[str, str]] = []
    for key in _LOCATORS:
        if isinstance(capture.request.get(key), (str, int)):
            locator.append((key, str(capture.request[key])))
    for key in _DATA:
        if isinstance(capture.data.get(key), (str, int)) and not isinstance(
            capture.data.get(key), bool
        ):
            locator.append((key, str(capture.data[key])))
    return CaptureItem(
        source=capture.source,
        kind=capture.kind,
        status=capture.status,
        started=capture.started,
        establishes=capture.establishes,
        meaning=meaning or "what the collector recorded",
        digest=capture.digest,
        locator=tuple(locator),
        error=error,
    )


def _evidence(item: _Item) -> Evidence:
    assert item.snapshot is not None
    blobs: BlobSource = StoreBlobs(item.blobs) if item.blobs is not None else NoBlobs()
    return Evidence(item.snapshot, item.origin, 1, blobs)


def _claims(
    claims_file: claims_module.ClaimsFile, evidence: Evidence, notes: Sequence[NoteRef]
) -> ClaimsSummary:
    report = claims_module.check(claims_file, evidence, notes)
    results = []
    for claim, result in zip(claims_file.claims, report.results, strict=True):
        derived, gap, tolerance = _claim_numbers(result)
        read = tuple(
            Read(
                path=r.path,
                source=r.source,
                value=r.value,
                shown=value(r.value) if r.error is None else "",
                error=r.error,
            )
            for r in reads(claim, evidence)
        )
        results.append(
            ClaimItem(
                name=result.name,
                verdict=_VERDICT[result.status],
                published=result.claimed_text,
                published_value=result.claimed,
                published_in=result.source,
                derived=result.derived,
                derived_shown=derived if result.status != "error" else "—",
                gap=gap,
                relative_gap=result.relative_gap,
                tolerance=tolerance,
                expression=" ".join(result.expression.split()),
                error=result.error,
                reads=read,
                superseded_by=tuple(result.superseded_by),
            )
        )
    return ClaimsSummary(
        file=Path(report.claims_file).name,
        holds=report.passed,
        fails=report.failed,
        gaps=report.errors,
        results=tuple(results),
    )


def _note_verified(build: _Build, store: Store, entry: change_notes.NoteEntry) -> str | None:
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


def _notes(
    build: _Build, store: Store | None, milestones: dict[str, str]
) -> tuple[list[NoteItem], list[NoteRef]]:
    """Notes on the site's milestones (keyed by snapshot sha256 -> milestone id)."""
    if store is None or not store.exists():
        return [], []
    items, trusted = [], []
    for entry in change_notes.entries(store):
        milestone = milestones.get(entry.note.snapshot.sha256)
        if milestone is None:
            continue
        problem = _note_verified(build, store, entry)
        download = None
        if problem is None:
            data = store.object_path(Digest.parse(entry.attestation)).read_bytes()
            placed = _place(build, data, f"note-{entry.id[:16]}.intoto.jsonl")
            download = f"files/{placed.name}"
            trusted.append(entry.ref())
        items.append(
            NoteItem(
                id=entry.id,
                milestone=milestone,
                created=entry.note.created,
                text=entry.note.text,
                supersedes=entry.note.supersedes,
                verified=problem is None,
                detail="signed by a trusted key" if problem is None else f"NOT verified: {problem}",
                download=download,
            )
        )
    return items, trusted


def _interval(diff: Diff, a: Milestone, b: Milestone) -> Interval:
    counts = diff.counts
    if diff.equal:
        summary = f"no differences between {a.label} and {b.label}"
    else:
        summary = (
            f"{counts.sources_changed} of {len(diff.captures)} source(s) changed: "
            f"{counts.changes} change(s)"
        )
    if counts.volatile:
        summary += f"; {counts.volatile} volatile change(s) not counted"
    sources = tuple(
        SourceChange(
            source=c.source,
            kind=c.kind,
            status=c.status,
            changes=c.real_changes + (c.status in ("added", "removed")),
            volatile=c.volatile_changes,
            headline=headline(c) if c.differs else "unchanged",
        )
        for c in diff.captures
    )
    name = f"{a.id}--{b.id}"
    return Interval(
        a=a.label,
        b=b.label,
        equal=diff.equal,
        summary=summary,
        sources_changed=counts.sources_changed,
        changes=counts.changes,
        volatile=counts.volatile,
        sources=sources,
        page=f"diff/{name}.html",
        json_=f"files/diff-{name}.json",
    )


def _commands(build: _Build, name: str, kind: str | None) -> str:
    trust = build.trust
    args = ["prov", "verify", name]
    if kind == "sigstore" and trust.identity is not None:
        policy = trust.identity
        if policy.identity:
            args += ["--cert-identity", policy.identity, "--cert-oidc-issuer", policy.issuer]
        else:
            args += ["--repository", policy.repository or ""]
            if policy.ref:
                args += ["--ref", policy.ref]
    else:
        for key in trust.keys:
            args += ["--key", _key_name(key)]
        if trust.threshold > 1:
            args += ["--threshold", str(trust.threshold)]
    if trust.tsa_certs is not None:
        args += ["--tsa-certs", "tsa-chain.pem"]
    if trust.trusted_root is not None:
        args += ["--trusted-root", "trusted_root.json"]
    return shlex.join(args)


def _key_name(path: Path) -> str:
    stem = _SAFE.sub("_", path.name.removesuffix(".pub")).lstrip("._-") or "key"
    return f"{stem}.pub"


def _milestone_id(item: _Item) -> str:
    snapshot = item.report.snapshot if item.report is not None else None
    if snapshot is not None:
        return snapshot.label
    name = item.staged.name
    for suffix in (*SUFFIXES, ".evidence.tar", ".tar"):
        name = name.removesuffix(suffix)
    return _SAFE.sub("_", name) or "milestone"


def _write_pack(build: _Build, item: _Item, store: Store) -> Path | None:
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


def _trust(build: _Build) -> Trust:
    trust = build.trust
    key_items = []
    for path, verifier in zip(trust.keys, build.verifiers, strict=True):
        placed = _place(build, path, _key_name(path))
        key_items.append(KeyItem(file=f"files/{placed.name}", keyid=verifier.keyid))
    tsa = None
    if trust.tsa_certs is not None:
        _place(build, trust.tsa_certs, "tsa-chain.pem")
        tsa = "files/tsa-chain.pem"
    root = None
    if trust.trusted_root is not None:
        _place(build, trust.trusted_root, "trusted_root.json")
        root = "files/trusted_root.json"
    identity = trust.identity.describe() if trust.identity is not None else None
    parts = []
    if key_items:
        parts.append(
            f"{len(key_items)} public key(s), at least {trust.threshold} of which must have signed"
        )
    if identity:
        parts.append(f"the Sigstore identity {identity}")
    words = (
        "The builder of this site trusted "
        + " and ".join(parts)
        + ". Keys found inside the evidence were not trusted."
    )
    return Trust(
        keys=tuple(key_items),
        threshold=trust.threshold,
        identity=identity,
        trusted_root=root,
        tsa=tsa,
        words=words,
    )


def _merge(items: list[_Item]) -> list[_Item]:
    """One milestone per snapshot: a verified pack stands for the attestations it holds.

    The pack comes first because its verification also checked the blobs.
    """
    by_sha: dict[str, _Item] = {}
    out: list[_Item] = []
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


def _downloads(root: Path, roles: dict[str, tuple[str, str | None]]) -> list[Download]:
    out = []
    for path in sorted((root / "files").iterdir()):
        role, milestone = roles.get(path.name, ("attestation", None))
        out.append(
            Download(
                path=f"files/{path.name}",
                role=role,
                milestone=milestone,
                sha256=_sha256(path),
                size=path.stat().st_size,
            )
        )
    return out


def _roles(
    milestones: Sequence[Milestone],
    notes: Sequence[NoteItem],
    intervals: Sequence[Interval],
    trust: Trust,
    witnesses: Sequence[Witness] = (),
    rechecks: Sequence[Recheck] = (),
) -> dict[str, Any]:
    roles: dict[str, tuple[str, str | None]] = {}
    for m in milestones:
        name = Path(m.attestation).name
        roles[name] = ("pack" if name.endswith(".tar") else "attestation", m.id)
        roles[Path(m.attestation).name + ".tsr"] = ("timestamp", m.id)
        if m.pack:
            roles[Path(m.pack).name] = ("pack", m.id)
    for note in notes:
        if note.download:
            roles[Path(note.download).name] = ("note", note.milestone)
    for interval in intervals:
        roles[Path(interval.json_).name] = ("diff", interval.b)
    for witness in witnesses:
        if witness.download:
            roles[Path(witness.download).name] = ("witness", witness.milestone)
    for recheck in rechecks:
        if recheck.download:
            roles[Path(recheck.download).name] = ("recheck", recheck.milestone)
    for key in trust.keys:
        roles[Path(key.file).name] = ("key", None)
    if trust.tsa:
        roles[Path(trust.tsa).name] = ("tsa-chain", None)
    if trust.trusted_root:
        roles[Path(trust.trusted_root).name] = ("trusted-root", None)
    return roles


def _names(build: _Build) -> dict[str, str]:
    return {v.keyid: v.source for v in build.verifiers}


def _witnesses(
    build: _Build, milestones: Sequence[Milestone], snapshots: dict[str, Snapshot]
) -> list[Witness]:
    """Each witness statement, verified with the builder's keys against its milestone."""
    by_sha = {m.snapshot_sha256: m for m in milestones if m.snapshot_sha256}
    names = _names(build)
    publishers = {s for m in milestones for s in m.verification.signers}
    out = []
    for path in build.witnesses:
        milestone = path.name.split(WITNESS, 1)[0]
        try:
            found = check_witness(path, build.verifiers)
            target = by_sha.get(found.witness.snapshot.sha256)
            if target is None:
                raise VerificationError(
                    f"it witnesses {found.witness.snapshot.label!r}, which is not on this site"
                )
            milestone = target.id
            found = check_witness(path, build.verifiers, snapshots[target.id])
        except (VerificationError, UsageError) as e:
            out.append(
                Witness(
                    milestone=milestone,
                    signer="no trusted key",
                    vantage="unknown",
                    time="",
                    verified=False,
                    detail=f"NOT verified: {e.message}",
                    download=f"files/{path.name}",
                )
            )
            continue
        signers = [names.get(k, k) for k in found.signers]
        vantage = found.witness.vantage
        where = vantage.operator + (f", {vantage.region}" if vantage.region else "")
        if vantage.reported_ip:
            where += f", seen as {vantage.reported_ip}"
        sources = ", ".join(c.source for c in found.witness.witnessed)
        detail = f"observed the same content again for: {sources}"
        if set(signers) <= publishers:
            detail += " (signed by the publisher's own key: not an independent observer)"
        out.append(
            Witness(
                milestone=milestone,
                signer=", ".join(signers),
                vantage=where,
                time=found.witness.created,
                verified=True,
                detail=detail,
                download=f"files/{path.name}",
            )
        )
    return out


def _recheck(item: _Item, milestones: dict[str, str]) -> Recheck:
    snapshot = item.snapshot
    assert snapshot is not None and snapshot.recheck is not None
    outcomes = snapshot.recheck.outcomes
    changed = tuple(sorted(source for source, outcome in outcomes.items() if outcome != "same"))
    same = len(outcomes) - len(changed)
    words = ", ".join(f"{s} {outcomes[s].replace('-', ' ')}" for s in changed)
    detail = f"{same} of {len(outcomes)} source(s) the same" + (
        f"; DRIFT: {words}" if words else ""
    )
    assert item.report is not None
    return Recheck(
        milestone=milestones.get(snapshot.recheck.of.sha256, snapshot.recheck.of.label),
        time=snapshot.created,
        drift=bool(changed),
        changed=changed,
        detail=detail + f"; signed by {', '.join(item.report.signers)}",
        verified=True,
        download=f"files/{(item.attestation or item.staged).name}",
    )


def build_site(
    output: Path,
    inputs: Sequence[Path],
    store: Store | None,
    options: TrustOptions,
    *,
    title: str,
    claims_path: Path | None = None,
    show_failed: bool = False,
    packs: bool = True,
) -> Built:
    """Verify every milestone, check the claims, diff neighbours and write the site to ``output``.

    Raises VerificationError (and writes nothing) when a milestone fails verification, unless
    ``show_failed``: then the site marks it failed and ``Built.failed`` lists it.
    """
    trust = SiteTrust.of(options)
    claims_file = claims_module.load(claims_path) if claims_path is not None else None
    _check_target(output)
    root = output.parent / f".{output.name}.building-{os.getpid()}"
    shutil.rmtree(root, ignore_errors=True)
    (root / "files").mkdir(parents=True)
    try:
        with contextlib.ExitStack() as stack:
            site = _assemble(
                root, inputs, store, trust, title, claims_file, show_failed, packs, stack
            )
        _move_into_place(root, output)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return Built(site, output)


def _assemble(
    root: Path,
    inputs: Sequence[Path],
    store: Store | None,
    trust: SiteTrust,
    title: str,
    claims_file: claims_module.ClaimsFile | None,
    show_failed: bool,
    packs: bool,
    stack: contextlib.ExitStack,
) -> Site:
    build = _Build(root, trust)
    build.verifiers = [
        replace(v, source=f"{_key_name(Path(v.source))} ({v.keyid[:16]})")
        for v in trust.policy.keys
    ]
    if inputs:
        for path in inputs:
            _from_path(build, path, store)
    elif store is not None and store.exists():
        _from_store(build, store)
    if not build.items:
        raise UsageError(
            "nothing to publish: the store holds no snapshot and no input was named",
            hint="pass a folder of attestations or evidence packs, or --store DIR",
        )
    for item in build.items:
        _verify(build, item, stack)
    failed = [i for i in build.items if i.error is not None]
    if failed and not show_failed:
        lines = "; ".join(f"{i.staged.name}: {i.error}" for i in failed)
        raise VerificationError(
            f"{len(failed)} of {len(build.items)} attestation(s) failed verification: {lines}",
            hint="nothing was written; fix or remove them, or pass --show-failed to publish "
            "them marked as failed",
        )
    items = _merge(build.items)
    recheck_items = [i for i in items if i.snapshot is not None and i.snapshot.recheck is not None]
    items = [i for i in items if i not in recheck_items]
    items.sort(
        key=lambda i: (i.snapshot is None, i.snapshot.created if i.snapshot else "", i.staged.name)
    )
    if packs and store is not None:
        for item in items:
            if item.snapshot is not None and item.pack is None and item.blobs is not None:
                item.pack = _write_pack(build, item, item.blobs)
    site_trust = _trust(build)
    ids = {i.snapshot.sha256().hex: _milestone_id(i) for i in items if i.snapshot is not None}
    note_items, trusted_notes = _notes(build, store, ids)
    milestones: list[Milestone] = []
    evidences: dict[str, Evidence] = {}
    for item in items:
        milestones.append(
            _milestone(build, item, claims_file, trusted_notes, note_items, evidences)
        )
    intervals: list[Interval] = []
    diffs: list[Diff] = []
    verified = [m for m in milestones if m.verification.verified]
    for a, b in itertools.pairwise(verified):
        left, right = evidences[a.id], evidences[b.id]
        spanning = [
            n
            for n in trusted_notes
            if n.snapshot_sha256 in (a.snapshot_sha256, b.snapshot_sha256)
            or (a.created or "") <= n.created <= (b.created or "")
        ]
        diff = compare(left, right, spanning)
        diffs.append(diff)
        intervals.append(_interval(diff, a, b))
    snapshots = {m.id: e.snapshot for m in milestones if (e := evidences.get(m.id))}
    site = Site(
        title=title,
        built=utc_now(),
        tool=f"prov {__version__}",
        trust=site_trust,
        milestones=tuple(milestones),
        intervals=tuple(intervals),
        witnesses=tuple(_witnesses(build, milestones, snapshots)),
        rechecks=tuple(_recheck(i, ids) for i in recheck_items),
    )
    site_html.write(root, site, diffs)
    downloads = _downloads(
        root, _roles(milestones, note_items, intervals, site_trust, site.witnesses, site.rechecks)
    )
    site = site.model_copy(update={"downloads": tuple(downloads)})
    site_html.write_sums(root, site)
    site_html.write_index(root, site)
    return site


def _milestone(
    build: _Build,
    item: _Item,
    claims_file: claims_module.ClaimsFile | None,
    trusted_notes: Sequence[NoteRef],
    note_items: Sequence[NoteItem],
    evidences: dict[str, Evidence],
) -> Milestone:
    ident = _milestone_id(item)
    snapshot = item.snapshot
    kind = item.report.kind if item.report is not None else None
    offered = item.attestation or item.staged
    attestation = f"files/{offered.name}"
    commands = [_commands(build, offered.name, kind)]
    if item.pack is not None and item.pack != offered:
        commands.append(_commands(build, item.pack.name, kind))
    captures: tuple[CaptureItem, ...] = ()
    claims = None
    if snapshot is not None:
        evidence = _evidence(item)
        evidences[ident] = evidence
        captures = tuple(_capture(c) for c in snapshot.captures)
        if claims_file is not None:
            sha = snapshot.sha256().hex
            relevant = [
                n
                for n in trusted_notes
                if n.snapshot_sha256 == sha or n.created <= snapshot.created
            ]
            claims = _claims(claims_file, evidence, relevant)
    return Milestone(
        id=ident,
        label=snapshot.label if snapshot is not None else ident,
        snapshot_sha256=snapshot.sha256().hex if snapshot is not None else None,
        created=snapshot.created if snapshot is not None else None,
        kind=kind if kind in ("dsse", "sigstore") else None,
        origin=item.origin,
        page=f"m/{ident}.html",
        attestation=attestation,
        pack=f"files/{item.pack.name}" if item.pack is not None else None,
        verification=_verification(item),
        captures=captures,
        claims=claims,
        notes=tuple(n for n in note_items if n.milestone == ident),
        commands=tuple(commands),
    )


def _check_target(output: Path) -> None:
    if output.exists():
        marker = output / "site.json"
        if (
            not output.is_dir()
            or not marker.is_file()
            or b'"https://prov.dev/site/v1"' not in marker.read_bytes()[:200]
        ):
            raise UsageError(
                f"{output} exists and is not a prov site",
                hint="choose another -o folder; prov only replaces a site it built",
            )


def _move_into_place(root: Path, output: Path) -> None:
    old = output.parent / f".{output.name}.old-{os.getpid()}"
    try:
        if output.exists():
            output.rename(old)
        root.rename(output)
    except OSError as e:
        from provenance.errors import StoreError

        raise StoreError(f"cannot write the site to {output}", cause=str(e)) from e
    finally:
        shutil.rmtree(old, ignore_errors=True)
