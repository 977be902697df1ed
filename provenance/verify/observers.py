"""Counting observers: how many independent signers saw each capture, and what that proves.

The keys that signed a snapshot observed every capture in it. A witness statement
(``WITNESS_PREDICATE_TYPE``) lists the captures its witness observed again and found the same;
the keys that signed it observed those. Quorum counts distinct trusted keys, never signatures or
statements: one key behind the snapshot and three witness statements is one observer, and a
witness key that also signed the snapshot is not an independent witness.

Per capture the report gives the evidence levels reached, weakest first (design.md, "What a
capture can and cannot prove"): ``observed``, ``provider-asserted``, ``tls-bound`` (checked
against the recorded chain, ``verify.tls``), ``time-anchored`` (a verified RFC 3161 token or
Sigstore log time) and ``multi-vantage`` (at least one independent witness; ``required`` of them
when asked), with plain words on what was not proven.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from provenance.attest import dsse
from provenance.attest import statement as statements
from provenance.attest.envelope import read_envelope
from provenance.errors import VerificationError
from provenance.model import (
    WITNESS_PREDICATE_TYPE,
    Capture,
    Level,
    Snapshot,
    Vantage,
    WireModel,
    Witness,
)
from provenance.verify import tls
from provenance.verify.predicates import check_statement
from provenance.verify.steps import Report, Step
from provenance.verify.witness_policy import WitnessPolicy
from provenance.verify.witness_policy import load as load_policy

__all__ = [
    "CaptureEvidence",
    "ObserverReport",
    "VerifiedWitness",
    "WitnessCheck",
    "beside",
    "check_witness",
    "count",
    "observe",
    "witness_step",
]

NOT_PROVEN: dict[str, str] = {
    "wandb": "a W&B config and summary are the provider's word: the API's answer carries no "
    "server signature",
    "huggingface": "the Hub's answer is its word: file ids and LFS sha256 are the Hub's, and only "
    "files prov downloaded were hashed by prov",
    "http": "the body is the observer's word: TLS at most binds the host name, not the bytes "
    "(no non-repudiation)",
    "git": "that the repository served this commit then is the observer's word; the commit and "
    "its files are content-addressed and re-derivable by anyone holding them",
    "listing": "object keys, sizes and ETags are the provider's word unless content was hashed",
    "oci": "the registry's tags are its word; manifests and layers are content-addressed",
}
"""What a capture of each kind does not prove, however many observers saw it."""


class WitnessCheck(WireModel):
    """One witness statement as the verifier found it."""

    path: str
    verified: bool
    signers: tuple[str, ...] = Field(default=(), description="keyids of trusted keys that signed")
    vantage: Vantage | None = None
    sources: tuple[str, ...] = Field(default=(), description="captures it witnessed (counted)")
    problem: str | None = None


class Observer(WireModel):
    keyid: str
    role: Literal["publisher", "witness"]
    operator: str | None = None
    region: str | None = None
    reported_ip: str | None = None
    match: Literal["digest", "content"] | None = None


class CaptureEvidence(WireModel):
    """What one capture reached: who observed it and which evidence levels hold."""

    source: str
    kind: str
    digest: str
    observers: tuple[Observer, ...]
    signers: int = Field(description="distinct keys that observed it (publisher and witnesses)")
    witnesses: int = Field(description="distinct witness keys, the publisher's not counted")
    levels: tuple[Level, ...]
    level: Level | None = Field(description="the strongest level reached")
    not_proven: tuple[str, ...] = ()
    quorum: str | None = Field(default=None, description="e.g. '3 of 4 witnesses, 2 regions'")
    met: bool = Field(description="the witness requirement or policy holds for this capture")


class ObserverReport(WireModel):
    required: int | None = None
    policy: str | None = None
    witnesses: tuple[WitnessCheck, ...] = ()
    captures: tuple[CaptureEvidence, ...] = ()
    met: bool = True
    summary: str = ""


@dataclass(frozen=True)
class VerifiedWitness:
    path: str
    signers: tuple[str, ...]
    witness: Witness


def check_witness(
    path: Path, keys: Sequence[dsse.Verifier], snapshot: Snapshot | None = None
) -> VerifiedWitness:
    """Verify one witness statement: envelope, trusted signatures, statement, subject.

    With ``snapshot``, the statement must be about it (same sha256), and every capture it
    witnesses must be one of the snapshot's by digest. Raises VerificationError.
    """
    envelope = read_envelope(path)
    if envelope.payload_type != statements.PAYLOAD_TYPE:
        raise VerificationError(
            f"{path}: payloadType is {envelope.payload_type!r}, not {statements.PAYLOAD_TYPE!r}"
        )
    checks = dsse.verify(envelope, keys, 1)
    by_source = {key.source: key.keyid for key in keys}
    signers = tuple(sorted({by_source[c.verified_by] for c in checks if c.verified_by}))
    parsed = statements.parse(envelope.payload)
    if parsed.predicate_type != WITNESS_PREDICATE_TYPE:
        raise VerificationError(
            f"{path}: predicateType is {parsed.predicate_type!r}, not a witness statement",
            hint=f"a witness statement has predicateType {WITNESS_PREDICATE_TYPE}",
        )
    try:  # the registry's checks, as `prov verify` runs them on the statement alone
        predicate, checked = check_statement(parsed)
        predicate.subject(parsed, checked)
    except VerificationError as e:
        raise VerificationError(f"{path}: {e.message}", cause=e.cause) from e
    witness = Witness.model_validate(parsed.predicate)
    if snapshot is not None:
        if witness.snapshot.sha256 != snapshot.sha256().hex:
            raise VerificationError(
                f"{path} witnesses snapshot {witness.snapshot.label!r} "
                f"(sha256 {witness.snapshot.sha256[:12]}...), not this one "
                f"({snapshot.label!r}, sha256 {snapshot.sha256().hex[:12]}...)"
            )
        digests = {c.source: c.digest for c in snapshot.captures}
        for item in witness.witnessed:
            if digests.get(item.source) != item.digest:
                raise VerificationError(
                    f"{path}: it witnesses a capture of {item.source!r} that is not the "
                    "snapshot's (another digest)"
                )
    return VerifiedWitness(str(path), signers, witness)


def _levels(capture: Capture, witnesses: int, time_anchored: bool) -> tuple[list[Level], list[str]]:
    levels: list[Level] = []
    missing: list[str] = []
    if "observed" in capture.establishes:
        levels.append("observed")
    if "provider-asserted" in capture.establishes:
        levels.append("provider-asserted")
    if "tls-bound" in capture.establishes:
        try:
            tls.check(capture)
            levels.append("tls-bound")
        except VerificationError as e:
            missing.append(f"tls-bound is claimed but not proven: {e.message}")
    elif capture.status == "ok":
        missing.append("not tls-bound: no verified TLS exchange was recorded")
    if time_anchored:
        levels.append("time-anchored")
    else:
        missing.append(
            "not time-anchored: no verified timestamp; the capture time is the signer's word"
        )
    if witnesses >= 1:
        levels.append("multi-vantage")
    else:
        missing.append("seen from one vantage only: no independent witness saw the same")
    if capture.kind in NOT_PROVEN:
        missing.append(NOT_PROVEN[capture.kind])
    return levels, missing


def count(
    snapshot: Snapshot,
    publisher: Sequence[str],
    witnesses: Sequence[VerifiedWitness],
    problems: Sequence[WitnessCheck] = (),
    *,
    time_anchored: bool = False,
    required: int | None = None,
    policy: WitnessPolicy | None = None,
) -> ObserverReport:
    """Per capture: distinct observing keys, evidence levels, and whether the quorum holds."""
    publishers = set(publisher)
    seen: dict[str, dict[str, Observer]] = {c.source: {} for c in snapshot.captures}
    for source in seen:
        for keyid in sorted(publishers):
            seen[source][keyid] = Observer(keyid=keyid, role="publisher")
    checks = list(problems)
    for verified in witnesses:
        vantage = verified.witness.vantage
        counted = []
        for item in verified.witness.witnessed:
            if item.source not in seen:
                continue
            counted.append(item.source)
            for keyid in verified.signers:
                if keyid in seen[item.source]:
                    continue  # a key counts once, whatever else it signed
                operator: str | None = vantage.operator
                region = vantage.region
                if policy is not None:
                    operator, region = policy.labels(keyid, operator, region)
                seen[item.source][keyid] = Observer(
                    keyid=keyid,
                    role="witness",
                    operator=operator,
                    region=region,
                    reported_ip=vantage.reported_ip,
                    match=item.match,
                )
        checks.append(
            WitnessCheck(
                path=verified.path,
                verified=True,
                signers=verified.signers,
                vantage=vantage,
                sources=tuple(counted),
            )
        )
    captures = []
    for capture in snapshot.captures:
        observers = tuple(seen[capture.source].values())
        witness_keys = [o for o in observers if o.role == "witness"]
        levels, missing = _levels(capture, len(witness_keys), time_anchored)
        met = True
        lines = []
        if required is not None:  # both hold when both are asked for
            met = len(witness_keys) >= required
            regions = {o.region for o in witness_keys if o.region}
            lines.append(
                f"{len(witness_keys)} of {required} required witnesses"
                + (f", {len(regions)} region(s)" if regions else "")
            )
        if policy is not None:
            held, line = policy.evaluate(witness_keys)
            met = met and held
            lines.append(line)
        quorum = "; ".join(lines) or None
        captures.append(
            CaptureEvidence(
                source=capture.source,
                kind=capture.kind,
                digest=capture.digest,
                observers=observers,
                signers=len(observers),
                witnesses=len(witness_keys),
                levels=tuple(levels),
                level=levels[-1] if levels else None,
                not_proven=tuple(missing),
                quorum=quorum,
                met=met,
            )
        )
    met_count = sum(1 for c in captures if c.met)
    if policy is not None:
        summary = (
            f"witness policy {policy.describe()}: met for {met_count} of {len(captures)} captures"
        )
    elif required is not None:
        summary = (
            f"{required} witness(es) required: met for {met_count} of {len(captures)} captures"
        )
    elif witnesses:
        most = max((c.witnesses for c in captures), default=0)
        summary = (
            f"{len(witnesses)} witness statement(s) counted; up to {most} witness(es) per capture"
        )
    else:
        summary = "no witness statement counted: each capture rests on its publisher's signature"
    return ObserverReport(
        required=required,
        policy=policy.describe() if policy else None,
        witnesses=tuple(checks),
        captures=tuple(captures),
        met=met_count == len(captures),
        summary=summary,
    )


def beside(attestation: Path, label: str) -> list[Path]:
    """The witness statements prov's naming puts beside an attestation."""
    return sorted(attestation.parent.glob(f"{glob.escape(label)}.witness.*.intoto.jsonl"))


