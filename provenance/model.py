"""The wire format of a snapshot: frozen pydantic models, serialised once as canonical JSON.

A snapshot is the predicate of an in-toto statement. Its JSON Schema is generated from these
models into ``schemas/`` (``python -m provenance.render.schemas``); a test fails when the two drift.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from provenance import __version__
from provenance._internal import canonical
from provenance.digest import Digest, blake3_bytes, sha256_bytes

PREDICATE_TYPE = "https://prov.dev/snapshot/v1"
"""The one predicateType URI of a snapshot attestation; also the ``$id`` of its JSON Schema."""

DIGEST_PATTERN = r"^blake3:[0-9a-f]{64}$"
TIME_PATTERN = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$"

BlobDigest = Annotated[str, Field(pattern=DIGEST_PATTERN)]
Timestamp = Annotated[str, Field(pattern=TIME_PATTERN)]
Establishes = Literal["observed", "provider-asserted", "tls-bound", "time-anchored"]


def utc_now() -> str:
    """The current time as RFC 3339 UTC with microseconds, the one spelling used everywhere."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class WireModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class BlobRef(WireModel):
    """A byte string a capture kept in the store, by its blake3 address."""

    name: str = Field(description="Path or role of the bytes within the capture")
    digest: BlobDigest
    size: int = Field(ge=0)
    media_type: str | None = None


class CaptureError(WireModel):
    """What went wrong on the remote side, kept as evidence."""

    type: str = Field(description="timeout, connect, reset, http-status, not-found, ...")
    message: str
    detail: dict[str, JsonValue] = Field(default_factory=dict)


class Capture(WireModel):
    """What one collector observed for one source at one moment."""

    source: str
    kind: str
    tool_version: str
    started: Timestamp
    ended: Timestamp
    request: dict[str, JsonValue] = Field(description="What was asked for (credentials redacted)")
    status: Literal["ok", "failed"]
    establishes: tuple[Establishes, ...] = ()
    data: dict[str, JsonValue] = Field(default_factory=dict)
    blobs: tuple[BlobRef, ...] = ()
    error: CaptureError | None = None
    attempts: tuple[dict[str, JsonValue], ...] = ()
    digest: BlobDigest = Field(
        description="blake3 of the canonical content (kind, request, data, blobs, error), "
        "without times: the same observation gives the same digest"
    )

    @staticmethod
    def content_digest(
        kind: str,
        request: dict[str, Any],
        data: dict[str, Any],
        blobs: list[dict[str, Any]],
        error: dict[str, Any] | None,
    ) -> str:
        content = {"kind": kind, "request": request, "data": data, "blobs": blobs, "error": error}
        return str(blake3_bytes(canonical.dumps(content)))


class Tool(WireModel):
    name: Literal["prov"] = "prov"
    version: str = __version__


class CrossCheck(WireModel):
    """A comparison between captures of the same snapshot, made after collection.

    Collectors never see each other; ``provenance.capture.crosscheck`` reads the finished
    captures and says whether they agree (e.g. an image's revision label and a git capture's
    commit).
    """

    check: str = Field(description="what was compared, e.g. 'oci-revision-git-commit'")
    source: str = Field(description="the capture whose claim was checked")
    against: str | None = Field(description="the capture it was checked against")
    result: Literal["match", "mismatch", "undetermined"]
    matches: bool | None = Field(description="true / false, or null when undetermined")
    values: dict[str, JsonValue] = Field(default_factory=dict)
    detail: str


NOTE_PREDICATE_TYPE = "https://prov.dev/note/v1"
"""The predicateType of a change note (``provenance.compare.notes``)."""
NOTE_MAX_TEXT = 20_000
DIFF_PREDICATE_TYPE = "https://prov.dev/diff/v1"
"""The predicateType of a signed diff (``provenance.compare.diff``, its ``SCHEMA``)."""


class NoteSubject(WireModel):
    label: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    created: Timestamp


class Note(WireModel):
    """The predicate of a note statement."""

    snapshot: NoteSubject
    created: Timestamp
    text: str = Field(min_length=1, max_length=NOTE_MAX_TEXT)
    supersedes: tuple[str, ...] = Field(
        default=(), description="names of claims (or ids of notes) that no longer hold"
    )


