"""The parts of ``site.json`` drawn from verified evidence: verdicts in plain words, captures,
claims with the values they read, intervals, notes, witnesses, rechecks, trust and downloads.

Nothing here decides trust: every verdict comes from ``verify``, ``compare.claims`` and
``compare.diff``; these functions put them into the site's model, in words a reader can follow.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from provenance.compare import claims as claims_module
from provenance.compare import notes as change_notes
from provenance.compare.diff import Diff, NoteRef, headline
from provenance.compare.evidence import Evidence
from provenance.compare.reads import reads
from provenance.digest import Digest
from provenance.errors import UsageError, VerificationError
from provenance.model import Capture, Snapshot
from provenance.render.sections import claim_numbers, value
from provenance.render.site_evidence import (
    WITNESS,
    Build,
    Item,
    key_name,
    note_problem,
    place,
    sha256_of,
)
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
    SourceChange,
    Step,
    Trust,
    Verification,
    Witness,
)
from provenance.store.objects import Store
from provenance.verify.observers import check_witness
from provenance.verify.steps import Report

__all__ = [
    "check_claims",
    "check_witnesses",
    "describe_capture",
    "describe_interval",
    "describe_recheck",
    "describe_trust",
    "describe_verification",
    "download_roles",
    "list_downloads",
    "notes_on",
    "verify_command",
]


_VERDICT = {"pass": "holds", "fail": "fails", "error": "gap"}


def _steps(report: Report | None) -> tuple[Step, ...]:
    if report is None:
        return ()
    return tuple(
        Step(number=s.number, name=s.name, status=s.status, detail=s.detail) for s in report.steps
    )


def describe_verification(item: Item) -> Verification:
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


def describe_capture(capture: Capture) -> CaptureItem:
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


def check_claims(
    claims_file: claims_module.ClaimsFile, evidence: Evidence, notes: Sequence[NoteRef]
) -> ClaimsSummary:
    report = claims_module.check(claims_file, evidence, notes)
    results = []
    for claim, result in zip(claims_file.claims, report.results, strict=True):
        derived, gap, tolerance = claim_numbers(result)
        read = tuple(
            Read(
                path=r.path,
                source=r.source,
                value=r.value,
                shown=value(r.value) if r.error is None else "",
                error=r.error,
            )
            for r in reads(claim, evidence, claims_file.lets)
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


def notes_on(
    build: Build, store: Store | None, milestones: dict[str, str]
) -> tuple[list[NoteItem], list[NoteRef]]:
    """Notes on the site's milestones (keyed by snapshot sha256 -> milestone id)."""
    if store is None or not store.exists():
        return [], []
    items, trusted = [], []
    for entry in change_notes.entries(store):
        milestone = milestones.get(entry.note.snapshot.sha256)
        if milestone is None:
            continue
        problem = note_problem(build, store, entry)
        download = None
        if problem is None:
            data = store.read(Digest.parse(entry.attestation))
            placed = place(build, data, f"note-{entry.id[:16]}.intoto.jsonl")
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


def describe_interval(diff: Diff, a: Milestone, b: Milestone) -> Interval:
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


def verify_command(build: Build, name: str, kind: str | None) -> str:
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
            args += ["--key", key_name(key)]
        if trust.threshold > 1:
            args += ["--threshold", str(trust.threshold)]
    if trust.tsa_certs is not None:
        args += ["--tsa-certs", "tsa-chain.pem"]
    if trust.trusted_root is not None:
        args += ["--trusted-root", "trusted_root.json"]
    return shlex.join(args)


def describe_trust(build: Build) -> Trust:
    trust = build.trust
    key_items = []
    for path, verifier in zip(trust.keys, build.verifiers, strict=True):
        placed = place(build, path, key_name(path))
        key_items.append(KeyItem(file=f"files/{placed.name}", keyid=verifier.keyid))
    tsa = None
    if trust.tsa_certs is not None:
        place(build, trust.tsa_certs, "tsa-chain.pem")
        tsa = "files/tsa-chain.pem"
    root = None
    if trust.trusted_root is not None:
        place(build, trust.trusted_root, "trusted_root.json")
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


def list_downloads(root: Path, roles: dict[str, tuple[str, str | None]]) -> list[Download]:
    out = []
    for path in sorted((root / "files").iterdir()):
        role, milestone = roles.get(path.name, ("attestation", None))
        out.append(
            Download(
                path=f"files/{path.name}",
                role=role,
                milestone=milestone,
                sha256=sha256_of(path),
                size=path.stat().st_size,
            )
        )
    return out


def download_roles(
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


def _names(build: Build) -> dict[str, str]:
    return {v.keyid: v.source for v in build.verifiers}


def check_witnesses(
    build: Build, milestones: Sequence[Milestone], snapshots: dict[str, Snapshot]
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


def describe_recheck(item: Item, milestones: dict[str, str]) -> Recheck:
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
