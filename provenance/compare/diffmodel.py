"""The wire format of a diff (``prov diff --format json``, the predicate of a signed diff).

A ``Diff`` holds one ``CaptureDiff`` per source; each holds the ``DocumentDiff`` of every document
that changed (its readable ``changes`` and its RFC 6902 ``patch``) and the files added, removed
or changed. ``schemas/diff.v1.schema.json`` is generated from these models.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field, JsonValue

from provenance.model import WireModel

SCHEMA: Final = "https://prov.dev/diff/v1"
"""The ``schema`` tag of ``prov diff --format json`` and the predicateType of a signed diff."""


ChangeKind = Literal["added", "removed", "changed", "set", "reordered", "weights"]


class Mover(WireModel):
    """One entry of a weight map that moved, in shares (0..1) and percentage points."""

    key: str
    old: float | None = Field(description="share in A (None: absent)")
    new: float | None = Field(description="share in B (None: absent)")
    pp: float = Field(description="percentage points, (new - old) x 100")


class Change(WireModel):
    """One change within a document, at a path."""

    path: str = Field(description="readable path: config.trainer.num_train_steps, x[key=value]")
    pointer: str = Field(description="RFC 6901 pointer, into A (removed, changed) or B (added)")
    change: ChangeKind
    old: JsonValue = None
    new: JsonValue = None
    delta: int | float | None = Field(default=None, description="new - old, for numbers")
    relative: float | None = Field(default=None, description="(new - old) / old, for numbers")
    added: list[JsonValue] | None = Field(default=None, description="set members added")
    removed: list[JsonValue] | None = Field(default=None, description="set members removed")
    movers: list[Mover] | None = Field(default=None, description="weights, biggest moves first")
    baseline: str | None = Field(
        default=None, description="for an added record: the record its weights are compared with"
    )
    volatile: bool = False


class DocumentDiff(WireModel):
    """The changes in one document of a capture, and the patch from A's version to B's."""

    name: str = Field(description="capture, request, data, file:<path> or body")
    format: Literal["json", "yaml", "toml", "text", "python"] = Field(
        default="json", description="python: the module-level constants of a .py file"
    )
    changes: tuple[Change, ...] = ()
    patch: tuple[dict[str, JsonValue], ...] = Field(
        default=(), description="RFC 6902 operations turning A's document into B's"
    )
    text_diff: str | None = Field(default=None, description="unified diff, for text files")


class FileChange(WireModel):
    """A file added, removed or changed in a git commit or HF repo."""

    path: str
    change: Literal["added", "removed", "changed"]
    old_size: int | None = None
    new_size: int | None = None
    old_oid: str | None = None
    new_oid: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    content: Literal["compared", "digest-only", "not-compared"] = Field(
        default="not-compared",
        description="compared: both blobs were read; digest-only: a blob is not at hand",
    )


class CaptureDiff(WireModel):
    source: str
    kind: str = Field(description="the kind, or 'A -> B' when it changed")
    status: Literal["added", "removed", "changed", "unchanged"]
    digest_a: str | None = None
    digest_b: str | None = None
    documents: tuple[DocumentDiff, ...] = ()
    files: tuple[FileChange, ...] = ()
    notices: tuple[str, ...] = ()

    @property
    def real_changes(self) -> int:
        return sum(1 for d in self.documents for c in d.changes if not c.volatile) + len(self.files)

    @property
    def volatile_changes(self) -> int:
        return sum(1 for d in self.documents for c in d.changes if c.volatile)

    @property
    def differs(self) -> bool:
        return self.status in ("added", "removed") or self.real_changes > 0


class SnapshotRef(WireModel):
    label: str
    sha256: str
    created: str
    origin: str


class NoteRef(WireModel):
    """A signed change note that the diff spans (see provenance.compare.notes)."""

    id: str
    snapshot: str = Field(description="label of the snapshot the note is tied to")
    snapshot_sha256: str
    created: str
    text: str
    supersedes: list[str] = Field(default_factory=list)
    signers: list[str] = Field(default_factory=list)


class Counts(WireModel):
    sources_changed: int
    changes: int = Field(description="real changes (files count one each)")
    volatile: int


class ClaimChange(WireModel):
    """A published claim whose verdict or derived value differs between A and B."""

    name: str
    status_a: Literal["pass", "fail", "error"]
    status_b: Literal["pass", "fail", "error"]
    derived_a: JsonValue = None
    derived_b: JsonValue = None


class Diff(WireModel):
    schema_: Literal["https://prov.dev/diff/v1"] = Field(default=SCHEMA, alias="schema")
    a: SnapshotRef
    b: SnapshotRef
    equal: bool = Field(description="no real change (volatile changes do not count)")
    counts: Counts
    captures: tuple[CaptureDiff, ...]
    notes: tuple[NoteRef, ...] = ()
    claims_file: str | None = Field(default=None, description="checked at A and B (--claims)")
    claims: tuple[ClaimChange, ...] = Field(
        default=(), description="the claims whose verdict or derived value changed"
    )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)