WITNESS_PREDICATE_TYPE = "https://prov.dev/witness/v1"
"""The predicateType of a witness statement; also the ``$id`` of its JSON Schema."""

Outcome = Literal["same", "changed", "gone", "failed-now"]
"""A source observed again: see ``provenance.compare.recheck``."""

Level = Literal["observed", "provider-asserted", "tls-bound", "time-anchored", "multi-vantage"]
"""The evidence levels a verifier reports per capture, weakest first."""


class SnapshotLink(WireModel):
    """The snapshot a statement is about: its label, the sha256 of its canonical bytes, its time."""

    label: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    created: Timestamp


class Recheck(WireModel):
    """What a recheck snapshot rechecked, and each source's outcome."""

    of: SnapshotLink
    outcomes: dict[str, Outcome] = Field(description="source name -> outcome")


class Vantage(WireModel):
    """Where a witness stood, in its own words; signed, so that it can be held to them."""

    operator: str = Field(
        min_length=1, max_length=200, description="who ran the witness: a host name or a label"
    )
    region: str | None = Field(
        default=None, max_length=200, description="where it ran: a cloud region or a label"
    )
    reported_ip: str | None = Field(
        default=None, description="the witness's address as a source reported it, when one did"
    )
    reported_by: str | None = Field(
        default=None, description="the source (and header) that reported the address"
    )
    tool: Tool = Field(default_factory=Tool)


class WitnessedCapture(WireModel):
    """One capture of the snapshot that the witness observed again and found the same."""

    source: str
    kind: str
    digest: BlobDigest = Field(description="the snapshot's capture digest: what is witnessed")
    observed: BlobDigest = Field(description="the content digest of the witness's own capture")
    match: Literal["digest", "content"] = Field(
        description="digest: the same content digest; content: the same content apart from "
        "volatile fields"
    )
    started: Timestamp
    ended: Timestamp
    establishes: tuple[Establishes, ...] = Field(
        default=(), description="what the witness's own capture established"
    )


class Witness(WireModel):
    """The predicate of a witness statement: an independent party saw what a snapshot records.

    Only captures whose content matched are listed; one that differed is not signed for.
    """

    snapshot: SnapshotLink
    created: Timestamp
    vantage: Vantage
    witnessed: tuple[WitnessedCapture, ...] = Field(min_length=1)


class Snapshot(WireModel):
    """The captures of one milestone, taken together."""

    label: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
    created: Timestamp
    tool: Tool = Field(default_factory=Tool)
    captures: tuple[Capture, ...]
    # Left out of the serialised snapshot when empty, so that snapshots without cross-checks
    # (every snapshot made before they existed) keep their canonical bytes and sha256.
    cross_checks: dict[str, CrossCheck] = Field(
        default_factory=dict,
        exclude_if=lambda value: not value,
        description="comparisons between captures, keyed by '<source>/<check>'",
    )
    # Set only on a signed recheck (``prov recheck --key``) and left out otherwise, so that every
    # other snapshot keeps its canonical bytes and sha256.
    recheck: Recheck | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="what this snapshot rechecked: the snapshot, and each source's outcome",
    )

    def canonical_bytes(self) -> bytes:
        return self._canonical

    @cached_property
    def _canonical(self) -> bytes:
        # Computed once: a snapshot of a large repository is tens of MB of JSON, and the
        # statement, its subject digest and the store index all need these same bytes.
        return canonical.dumps(self.model_dump(mode="json"))

    def sha256(self) -> Digest:
        return self._sha256

    @cached_property
    def _sha256(self) -> Digest:
        return sha256_bytes(self._canonical)

    def capture(self, source: str) -> Capture:
        for capture in self.captures:
            if capture.source == source:
                return capture
        raise KeyError(source)


DRAFT = "https://json-schema.org/draft/2020-12/schema"


def snapshot_schema() -> dict[str, Any]:
    schema = Snapshot.model_json_schema(mode="serialization")
    return {"$schema": DRAFT, "$id": PREDICATE_TYPE, **schema}


def witness_schema() -> dict[str, Any]:
    schema = Witness.model_json_schema(mode="serialization")
    return {"$schema": DRAFT, "$id": WITNESS_PREDICATE_TYPE, **schema}
