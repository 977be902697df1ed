"""Witness statements: an independent party re-captures a snapshot's sources and co-signs.

A witness asks every source of a snapshot again from its own vantage (``capture.recheck``) and
compares what it got with what the snapshot records (``compare.recheck.classify``). For each
capture that matches (the same content digest, or the same content apart from volatile fields)
it signs a statement over the snapshot's own subject naming what it saw, from where and when
(``WITNESS_PREDICATE_TYPE``); a capture that differs is listed to the witness, never signed for.
Verifiers count the distinct keys behind these statements (``verify.observers``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from provenance import __version__
from provenance._internal import canonical
from provenance._internal.files import atomic_write, write_new
from provenance.attest import dsse
from provenance.attest import statement as statements
from provenance.attest.signing import Attester
from provenance.capture.recheck import Recollected
from provenance.compare.recheck import RecheckReport, SourceCheck, link
from provenance.digest import Digest, sha256_bytes
from provenance.errors import ProvError, StoreError, UsageError, VerificationError
from provenance.model import (
    WITNESS_PREDICATE_TYPE,
    Snapshot,
    Tool,
    Vantage,
    WireModel,
    Witness,
    WitnessedCapture,
    utc_now,
)
from provenance.store.objects import Store

__all__ = [
    "RUN_SCHEMA",
    "WitnessEntry",
    "WitnessRef",
    "WitnessRun",
    "build",
    "entries",
    "record",
    "reported_address",
    "vantage",
]

CLIENT_ADDRESS_HEADERS: tuple[str, ...] = (
    "x-client-ip",
    "x-your-ip",
    "x-observed-ip",
    "cf-connecting-ip",
)
"""Response headers in which a server tells a client the address it saw it from."""


def reported_address(items: Sequence[Recollected]) -> tuple[str | None, str | None]:
    """The witness's address as a source reported it: (address, 'source: header'), or None."""
    for item in items:
        pairs = item.fresh.data.get("headers") if item.fresh.kind == "http" else None
        for pair in pairs if isinstance(pairs, list) else []:
            if not (isinstance(pair, list) and len(pair) == 2):
                continue
            name, value = str(pair[0]).lower(), str(pair[1]).split(",")[0].strip()
            if name in CLIENT_ADDRESS_HEADERS:
                try:
                    address = str(ipaddress.ip_address(value))
                except ValueError:
                    continue
                return address, f"{item.fresh.source}: {name}"
    return None, None


def vantage(operator: str, region: str | None, items: Sequence[Recollected]) -> Vantage:
    address, by = reported_address(items)
    return Vantage(
        operator=operator,
        region=region or None,
        reported_ip=address,
        reported_by=by,
        tool=Tool(version=__version__),
    )


def build(
    snapshot: Snapshot,
    items: Sequence[Recollected],
    checks: Sequence[SourceCheck],
    where: Vantage,
) -> bytes:
    """The statement bytes of a witness to ``snapshot``; UsageError when nothing matched."""
    fresh = {item.original.source: item.fresh for item in items}
    witnessed = [
        WitnessedCapture(
            source=check.source,
            kind=check.kind,
            digest=check.attested,
            observed=check.observed,
            match=check.match or "content",
            started=fresh[check.source].started,
            ended=fresh[check.source].ended,
            establishes=fresh[check.source].establishes,
        )
        for check in checks
        if check.outcome == "same"
    ]
    if not witnessed:
        raise UsageError(
            f"no capture of {snapshot.label!r} matched what the sources serve now: "
            "there is nothing to witness",
            hint="`prov recheck` shows what changed",
        )
    predicate = Witness(
        snapshot=link(snapshot), created=utc_now(), vantage=where, witnessed=tuple(witnessed)
    )
    subject = {
        "name": statements.subject_name(snapshot.label),
        "digest": {"sha256": snapshot.sha256().hex},
    }
    return statements.wrap([subject], WITNESS_PREDICATE_TYPE, predicate.model_dump(mode="json"))


RUN_SCHEMA: Final = "https://prov.dev/witness-run/v1"


