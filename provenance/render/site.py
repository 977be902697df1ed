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
import itertools
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from provenance import __version__
from provenance.compare import claims as claims_module
from provenance.compare.diff import Diff, NoteRef, compare
from provenance.compare.evidence import Evidence
from provenance.errors import UsageError, VerificationError
from provenance.model import utc_now
from provenance.render import site_html
from provenance.render.site_content import (
    check_claims,
    check_witnesses,
    describe_capture,
    describe_interval,
    describe_recheck,
    describe_trust,
    describe_verification,
    download_roles,
    list_downloads,
    notes_on,
    verify_command,
)
from provenance.render.site_evidence import (
    Build,
    Item,
    SiteTrust,
    evidence_of,
    from_path,
    from_store,
    key_name,
    merge,
    milestone_id,
    verify_item,
    write_evidence_pack,
)
from provenance.render.site_model import (
    CaptureItem,
    Interval,
    Milestone,
    NoteItem,
    Site,
)
from provenance.store.objects import Store
from provenance.verify.policy import TrustOptions

__all__ = ["Built", "SiteTrust", "build_site"]


@dataclass(frozen=True)
class Built:
    site: Site
    output: Path

    @property
    def failed(self) -> list[Milestone]:
        return [m for m in self.site.milestones if not m.verification.verified]


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
    build = Build(root, trust)
    build.verifiers = [
        replace(v, source=f"{key_name(Path(v.source))} ({v.keyid[:16]})") for v in trust.policy.keys
    ]
    if inputs:
        for path in inputs:
            from_path(build, path, store)
    elif store is not None and store.exists():
        from_store(build, store)
    if not build.items:
        raise UsageError(
            "nothing to publish: the store holds no snapshot and no input was named",
            hint="pass a folder of attestations or evidence packs, or --store DIR",
        )
    for item in build.items:
        verify_item(build, item, stack)
    failed = [i for i in build.items if i.error is not None]
    if failed and not show_failed:
        lines = "; ".join(f"{i.staged.name}: {i.error}" for i in failed)
        raise VerificationError(
            f"{len(failed)} of {len(build.items)} attestation(s) failed verification: {lines}",
            hint="nothing was written; fix or remove them, or pass --show-failed to publish "
            "them marked as failed",
        )
    items = merge(build.items)
    recheck_items = [i for i in items if i.snapshot is not None and i.snapshot.recheck is not None]
    items = [i for i in items if i not in recheck_items]
    items.sort(key=lambda i: (_signed_time(i) is None, _signed_time(i) or "", i.staged.name))
    if packs and store is not None:
        for item in items:
            if item.snapshot is not None and item.pack is None and item.blobs is not None:
                item.pack = write_evidence_pack(build, item, item.blobs)
    site_trust = describe_trust(build)
    ids = {i.snapshot.sha256().hex: milestone_id(i) for i in items if i.snapshot is not None}
    note_items, trusted_notes = notes_on(build, store, ids)
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
        intervals.append(describe_interval(diff, a, b))
    snapshots = {m.id: e.snapshot for m in milestones if (e := evidences.get(m.id))}
    site = Site(
        title=title,
        built=utc_now(),
        tool=f"prov {__version__}",
        trust=site_trust,
        milestones=tuple(milestones),
        intervals=tuple(intervals),
        witnesses=tuple(check_witnesses(build, milestones, snapshots)),
        rechecks=tuple(describe_recheck(i, ids) for i in recheck_items),
    )
    site_html.write(root, site, diffs)
    downloads = list_downloads(
        root,
        download_roles(
            milestones, note_items, intervals, site_trust, site.witnesses, site.rechecks
        ),
    )
    site = site.model_copy(update={"downloads": tuple(downloads)})
    site_html.write_sums(root, site)
    site_html.write_index(root, site)
    return site


def _signed_time(item: Item) -> str | None:
    """When the snapshot says it was made, once a trusted key's signature over it verified.

    A milestone that failed at a later step (its subject, a capture digest, a blob) still has a
    signed time, so it stands in its place on the timeline; one whose signature failed does not.
    """
    report = item.report
    return report.snapshot.created if report is not None and report.snapshot is not None else None


def _milestone(
    build: Build,
    item: Item,
    claims_file: claims_module.ClaimsFile | None,
    trusted_notes: Sequence[NoteRef],
    note_items: Sequence[NoteItem],
    evidences: dict[str, Evidence],
) -> Milestone:
    ident = milestone_id(item)
    snapshot = item.snapshot
    kind = item.report.kind if item.report is not None else None
    offered = item.attestation or item.staged
    attestation = f"files/{offered.name}"
    commands = [verify_command(build, offered.name, kind)]
    if item.pack is not None and item.pack != offered:
        commands.append(verify_command(build, item.pack.name, kind))
    captures: tuple[CaptureItem, ...] = ()
    claims = None
    if snapshot is not None:
        evidence = evidence_of(item)
        evidences[ident] = evidence
        captures = tuple(describe_capture(c) for c in snapshot.captures)
        if claims_file is not None:
            sha = snapshot.sha256().hex
            relevant = [
                n
                for n in trusted_notes
                if n.snapshot_sha256 == sha or n.created <= snapshot.created
            ]
            claims = check_claims(claims_file, evidence, relevant)
    return Milestone(
        id=ident,
        label=snapshot.label if snapshot is not None else ident,
        snapshot_sha256=snapshot.sha256().hex if snapshot is not None else None,
        created=_signed_time(item),
        kind=kind if kind in ("dsse", "sigstore") else None,
        origin=item.origin,
        page=f"m/{ident}.html",
        attestation=attestation,
        pack=f"files/{item.pack.name}" if item.pack is not None else None,
        verification=describe_verification(item),
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
