"""The content of a provenance site as data: ``site.json`` (schema ``schemas/site.v1.schema.json``).

The HTML pages are drawn from this document alone, so what a person reads and what a program
reads say the same thing. Every verdict in it was computed when the site was built, with the
trust the builder named (never keys found in the evidence). Witness and recheck entries are
optional sections, empty until such statements exist for a milestone.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field, JsonValue

from provenance.model import WireModel

__all__ = [
    "SCHEMA",
    "CaptureItem",
    "ClaimItem",
    "ClaimsSummary",
    "Download",
    "Interval",
    "KeyItem",
    "Milestone",
    "NoteItem",
    "Read",
    "Recheck",
    "Site",
    "SourceChange",
    "Step",
    "Trust",
    "Verification",
    "Witness",
]

SCHEMA: Final = "https://prov.dev/site/v1"

Verdict = Literal["holds", "fails", "gap"]


class Step(WireModel):
    """One numbered step of ``prov verify``, as it ran at build time."""

    number: int
    name: str
    status: Literal["passed", "failed", "skipped"]
    detail: str


class Verification(WireModel):
    verified: bool = Field(description="every step passed or was skipped with a reason")
    summary: str = Field(description="the result in plain words")
    signers: tuple[str, ...] = Field(
        default=(), description="trusted keys or identities that signed"
    )
    times: tuple[str, ...] = Field(default=(), description="verified signing / timestamp times")
    steps: tuple[Step, ...] = ()
    error: str | None = Field(default=None, description="why verification failed")


class Read(WireModel):
    """A captured value a claim's expression read."""

    path: str = Field(description="the lookup as written in the expression")
    source: str | None = Field(description="the capture it reads, for captures[NAME]...")
    value: JsonValue = None
    shown: str = Field(description="the value as the page prints it")
    error: str | None = None


class ClaimItem(WireModel):
    name: str
    verdict: Verdict = Field(description="holds, fails, or gap (the evidence cannot decide)")
    published: str = Field(description="the published value as written")
    published_value: JsonValue = None
    published_in: str | None = Field(default=None, description="where it was published")
    derived: JsonValue = None
    derived_shown: str
    gap: str = Field(description="derived - published, in words")
    relative_gap: float | None = None
    tolerance: str
    expression: str
    error: str | None = None
    reads: tuple[Read, ...] = ()
    superseded_by: tuple[str, ...] = ()


class ClaimsSummary(WireModel):
    file: str
    holds: int
    fails: int
    gaps: int
    results: tuple[ClaimItem, ...]


class CaptureItem(WireModel):
    source: str
    kind: str
    status: Literal["ok", "failed"]
    started: str
    establishes: tuple[str, ...] = ()
    meaning: str = Field(description="what this capture shows and does not, in plain words")
    digest: str
    locator: tuple[tuple[str, str], ...] = Field(
        default=(), description="what was asked for and where: (field, value) pairs"
    )
    error: str | None = None


class NoteItem(WireModel):
    id: str
    milestone: str
    created: str
    text: str
    supersedes: tuple[str, ...] = ()
    verified: bool = Field(description="signed by a trusted key, and the index matches the text")
    detail: str
    download: str | None = None


class Witness(WireModel):
    """An independent observer's statement about a milestone (rendered when present)."""

    milestone: str
    signer: str
    vantage: str
    time: str
    verified: bool
    detail: str
    download: str | None = None


class Recheck(WireModel):
    """A later re-capture of a milestone's sources (rendered when present; drift in red)."""

    milestone: str
    time: str
    drift: bool
    changed: tuple[str, ...] = ()
    detail: str
    verified: bool
    download: str | None = None


class Milestone(WireModel):
    id: str = Field(description="file-safe name; the page is m/<id>.html")
    label: str
    snapshot_sha256: str | None = None
    created: str | None = None
    kind: Literal["dsse", "sigstore"] | None = None
    origin: str = Field(description="where the builder read it from")
    page: str
    attestation: str = Field(description="site path of the attestation file offered for download")
    pack: str | None = None
    verification: Verification
    captures: tuple[CaptureItem, ...] = ()
    claims: ClaimsSummary | None = None
    notes: tuple[NoteItem, ...] = ()
    commands: tuple[str, ...] = Field(default=(), description="prov verify commands, exactly")


class SourceChange(WireModel):
    source: str
    kind: str
    status: Literal["added", "removed", "changed", "unchanged"]
    changes: int = Field(description="real changes (volatile ones apart)")
    volatile: int
    headline: str


class Interval(WireModel):
    """What changed between two consecutive verified milestones."""

    a: str
    b: str
    equal: bool
    summary: str
    sources_changed: int
    changes: int
    volatile: int
    sources: tuple[SourceChange, ...]
    page: str
    json_: str = Field(alias="json", description="site path of the full diff as JSON")


class Download(WireModel):
    path: str = Field(description="relative to the site root")
    role: Literal[
        "attestation",
        "timestamp",
        "pack",
        "key",
        "tsa-chain",
        "trusted-root",
        "note",
        "diff",
        "witness",
        "recheck",
    ]
    milestone: str | None = None
    sha256: str
    size: int


class KeyItem(WireModel):
    file: str = Field(description="site path of the public key")
    keyid: str


class Trust(WireModel):
    """What the builder trusted: the only trust the verdicts rest on."""

    keys: tuple[KeyItem, ...] = ()
    threshold: int = 1
    identity: str | None = Field(default=None, description="Sigstore identity policy, in words")
    trusted_root: str | None = Field(default=None, description="site path of the Sigstore root")
    tsa: str | None = Field(default=None, description="site path of the TSA chain")
    words: str


class Site(WireModel):
    schema_: Literal["https://prov.dev/site/v1"] = Field(default=SCHEMA, alias="schema")
    title: str
    built: str = Field(description="when the site was built (UTC)")
    tool: str
    trust: Trust
    milestones: tuple[Milestone, ...]
    intervals: tuple[Interval, ...] = ()
    downloads: tuple[Download, ...] = ()
    witnesses: tuple[Witness, ...] = ()
    rechecks: tuple[Recheck, ...] = ()

    def to_json(self) -> str:
        return self.model_dump_json(indent=2, by_alias=True) + "\n"