class WitnessRun(WireModel):
    """``prov witness --format json``: what was asked again, and what was signed."""

    schema_: Literal["https://prov.dev/witness-run/v1"] = Field(default=RUN_SCHEMA, alias="schema")
    vantage: Vantage
    statement: str | None = Field(description="the signed statement's file; null: none matched")
    witnessed: list[str] = Field(description="sources signed for")
    recheck: RecheckReport = Field(description="every source against what the snapshot holds")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class WitnessRef(WireModel):
    """A witness statement as ``prov log`` shows it, under the snapshot it witnessed."""

    id: str
    snapshot: str = Field(description="label of the snapshot witnessed")
    snapshot_sha256: str
    created: str
    operator: str
    region: str | None = None
    witnessed: list[str] = Field(description="sources witnessed")
    signers: list[str] = Field(
        default_factory=list, description="trusted keys that verified it (empty: not checked)"
    )
    problem: str | None = Field(
        default=None, description="why the index entry does not match the statement it names"
    )


class WitnessEntry(BaseModel):
    """One witness statement in the store's index (``witnesses/<id>.json``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="sha256 of the statement bytes")
    witness: Witness
    attestation: str | None = Field(
        default=None, description="blake3 address of the signed statement in the store"
    )
    path: str | None = Field(default=None, description="where the statement file was written")
    signers: list[str] = Field(default_factory=list)

    def check(
        self, store: Store, keys: Sequence[dsse.Verifier] = ()
    ) -> tuple[str | None, list[str]]:
        """Re-read the statement this entry names: (None, the keys that verified it) when it is
        the one indexed, else (why, []). The index is unsigned: without ``keys`` (the auditor's
        trust), nobody is shown as having signed."""
        if self.attestation is None:
            return "the statement is not kept in the store", []
        try:
            document = store.read(Digest.parse(self.attestation))
            envelope = dsse.parse(document.strip(), origin=self.attestation)
            predicate = canonical.loads(envelope.payload)["predicate"]
            same = Witness.model_validate(predicate) == self.witness
        except (ProvError, ValueError, KeyError, TypeError) as e:
            return f"the statement cannot be read: {e}", []
        if sha256_bytes(envelope.payload).hex != self.id or not same:
            return "the index entry does not match the statement it names", []
        if not keys:
            return None, []
        try:
            checks = dsse.verify(envelope, keys, 1)
        except VerificationError as e:
            return f"not signed by a trusted key: {e.message}", []
        return None, sorted({c.verified_by for c in checks if c.verified_by})

    def ref(self, store: Store | None = None, keys: Sequence[dsse.Verifier] = ()) -> WitnessRef:
        """The entry for a timeline; with ``store``, re-read and checked first (and its
        signatures verified with ``keys``, when given)."""
        witness = self.witness
        problem, signers = self.check(store, keys) if store is not None else (None, [])
        return WitnessRef(
            id=self.id,
            snapshot=witness.snapshot.label,
            snapshot_sha256=witness.snapshot.sha256,
            created=witness.created,
            operator=witness.vantage.operator,
            region=witness.vantage.region,
            witnessed=[c.source for c in witness.witnessed],
            signers=signers,
            problem=problem,
        )


def _directory(store: Store) -> Path:
    return store.root / "witnesses"


def record(
    statement: bytes, attester: Attester, output: Path, store: Store | None
) -> tuple[bytes, WitnessEntry]:
    """Sign a witness statement, write it to ``output`` (never over a file) and index it."""
    document = attester.attest(statement)
    write_new(output, document, "witness statement")
    predicate = Witness.model_validate(canonical.loads(statement)["predicate"])
    entry = WitnessEntry(
        id=sha256_bytes(statement).hex,
        witness=predicate,
        path=str(output),
        signers=attester.signer_ids(),
    )
    if store is not None:
        store.init()
        written = store.put_bytes(document)
        entry = entry.model_copy(update={"attestation": str(written.digest)})
        directory = _directory(store)
        try:
            directory.mkdir(exist_ok=True)
            target = directory / f"{entry.id}.json"
            atomic_write(target, entry.model_dump_json(indent=2).encode())
        except OSError as e:
            raise StoreError(f"cannot write the witness index in {directory}", cause=str(e)) from e
    return document, entry


def entries(store: Store) -> list[WitnessEntry]:
    """Every witness statement indexed in the store, oldest first."""
    directory = _directory(store)
    if not directory.is_dir():
        return []
    found = []
    for path in sorted(directory.glob("*.json")):
        try:
            found.append(WitnessEntry.model_validate_json(path.read_bytes()))
        except (OSError, ValueError) as e:
            raise StoreError(f"the witness index entry {path} is unreadable", cause=str(e)) from e
    return sorted(found, key=lambda w: (w.witness.created, w.id))
