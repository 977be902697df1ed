"""What ``prov verify`` does with what an auditor names: an attestation file or an evidence pack,
checked under the trust policy (``verify.policy``) with the label its outer file name implies.

The name checked is the one the auditor was handed: a pack for ``m1`` copied to
``m2.evidence.tar`` (or to ``m2.intoto.jsonl``) is presented as ``m2`` and fails the replay check,
whatever the names inside the pack say. A pack's manifest must also agree with the statement it
carries (label and snapshot sha256).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provenance.attest.dsse import Verifier
from provenance.attest.envelope import read_attestation
from provenance.errors import PackError, UsageError, VerificationError
from provenance.store.objects import Store
from provenance.store.pack import OpenedPack, is_pack, open_pack
from provenance.verify.policy import TrustOptions, TrustPolicy, for_pack, from_auditor
from provenance.verify.steps import Report, label_from_filename, verify

if TYPE_CHECKING:
    from provenance.store.pack import Manifest

__all__ = ["Audit", "audit", "make_pack", "run"]

Then = Callable[[Report, Sequence[Verifier], Path], None]
"""More checks on a verified report while the evidence is still open (witnesses, ...); the path
is the file the auditor named (a pack's statements travel beside it, not inside)."""


@dataclass
class Audit:
    """The report, the failure if any, and what was trusted because a pack said so."""

    report: Report
    error: VerificationError | None
    trusted: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``prov verify --format json``: the report, with what a pack was trusted for."""
        document = self.report.to_json()
        document["trusted_from_pack"] = list(self.trusted)
        document["trust_notes"] = self.notes
        return document


def audit(
    named: Path | None,
    options: TrustOptions,
    *,
    pack: Path | None = None,
    store: Path | None = None,
    expect_label: str | None = None,
    then: Then | None = None,
) -> Audit:
    """Verify an attestation file or a pack. Raises UsageError; failures are in ``Audit.error``."""
    if named is not None and pack is None and is_pack(named):
        named, pack = None, named
    if named is None and pack is None:
        raise UsageError("name the attestation to verify, or an evidence pack with --pack")
    if pack is not None and store is not None:
        raise UsageError("--pack and --store exclude each other: the pack holds the blobs")
    if pack is None:
        assert named is not None
        policy = from_auditor(options)
        blobs = Store(store).require() if store else None
        return _run(named, named, policy, blobs, expect_label, then)
    opened = open_pack(pack)
    try:
        policy = for_pack(options, opened)
        target = _pack_attestation(opened, named)
        result = _run(target, pack, policy, opened.store, expect_label, then)
        _check_manifest(opened, result)
        _name_members(result, f"{opened.root}/", f"{opened.source.name}:")
    finally:
        opened.close()
    result.report.path = f"{pack} ({result.report.path.rsplit('/', 1)[-1]})"
    return result


def run(
    target: Path,
    policy: TrustPolicy,
    *,
    store: Store | None = None,
    expect_label: str | None = None,
    implied_label: str | None = None,
) -> Report:
    """``steps.verify`` under a trust policy; raises VerificationError carrying the report."""
    from provenance.attest import sigstore

    if policy.identity is not None and not sigstore.is_bundle(read_attestation(target)):
        raise UsageError(
            f"{target} is a DSSE envelope: identity options apply to Sigstore bundles",
            hint="verify it with --key PUB",
        )
    return verify(
        target,
        policy.keys,
        threshold=policy.threshold,
        store=store,
        identity=policy.identity,
        trusted_root=policy.trusted_root,
        tsa=policy.tsa,
        expect_label=expect_label,
        implied_label=implied_label,
    )


def _run(
    target: Path,
    outer: Path,
    policy: TrustPolicy,
    store: Store | None,
    expect_label: str | None,
    then: Then | None,
) -> Audit:
    implied = label_from_filename(outer)
    notes = []
    if expect_label is None and implied is None:
        notes.append(
            f"{outer.name} is not named LABEL.intoto.jsonl (or .sigstore.json, .evidence.tar): "
            "the signed label was not checked (pass --expect-label)"
        )
    try:
        report = run(target, policy, store=store, expect_label=expect_label, implied_label=implied)
        if then is not None:
            then(report, policy.keys, outer)
    except VerificationError as e:
        if not isinstance(e.report, Report):
            raise
        return Audit(e.report, e, policy.trusted, notes)
    return Audit(report, None, policy.trusted, notes)


def _name_members(result: Audit, temporary: str, shown: str) -> None:
    """Members named inside the pack (``m1.evidence.tar:attestation/...``), not by the
    temporary folder they were extracted to, which is gone once the pack is closed."""
    for step in result.report.steps:
        step.detail = step.detail.replace(temporary, shown)
    error = result.error
    if error is not None and temporary in error.message:
        result.error = type(error)(
            error.message.replace(temporary, shown),
            cause=error.cause,
            hint=error.hint,
            report=result.report,
        )


def _pack_attestation(opened: OpenedPack, named: Path | None) -> Path:
    inside = opened.attestation
    if named is not None and named.read_bytes() != inside.read_bytes():
        raise UsageError(
            f"{named} is not the attestation in {opened.source}",
            hint="verify the pack alone (prov verify --pack FILE), or the attestation alone",
        )
    return inside


def _check_manifest(opened: OpenedPack, result: Audit) -> None:
    """The manifest is unsigned: it must say what the signed statement says, or nothing."""
    snapshot = result.report.snapshot
    if result.error is not None or snapshot is None:
        return
    manifest = opened.manifest
    if manifest.label != snapshot.label or manifest.snapshot_sha256 != snapshot.sha256().hex:
        result.error = PackError(
            f"{opened.source}: the manifest names {manifest.label!r} "
            f"({manifest.snapshot_sha256[:12]}), the attestation {snapshot.label!r} "
            f"({snapshot.sha256().hex[:12]})",
            hint="the pack was altered after it was made",
            report=result.report,
        )


def make_pack(attestation: Path, options: TrustOptions, store: Store, output: Path) -> Manifest:
    """Verify ``attestation`` with its blobs under the auditor's policy, then pack it.

    The pack records the keys, identity, trusted root and TSA chain it was verified with, for
    a reader who passes ``--trust-pack``; a pack is therefore always verifiable as made.
    """
    from provenance.attest import sigstore, timestamp
    from provenance.store.pack import PackInput, PackPolicy, write_pack

    bundle = sigstore.is_bundle(read_attestation(attestation))
    if not bundle and not options.keys:
        raise UsageError("a DSSE attestation is packed with its public keys: pass --key PUB")
    policy = from_auditor(options)
    if bundle and policy.identity is None and not options.keys:
        raise UsageError(
            "a Sigstore bundle is packed with its identity policy",
            hint="pass --cert-identity and --cert-oidc-issuer, or --repository owner/name",
        )
    root = options.trusted_root
    if bundle and root is None:
        root = sigstore.production_trusted_root_path()
    report = run(attestation, replace(policy, trusted_root=root), store=store)
    assert report.snapshot is not None, "prov packs snapshots"
    identity = policy.identity
    sidecar = timestamp.sidecar_path(attestation)
    source = PackInput(
        attestation=attestation,
        kind="sigstore" if bundle else "dsse",
        snapshot=report.snapshot,
        policy=PackPolicy(
            threshold=policy.threshold,
            identity=identity.identity if identity else None,
            issuer=identity.issuer if identity else None,
            repository=identity.repository if identity else None,
            ref=identity.ref if identity else None,
        ),
        keys=options.keys,
        trusted_root=root if bundle else None,
        tsa_chain=options.tsa_certs,
        timestamp=sidecar if not bundle and sidecar.is_file() else None,
    )
    return write_pack(source, store, output)
