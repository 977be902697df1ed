"""Verifying an attestation, step by step (docs/design.md, "Verification steps").

1. the envelope (DSSE) or bundle (Sigstore) parses and its payloadType is in-toto's;
2. signatures or bundle: at least ``threshold`` distinct trusted keys signed the PAE bytes, or
   the Sigstore bundle verifies against the trust root and the identity policy (offline);
3. the RFC 3161 timestamp, checked against the TSA chain when one is given;
4. the statement is in-toto v1 with prov's predicateType, and the predicate matches its schema
   (a foreign statement, such as SLSA provenance or an npm publish attestation, fails here with
   its subject and predicateType named);
5. the subject's sha256 equals the sha256 of the canonical snapshot bytes;
6. with a store or pack: every blob the snapshot references is there and hashes to its address;
7. witness statements, when there are any (``observers``).

Each step passes, fails or is skipped with a reason. The first failure raises VerificationError
carrying the report; a verifier never returns "false".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from provenance._internal.progress import advance, task
from provenance.attest import dsse
from provenance.attest import statement as statements
from provenance.attest.envelope import read_attestation, read_envelope
from provenance.digest import Digest
from provenance.errors import IntegrityError, ProvError, UsageError, VerificationError
from provenance.model import Snapshot
from provenance.store.manifest import capture_blobs
from provenance.store.objects import Store
from provenance.verify.predicates import Checked, check_predicate, check_schema, check_statement

if TYPE_CHECKING:
    from provenance.attest.sigstore import IdentityPolicy
    from provenance.attest.timestamp import TsaTrust

__all__ = [
    "Report",
    "Step",
    "check_blobs",
    "check_label",
    "check_predicate",
    "check_schema",
    "label_from_filename",
    "verify",
]

Status = Literal["passed", "failed", "skipped"]


@dataclass
class Step:
    number: int
    name: str
    status: Status
    detail: str


@dataclass
class Report:
    path: str
    steps: list[Step] = field(default_factory=list)
    snapshot: Snapshot | None = None
    signers: list[str] = field(default_factory=list)
    kind: str = "dsse"
    times: list[str] = field(default_factory=list)
    observers: Any = None  # a verify.observers.ObserverReport, once observers were counted
    checked: Checked | None = None  # what the statement is (snapshot, note, diff) and about

    @property
    def ok(self) -> bool:
        return all(step.status != "failed" for step in self.steps)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "https://prov.dev/verify-report/v1",
            "attestation": self.path,
            "verified": self.ok,
            "label": self.snapshot.label if self.snapshot else None,
            "snapshot_sha256": self.snapshot.sha256().hex if self.snapshot else None,
            "signers": self.signers,
            "kind": self.kind,
            "times": self.times,
            "steps": [step.__dict__ for step in self.steps],
            "statement": self.checked.kind if self.checked else None,
            **({"observers": self.observers.model_dump(mode="json")} if self.observers else {}),
        }


class _Checker:
    def __init__(self, report: Report) -> None:
        self.report = report

    def passed(self, number: int, name: str, detail: str) -> None:
        self.report.steps.append(Step(number, name, "passed", detail))

    def skipped(self, number: int, name: str, detail: str) -> None:
        self.report.steps.append(Step(number, name, "skipped", detail))

    def fail(self, number: int, name: str, error: ProvError) -> VerificationError:
        self.report.steps.append(Step(number, name, "failed", error.message))
        failure = VerificationError(
            f"step {number} ({name}) failed: {error.message}",
            cause=error.cause,
            hint=error.hint,
            report=self.report,
        )
        return failure


def verify(
    path: Path,
    keys: Sequence[dsse.Verifier],
    *,
    threshold: int = 1,
    store: Store | None = None,
    identity: IdentityPolicy | None = None,
    trusted_root: Path | None = None,
    tsa: TsaTrust | None = None,
    expect_label: str | None = None,
    implied_label: str | None = None,
) -> Report:
    """Verify a DSSE attestation or a Sigstore bundle. Returns the report, or raises
    VerificationError.

    A bundle needs ``identity`` (or one trusted ECDSA key in ``keys`` for a managed-key bundle);
    ``trusted_root`` defaults to the production root shipped with sigstore. ``tsa`` is the chain
    an RFC 3161 token must verify against; without it a token is reported, not checked.
    With ``expect_label``, the signed label must be that one (see ``check_label``);
    ``implied_label`` (what a file name implies) likewise, for the kinds prov names files by.
    """
    from provenance.attest import sigstore

    report = Report(str(path))
    check = _Checker(report)
    data = read_attestation(path)

    if sigstore.is_bundle(data):
        report.kind = "sigstore"
        try:
            sigstore.check_form(data, str(path))
            payload_type, payload, _ = sigstore.dsse_content(data, str(path))
            if payload_type != statements.PAYLOAD_TYPE:
                raise VerificationError(
                    f"payloadType is {payload_type!r}, not {statements.PAYLOAD_TYPE!r}"
                )
        except VerificationError as e:
            raise check.fail(1, "bundle", e) from e
        media_type = sigstore.json_media_type(data)
        check.passed(1, "bundle", f"Sigstore bundle {media_type}, payloadType {payload_type}")
        signatures = _check_bundle(check, data, path, keys, identity, trusted_root, payload)
    else:
        try:
            envelope = read_envelope(path)
            if envelope.payload_type != statements.PAYLOAD_TYPE:
                raise VerificationError(
                    f"payloadType is {envelope.payload_type!r}, not {statements.PAYLOAD_TYPE!r}"
                )
        except VerificationError as e:
            raise check.fail(1, "envelope", e) from e
        check.passed(1, "envelope", f"DSSE envelope, payloadType {envelope.payload_type}")
        payload = envelope.payload
        try:
            results = dsse.verify(envelope, keys, threshold)
        except VerificationError as e:
            raise check.fail(2, "signatures", e) from e
        report.signers = sorted({r.verified_by for r in results if r.verified_by})
        check.passed(
            2,
            "signatures",
            f"{len(report.signers)} trusted key(s) verified (threshold {threshold}): "
            + ", ".join(report.signers),
        )
        signatures = [envelope.signatures[r.index].sig for r in results if r.verified_by]

    _check_timestamp(check, path, data, report.kind, signatures, tsa)

    try:
        parsed = statements.parse(payload)
        predicate, checked = check_statement(parsed)
    except VerificationError as e:
        raise check.fail(4, "statement", e) from e
    report.snapshot, report.checked = checked.snapshot, checked
    check.passed(
        4,
        "statement",
        f"in-toto Statement v1, predicateType {parsed.predicate_type}, {checked.detail}",
    )

    label = expect_label or (implied_label if predicate.named else None)
    try:
        detail = predicate.subject(parsed, checked)
        if label is not None:
            detail += "; " + _check_label(checked.label, label)
    except VerificationError as e:
        raise check.fail(5, "subject", e) from e
    check.passed(5, "subject", detail)

    snapshot = checked.snapshot
    if snapshot is None:
        check.skipped(6, "blobs", f"a {checked.kind} references no blobs")
    elif store is None:
        check.skipped(6, "blobs", "no --store or --pack given: referenced blobs were not checked")
    else:
        try:
            detail = check_blobs(snapshot, store)
        except VerificationError as e:
            raise check.fail(6, "blobs", e) from e
        check.passed(6, "blobs", detail)
    return report


def _check_bundle(
    check: _Checker,
    data: bytes,
    path: Path,
    keys: Sequence[dsse.Verifier],
    identity: IdentityPolicy | None,
    trusted_root: Path | None,
    payload: bytes,
) -> list[bytes]:
    """Step 2 for a Sigstore bundle; returns the signature a timestamp must cover.

    ``payload`` is what steps 4 and 5 will check; it must be the payload sigstore verified.
    """
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    from provenance.attest import sigstore

    managed = None
    if identity is None:
        kinds = (ec.EllipticCurvePublicKey, rsa.RSAPublicKey, ed25519.Ed25519PublicKey)
        usable = [k for k in keys if isinstance(getattr(k, "public", None), kinds)]
        if len(usable) != 1 or len(keys) != 1:
            raise check.fail(
                2,
                "bundle",
                UsageError(
                    "a Sigstore bundle is verified against an identity policy",
                    hint="pass --cert-identity and --cert-oidc-issuer (or --repository "
                    "owner/name); a managed-key bundle takes exactly one --key "
                    "(ECDSA, RSA or Ed25519)",
                ),
            )
        managed = usable[0].public  # type: ignore[attr-defined]
    root = str(trusted_root) if trusted_root else "the production trust root shipped with sigstore"
    try:
        result = sigstore.verify_bundle(
            data, policy=identity, key=managed, trusted_root=trusted_root, origin=str(path)
        )
    except VerificationError as e:
        raise check.fail(2, "bundle", e) from e
    if result.payload != payload:
        raise check.fail(
            2,
            "bundle",
            VerificationError("the payload sigstore verified is not the one prov read"),
        )
    check.report.signers = [result.signer]
    check.report.times = [f"{t.time.isoformat()} ({t.source})" for t in result.times]
    when = "; ".join(check.report.times) or "none"
    check.passed(
        2,
        "bundle",
        f"signed by {result.signer}; verified offline against {root}; signing time: {when}",
    )
    return [result.signature]


def _check_timestamp(
    check: _Checker,
    path: Path,
    data: bytes,
    kind: str,
    signatures: list[bytes],
    tsa: TsaTrust | None,
) -> None:
    """Step 3: the RFC 3161 token (bundle field or ``.tsr`` sidecar)."""
    from provenance.attest import sigstore, timestamp

    if kind == "sigstore":
        tokens = sigstore.timestamp_tokens(data, str(path))
        where = "in the bundle"
    else:
        sidecar = timestamp.sidecar_path(path)
        tokens = [sidecar.read_bytes()] if sidecar.is_file() else []
        where = f"in {sidecar.name}"
    if tsa is None:
        if tokens and kind == "dsse":
            check.skipped(
                3, "timestamp", f"a token is {where} but not checked: pass --tsa-certs CHAIN.pem"
            )
        elif tokens:
            check.skipped(
                3, "timestamp", "no --tsa-certs: only the trust root's TSAs were checked (above)"
            )
        else:
            check.skipped(3, "timestamp", "no RFC 3161 timestamp")
        return
    if not tokens:
        raise check.fail(
            3,
            "timestamp",
            VerificationError(
                f"--tsa-certs was given but there is no timestamp token {where}",
                hint="was the attestation made with --timestamp URL?",
            ),
        )
    errors: list[VerificationError] = []
    for token in tokens:
        try:
            stamp, index = timestamp.verify(token, signatures, tsa)
        except VerificationError as e:
            errors.append(e)
            continue
        check.report.times.append(f"{stamp.time.isoformat()} (RFC 3161, {stamp.tsa})")
        check.passed(
            3,
            "timestamp",
            f"time-anchored: existed no later than {stamp.describe()}; "
            f"covers signature #{index + 1}",
        )
        return
    first = errors[0]
    if len(errors) > 1:
        first = VerificationError(
            f"none of the {len(errors)} timestamp tokens verifies: {first.message}",
            cause=first.cause,
            hint=first.hint,
        )
    raise check.fail(3, "timestamp", first)


def check_label(snapshot: Snapshot, expected: str) -> str:
    """The replay check: an attestation must carry the label it is presented under."""
    return _check_label(snapshot.label, expected)


def _check_label(label: str, expected: str) -> str:
    if label != expected:
        raise VerificationError(
            f"the attestation is signed for label {label!r}, not {expected!r}",
            cause="an older attestation may have been replayed under a newer name",
            hint=f"if the file was renamed on purpose, pass --expect-label {label}",
        )
    return f"signed label {label!r} is the one expected"


def label_from_filename(path: Path) -> str | None:
    """The label prov's file naming implies: ``LABEL.intoto.jsonl``, ``LABEL.sigstore.json``,
    ``LABEL.evidence.tar`` (a pack is named for the snapshot it holds)."""
    for suffix in (".intoto.jsonl", ".sigstore.json", ".evidence.tar"):
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            return path.name[: -len(suffix)]
    return None


def check_blobs(snapshot: Snapshot, store: Store) -> str:
    with task("re-hashing the snapshot's blobs", unit="B"):
        return _check_blobs(snapshot, store)


def _check_blobs(snapshot: Snapshot, store: Store) -> str:
    count = size = 0
    for capture in snapshot.captures:
        try:  # a manifest's files too, once its root and counts match the capture
            blobs = list(capture_blobs(store, capture))
        except IntegrityError as e:
            raise VerificationError(
                f"the manifest of source {capture.source!r}: {e.message}", hint=e.hint
            ) from e
        except VerificationError as e:
            raise VerificationError(
                f"the manifest of source {capture.source!r}: {e.message}", cause=e.cause
            ) from e
        for name, address, expected in blobs:
            digest = Digest.parse(address)
            try:
                actual_size = store.check(digest)
            except IntegrityError as e:
                raise VerificationError(
                    f"blob {name!r} of source {capture.source!r}: {e.message}", hint=e.hint
                ) from e
            if actual_size != expected:
                raise VerificationError(
                    f"blob {name!r} of source {capture.source!r} has {actual_size} bytes, "
                    f"the snapshot says {expected}"
                )
            count += 1
            size += actual_size
            advance(actual_size)
    return f"{count} blob(s), {size:,} bytes, present with matching blake3"