def observe(
    report: Report,
    trusted: Sequence[dsse.Verifier],
    paths: Sequence[Path],
    *,
    required: int | None = None,
    policy: WitnessPolicy | None = None,
) -> ObserverReport:
    """Step 7 of ``prov verify``: the witness statements counted against a verified snapshot.

    Appends the step to ``report`` and sets ``report.observers``; raises VerificationError
    (carrying the report) when the requirement or the policy's quorum does not hold.
    """
    snapshot = report.snapshot
    assert snapshot is not None, "count observers of a verified snapshot"
    keys = list(trusted) + (policy.verifiers if policy else [])
    by_source = {key.source: key.keyid for key in trusted}
    publisher = [by_source.get(s, s) for s in report.signers]
    verified: list[VerifiedWitness] = []
    problems: list[WitnessCheck] = []
    for path in paths:
        try:
            verified.append(check_witness(path, keys, snapshot))
        except VerificationError as e:
            problems.append(WitnessCheck(path=str(path), verified=False, problem=e.message))
    anchored = any(s.name == "timestamp" and s.status == "passed" for s in report.steps) or (
        report.kind == "sigstore" and bool(report.times)
    )
    result = count(
        snapshot,
        publisher,
        verified,
        problems,
        time_anchored=anchored,
        required=required,
        policy=policy,
    )
    report.observers = result
    if not paths and required is None and policy is None:
        hint = "pass --witness FILE, or put LABEL.witness.*.intoto.jsonl beside the attestation"
        report.steps.append(Step(7, "witnesses", "skipped", f"none found ({hint})"))
        return result
    detail = f"{len(verified)} of {len(paths)} witness statement(s) verified; {result.summary}"
    if result.met:
        report.steps.append(Step(7, "witnesses", "passed", detail))
        return result
    report.steps.append(Step(7, "witnesses", "failed", detail))
    below = [c.source for c in result.captures if not c.met]
    raise VerificationError(
        f"step 7 (witnesses) failed: {len(below)} capture(s) below the witness requirement: "
        + ", ".join(below),
        hint="pass every witness's public key with --key (or a --witness-policy), and their "
        "statements with --witness",
        report=report,
    )


def witness_step(
    paths: Sequence[Path], required: int | None, policy_path: Path | None
) -> Callable[[Report, Sequence[dsse.Verifier], Path], None]:
    """``prov verify``'s step 7 as ``verify.audit``'s ``then``: observers are counted when
    witness statements exist (given, else found beside the attestation) or one was required."""

    def then(report: Report, trusted: Sequence[dsse.Verifier], attestation: Path) -> None:
        if report.snapshot is None:
            return
        found = list(paths) or beside(attestation, report.snapshot.label)
        policy = load_policy(policy_path) if policy_path else None
        observe(report, trusted, found, required=required, policy=policy)

    return then
