"""Comparing two snapshots: what changed between two milestones (docs/diff-and-claims.md).

Captures are matched by source name and compared by kind. Every capture is seen as a few JSON
documents (``capture``: status, error, establishes; ``request``; ``data``; and, when the blobs are
at hand, the structured files it holds: JSON / YAML / TOML files in a git commit or an HF repo,
a JSON response body). One generic differ walks two documents and yields both

* the *changes* a reader wants: paths, numbers with their delta and relative change, lists of
  records matched by identity (``phases[start_step=108000]``), scalar lists as sets, maps of weights
  as percentage-point movers, each flagged volatile or not; and
* an RFC 6902 *patch* that turns A's document into B's, complete (volatile changes included), so a
  JSON-patch library can replay it.

A comparer per kind (``COMPARERS``, one small function each) decides how a capture is presented:
git and huggingface list files added / removed / changed with sizes and diff their contents; http
shows status, the headers that matter, the body digest and a parsed error code. Unknown kinds get
the generic comparison.

Volatile fields (timestamps, heartbeats, step counters, request ids, Date headers) are reported
apart and do not make two snapshots differ. The defaults are in ``VOLATILE``; a source's
``volatile = [...]`` in prov.toml extends them, recorded by the collector in the capture's
``request["volatile"]`` (diff reads snapshots, never configs). A pattern is a dotted path with
shell wildcards per segment: one segment (``_runtime``) matches that key at any depth, several
(``run.heartbeat_at``, ``headers.x-amz-*``) match from the top of a document; a match covers
everything below it.
"""

from __future__ import annotations

import fnmatch
import json
import math
import mmap
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Final, Literal

from pydantic import Field, JsonValue

from provenance._internal import canonical, documents
from provenance.compare import pyconstants
from provenance.compare.evidence import BlobSource, Evidence, NoBlobs
from provenance.compare.gitmanifest import expand
from provenance.model import Capture, Snapshot, WireModel

SCHEMA: Final = "https://prov.dev/diff/v1"
"""The ``schema`` tag of ``prov diff --format json`` and the predicateType of a signed diff."""

COMMON_VOLATILE: tuple[str, ...] = (
    "_runtime",
    "_timestamp",
    "_step",
    "heartbeat_at",
    "heartbeatAt",
    "last_step",
    "lastStep",
    "history_line_count",
    "historyLineCount",
    "request_id",
    "requestId",
    "host_id",
    "elapsed_ms",
)

VOLATILE: dict[str, tuple[str, ...]] = {
    "wandb": ("config_internal", "system_metrics"),
    "http": (
        "server_ip",
        # A hop's own fields (status, url, location) are compared; its headers carry a Date.
        "redirects.*.headers",
        "headers.date",
        "headers.age",
        "headers.expires",
        "headers.x-amz-request-id",
        "headers.x-amz-id-2",
        "headers.x-amzn-*",
        "headers.x-request-id",
        "headers.x-trans-id",
        "headers.cf-ray",
        "headers.x-served-by",
        "headers.x-cache*",
        "headers.x-timer",
        "headers.server-timing",
        "headers.x-guploader-uploadid",
        "headers.report-to",
        "headers.nel",
    ),
    "huggingface": (),
    "git": (),
    # How much of a content listing was re-hashed or reused says nothing about the store.
    "listing": (
        "content.hashed",
        "content.hashed_bytes",
        "content.reused",
        "content.reused_bytes",
        "content.baseline",
    ),
}
"""Volatile paths by capture kind, on top of ``COMMON_VOLATILE``."""

IMPORTANT_HEADERS: tuple[str, ...] = (
    "etag",
    "last-modified",
    "content-length",
    "content-type",
    "content-encoding",
    "location",
    "x-linked-etag",
    "x-repo-commit",
    "x-amz-version-id",
    "x-goog-generation",
    "x-goog-hash",
)
"""HTTP headers whose change is a real change; every other header change is listed as volatile."""

_IDENTITY_KEYS = ("id", "name", "key", "path", "rfilename", "source", "url", "start_step", "step")

ChangeKind = Literal["added", "removed", "changed", "set", "reordered", "weights"]


# -- the wire format of a diff ------------------------------------------------------------------


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


class Diff(WireModel):
    schema_: Literal["https://prov.dev/diff/v1"] = Field(default=SCHEMA, alias="schema")
    a: SnapshotRef
    b: SnapshotRef
    equal: bool = Field(description="no real change (volatile changes do not count)")
    counts: Counts
    captures: tuple[CaptureDiff, ...]
    notes: tuple[NoteRef, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


# -- volatile paths ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Volatile:
    """Matches document paths against volatile patterns (see the module docstring)."""

    patterns: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, patterns: Iterable[str]) -> Volatile:
        return cls(tuple(tuple(p.split(".")) for p in dict.fromkeys(patterns) if p))

    def plus(self, patterns: Iterable[str]) -> Volatile:
        return Volatile(self.patterns + Volatile.of(patterns).patterns)

    def matches(self, names: Sequence[str]) -> bool:
        for pattern in self.patterns:
            if len(pattern) == 1:
                if any(fnmatch.fnmatchcase(name, pattern[0]) for name in names):
                    return True
            elif len(names) >= len(pattern) and all(
                fnmatch.fnmatchcase(name, part) for name, part in zip(names, pattern, strict=False)
            ):
                return True
        return False


def volatile_for(a: Capture | None, b: Capture | None) -> Volatile:
    """The defaults for the kind plus what each capture's source declared."""
    present = a or b
    kind = present.kind if present else ""
    patterns = [*COMMON_VOLATILE, *VOLATILE.get(kind, ())]
    for capture in (a, b):
        declared = capture.request.get("volatile") if capture else None
        if isinstance(declared, list):
            patterns.extend(p for p in declared if isinstance(p, str))
    return Volatile.of(patterns)


# -- the generic structured-document differ ------------------------------------------------------


@dataclass(frozen=True)
class _Seg:
    name: str  # what volatile patterns see: a key, an index, a record's identity value
    shown: str  # how it prints


def _key_seg(key: str) -> _Seg:
    plain = key and all(c.isalnum() or c in "_-/@:" for c in key)
    return _Seg(key, key if plain else f"[{json.dumps(key)}]")


def _show(segs: Sequence[_Seg]) -> str:
    out = []
    for index, seg in enumerate(segs):
        if seg.shown.startswith("["):
            out.append(seg.shown)
        else:
            out.append(("." if index else "") + seg.shown)
    return "".join(out) or "(document)"


def _ptr(base: str, token: str | int) -> str:
    return f"{base}/{str(token).replace('~', '~0').replace('/', '~1')}"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_same(value, b[key]) for key, value in a.items())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if _number(a) and _number(b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _delta(a: int | float, b: int | float) -> tuple[int | float | None, float | None]:
    """new - old and (new - old) / old, or None where a double cannot hold them: a diff is
    signed as canonical JSON, which has no infinity (and an integer may be a thousand digits)."""
    try:
        delta = b - a
        relative = delta / a if a else None
    except OverflowError:
        return None, None
    if isinstance(delta, float) and not math.isfinite(delta):
        return None, None
    if relative is not None and not math.isfinite(relative):
        relative = None
    return delta, relative


def is_weights(value: Any, name: str = "") -> bool:
    """A map of shares: two or more numbers in [0, 1] summing to 1 (or named like weights)."""
    if not isinstance(value, dict) or len(value) < 2:
        return False
    values = list(value.values())
    if not all(_number(v) and 0 <= v <= 1 for v in values):
        return False
    if "weight" in name.lower():
        return True
    return any(isinstance(v, float) for v in values) and abs(sum(values) - 1) <= 1e-3


def movers(old: dict[str, Any], new: dict[str, Any]) -> list[Mover]:
    """Entries whose share moved, biggest move first."""
    moved = []
    for key in dict.fromkeys([*old, *new]):
        before, after = old.get(key), new.get(key)
        pp = ((after or 0) - (before or 0)) * 100
        if abs(pp) > 1e-12:
            moved.append(
                Mover(
                    key=key,
                    old=None if before is None else float(before),
                    new=None if after is None else float(after),
                    pp=round(pp, 9),
                )
            )
    return sorted(moved, key=lambda m: (-abs(m.pp), m.key))


def _identity_key(a: list[Any], b: list[Any]) -> str | None:
    records = a + b
    if not records or not all(isinstance(r, dict) for r in records):
        return None
    common = set(records[0]).intersection(*records[1:])

    def usable(key: str) -> bool:
        for side in (a, b):
            values = [r[key] for r in side]
            if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
                return False
            if len(set(values)) != len(values):
                return False
        return True

    candidates: list[str] = [k for k in common if usable(k)]
    if not candidates:
        return None

    def rank(key: str) -> tuple[int, int, str]:
        # The key under which most records keep their identity wins (a phase keeps its start
        # step while its source changes); familiar identity names break ties.
        matched = len({r[key] for r in a} & {r[key] for r in b})
        preference = _IDENTITY_KEYS.index(key) if key in _IDENTITY_KEYS else len(_IDENTITY_KEYS)
        return (-matched, preference, key)

    return min(candidates, key=rank)


def _canon(value: Any) -> str:
    return canonical.dumps(value).decode()


@dataclass
class _Found:
    segs: tuple[_Seg, ...]
    pointer: str
    change: ChangeKind
    old: Any = None
    new: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


class _Differ:
    """Walks two JSON values; collects changes and an RFC 6902 patch (in application order)."""

    def __init__(self) -> None:
        self.found: list[_Found] = []
        self.patch: list[dict[str, Any]] = []

    def walk(self, a: Any, b: Any, segs: tuple[_Seg, ...], pa: str, pb: str, pw: str) -> None:
        """Compare ``a`` (at pointer ``pa`` in A) with ``b`` (``pb`` in B); ``pw`` is where ``a``
        sits in the document as patched so far, which is what patch operations must address."""
        if _same(a, b):
            return
        name = segs[-1].name if segs else ""
        if isinstance(a, dict) and isinstance(b, dict):
            if is_weights(a, name) and is_weights(b, name):
                self._weights(a, b, segs, pa, pw)
                return
            for key in a:
                if key not in b:
                    self.patch.append({"op": "remove", "path": _ptr(pw, key)})
                    self.found.append(
                        _Found((*segs, _key_seg(key)), _ptr(pa, key), "removed", a[key])
                    )
            for key, value in b.items():
                if key not in a:
                    self.patch.append({"op": "add", "path": _ptr(pw, key), "value": value})
                    self.found.append(
                        _Found((*segs, _key_seg(key)), _ptr(pb, key), "added", new=value)
                    )
                else:
                    self.walk(
                        a[key],
                        value,
                        (*segs, _key_seg(key)),
                        _ptr(pa, key),
                        _ptr(pb, key),
                        _ptr(pw, key),
                    )
            return
        if isinstance(a, list) and isinstance(b, list):
            key = _identity_key(a, b)
            if key is not None:
                self._keyed(a, b, key, segs, pa, pb, pw)
            elif all(not isinstance(v, (dict, list)) for v in a + b):
                self._scalars(a, b, segs, pa, pb, pw)
            else:
                self._sequence(a, b, segs, pa, pb, pw)
            return
        self.patch.append({"op": "replace", "path": pw, "value": b})
        extra: dict[str, Any] = {}
        if _number(a) and _number(b):
            extra["delta"], extra["relative"] = _delta(a, b)
        self.found.append(_Found(segs, pa, "changed", a, b, extra))

    def _weights(
        self, a: dict[str, Any], b: dict[str, Any], segs: tuple[_Seg, ...], pa: str, pw: str
    ) -> None:
        for key in a:
            if key not in b:
                self.patch.append({"op": "remove", "path": _ptr(pw, key)})
        for key, value in b.items():
            if key not in a:
                self.patch.append({"op": "add", "path": _ptr(pw, key), "value": value})
            elif not _same(a[key], value):
                self.patch.append({"op": "replace", "path": _ptr(pw, key), "value": value})
        self.found.append(_Found(segs, pa, "weights", extra={"movers": movers(a, b)}))

    def _keyed(
        self,
        a: list[Any],
        b: list[Any],
        key: str,
        segs: tuple[_Seg, ...],
        pa: str,
        pb: str,
        pw: str,
    ) -> None:
        """Records matched by an identity field: removals, then B's order by adds and moves."""

        def seg(record: dict[str, Any]) -> _Seg:
            return _Seg(str(record[key]), f"[{key}={record[key]}]")

        a_pos = {record[key]: index for index, record in enumerate(a)}
        b_keys = {record[key] for record in b}
        working = [record[key] for record in a]
        for index in reversed(range(len(a))):
            if a[index][key] not in b_keys:
                del working[index]
                self.patch.append({"op": "remove", "path": _ptr(pw, index)})
        for index in range(len(a)):
            if a[index][key] not in b_keys:
                self.found.append(
                    _Found((*segs, seg(a[index])), _ptr(pa, index), "removed", a[index])
                )
        for index, record in enumerate(b):
            identity = record[key]
            if identity not in a_pos:
                working.insert(index, identity)
                self.patch.append({"op": "add", "path": _ptr(pw, index), "value": record})
                self.found.append(
                    _Found(
                        (*segs, seg(record)),
                        _ptr(pb, index),
                        "added",
                        new=record,
                        extra=self._baseline(a, b, a_pos, key, index, segs, seg),
                    )
                )
                continue
            if working[index] != identity:
                current = working.index(identity, index)
                working.insert(index, working.pop(current))
                self.patch.append(
                    {"op": "move", "from": _ptr(pw, current), "path": _ptr(pw, index)}
                )
            old_index = a_pos[identity]
            self.walk(
                a[old_index],
                record,
                (*segs, seg(record)),
                _ptr(pa, old_index),
                _ptr(pb, index),
                _ptr(pw, index),
            )

    @staticmethod
    def _baseline(
        a: list[Any],
        b: list[Any],
        a_pos: dict[Any, int],
        key: str,
        index: int,
        segs: tuple[_Seg, ...],
        seg: Callable[[dict[str, Any]], _Seg],
    ) -> dict[str, Any]:
        """An added record holding weights is compared with the record before it (what ran
        until then, in a schedule of phases), as it stood in A when it was there."""
        if index == 0:
            return {}
        record = b[index]
        previous = b[index - 1]
        before = a[a_pos[previous[key]]] if previous[key] in a_pos else previous
        for name, value in record.items():
            if is_weights(value, name) and is_weights(before.get(name), name):
                return {
                    "movers": movers(before[name], value),
                    "baseline": _show((*segs, seg(previous), _key_seg(name))),
                }
        return {}

    def _scalars(
        self, a: list[Any], b: list[Any], segs: tuple[_Seg, ...], pa: str, pb: str, pw: str
    ) -> None:
        if len(a) == len(b) and all(_number(v) for v in a + b):
            for index, (old, new) in enumerate(zip(a, b, strict=True)):
                self.walk(
                    old,
                    new,
                    (*segs, _Seg(str(index), f"[{index}]")),
                    _ptr(pa, index),
                    _ptr(pb, index),
                    _ptr(pw, index),
                )
            return
        self._sequence_patch(a, b, pw)
        count_a, count_b = Counter(map(_canon, a)), Counter(map(_canon, b))
        added = [json.loads(v) for v in (count_b - count_a).elements()]
        removed = [json.loads(v) for v in (count_a - count_b).elements()]
        if added or removed:
            extra = {"added": added, "removed": removed}
            self.found.append(_Found(segs, pa, "set", a, b, extra))
        else:
            self.found.append(_Found(segs, pa, "reordered", a, b))

    def _sequence_patch(self, a: list[Any], b: list[Any], pw: str) -> None:
        """Patch operations for a positional list, block by block from the end (so that the
        indices of the blocks not yet handled stay valid)."""
        matcher = SequenceMatcher(None, [_canon(v) for v in a], [_canon(v) for v in b], False)
        for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
            if tag == "equal":
                continue
            for index in reversed(range(i1, i2)):
                self.patch.append({"op": "remove", "path": _ptr(pw, index)})
            for offset, value in enumerate(b[j1:j2]):
                self.patch.append({"op": "add", "path": _ptr(pw, i1 + offset), "value": value})

    def _sequence(
        self, a: list[Any], b: list[Any], segs: tuple[_Seg, ...], pa: str, pb: str, pw: str
    ) -> None:
        """Lists of containers without an identity: aligned by content; blocks that replace
        as many items as they remove are compared item by item."""
        matcher = SequenceMatcher(None, [_canon(v) for v in a], [_canon(v) for v in b], False)
        ops = matcher.get_opcodes()
        found: list[_Found] = []
        for tag, i1, i2, j1, j2 in reversed(ops):
            if tag == "equal":
                continue
            if tag == "replace" and i2 - i1 == j2 - j1:
                inner = _Differ()
                for offset in range(i2 - i1):
                    i, j = i1 + offset, j1 + offset
                    inner.walk(
                        a[i],
                        b[j],
                        (*segs, _Seg(str(j), f"[{j}]")),
                        _ptr(pa, i),
                        _ptr(pb, j),
                        _ptr(pw, i),
                    )
                self.patch.extend(inner.patch)
                found[:0] = inner.found
                continue
            for index in reversed(range(i1, i2)):
                self.patch.append({"op": "remove", "path": _ptr(pw, index)})
            for offset, value in enumerate(b[j1:j2]):
                self.patch.append({"op": "add", "path": _ptr(pw, i1 + offset), "value": value})
            block = [
                _Found((*segs, _Seg(str(i), f"[{i}]")), _ptr(pa, i), "removed", a[i])
                for i in range(i1, i2)
            ] + [
                _Found((*segs, _Seg(str(j), f"[{j}]")), _ptr(pb, j), "added", new=b[j])
                for j in range(j1, j2)
            ]
            found[:0] = block
        self.found.extend(found)


def _to_change(item: _Found, volatile: Volatile) -> Change:
    return Change(
        path=_show(item.segs),
        pointer=item.pointer,
        change=item.change,
        old=item.old,
        new=item.new,
        volatile=volatile.matches([seg.name for seg in item.segs]),
        **item.extra,
    )


def diff_document(
    a: Any, b: Any, volatile: Volatile, *, hide: Sequence[str] = ()
) -> tuple[list[Change], list[dict[str, Any]]]:
    """The changes from ``a`` to ``b`` and the RFC 6902 patch that turns one into the other.

    ``hide`` names top-level keys whose changes a comparer presents itself (the patch still
    covers them).
    """
    differ = _Differ()
    differ.walk(a, b, (), "", "", "")
    changes = [
        _to_change(item, volatile)
        for item in differ.found
        if not (item.segs and item.segs[0].name in hide)
    ]
    return changes, differ.patch


# -- comparing captures ------------------------------------------------------------------------


@dataclass
class Context:
    """What a comparer may use: blobs of each side and the volatile patterns of the source."""

    blobs_a: BlobSource
    blobs_b: BlobSource
    volatile: Volatile


@dataclass
class Parts:
    """What a comparer produces for one capture."""

    documents: list[DocumentDiff] = field(default_factory=list)
    files: list[FileChange] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


Comparer = Callable[[Capture, Capture, Context], Parts]


def _document(
    name: str,
    a: Any,
    b: Any,
    volatile: Volatile,
    *,
    hide: Sequence[str] = (),
    extra: Sequence[Change] = (),
    fmt: Literal["json", "yaml", "toml", "text", "python"] = "json",
) -> DocumentDiff | None:
    changes, patch = diff_document(a, b, volatile, hide=hide)
    changes.extend(extra)
    if not changes and not patch:
        return None
    return DocumentDiff(name=name, format=fmt, changes=tuple(changes), patch=tuple(patch))


def _envelope_documents(a: Capture, b: Capture, context: Context) -> list[DocumentDiff]:
    def envelope(c: Capture) -> dict[str, Any]:
        return {
            "status": c.status,
            "establishes": list(c.establishes),
            "error": c.error.model_dump(mode="json") if c.error else None,
        }

    out = [
        _document("capture", envelope(a), envelope(b), Volatile.of([])),
        _document("request", a.request, b.request, context.volatile.plus(["volatile"])),
    ]
    return [d for d in out if d is not None]


def compare_generic(a: Capture, b: Capture, context: Context) -> Parts:
    """Any kind: the data document, field by field."""
    parts = Parts()
    document = _document("data", a.data, b.data, context.volatile)
    if document:
        parts.documents.append(document)
    return parts


def _blob(capture: Capture, name: str) -> tuple[str, int, str | None] | None:
    for blob in capture.blobs:
        if blob.name == name:
            return blob.digest, blob.size, blob.media_type
    return None


def _content_diff(
    path: str,
    a: Capture,
    b: Capture,
    context: Context,
    name: str | None = None,
    media_type: str | None = None,
) -> tuple[DocumentDiff | None, str | None]:
    """Compare the stored bytes of one file: as documents when structured, else as text.

    Returns the document diff (or None) and a notice when the bytes could not be compared.
    """
    blob_a, blob_b = _blob(a, path), _blob(b, path)
    if blob_a is None or blob_b is None or blob_a[0] == blob_b[0]:
        return None, None
    bytes_a, bytes_b = context.blobs_a.get(blob_a[0]), context.blobs_b.get(blob_b[0])
    label = name or f"file:{path}"
    if bytes_a is None or bytes_b is None:
        return None, f"{label}: blob not at hand, compared by digest only"
    fmt = documents.format_of(path, media_type or blob_b[2])
    if fmt is not None:
        try:
            parsed_a = documents.parse(bytes_a, fmt)
            parsed_b = documents.parse(bytes_b, fmt)
        except documents.DocumentParseError as e:
            notice = f"{label}: not parsed as {fmt} ({e}); compared as text"
        else:
            doc = _document(label, parsed_a, parsed_b, context.volatile, fmt=fmt)
            return doc, None
    else:
        notice = None
    text_a, text_b = documents.as_text(bytes_a), documents.as_text(bytes_b)
    if text_a is None or text_b is None:
        return None, notice or f"{label}: binary or large, compared by digest only"
    diff = documents.unified(text_a, text_b, path)
    return DocumentDiff(name=label, format="text", text_diff=diff), notice


def _constants_diff(path: str, a: Capture, b: Capture, context: Context) -> DocumentDiff | None:
    """A Python file's module-level constants, old and new (read from the syntax, never run):
    shown as ``NAME: old -> new`` above the file's text diff."""
    if not path.endswith(".py"):
        return None
    blob_a, blob_b = _blob(a, path), _blob(b, path)
    if blob_a is None or blob_b is None:
        return None
    bytes_a, bytes_b = context.blobs_a.get(blob_a[0]), context.blobs_b.get(blob_b[0])
    if bytes_a is None or bytes_b is None:
        return None
    old, new = pyconstants.read(bytes_a), pyconstants.read(bytes_b)
    if old.error or new.error:
        return None
    return _document(f"constants:{path}", old.values, new.values, Volatile.of([]), fmt="python")


def _files(records: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(records, list):
        return {}
    return {r["path"]: r for r in records if isinstance(r, dict) and isinstance(r.get("path"), str)}


def _size(value: Any) -> int | None:
    # A snapshot's data is any JSON: a file record from another tool (or version) may hold
    # anything; the data document's patch still carries it exactly.
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _label(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else json.dumps(value, sort_keys=True)


def _compare_files(
    a: Capture,
    b: Capture,
    context: Context,
    parts: Parts,
    identity: Callable[[dict[str, Any]], Any],
) -> None:
    files_a, files_b = _files(a.data.get("files")), _files(b.data.get("files"))
    for path in sorted(set(files_a) | set(files_b)):
        old, new = files_a.get(path), files_b.get(path)
        if old is not None and new is not None and identity(old) == identity(new):
            continue
        change: Literal["added", "removed", "changed"] = (
            "added" if old is None else "removed" if new is None else "changed"
        )
        record = FileChange(
            path=path,
            change=change,
            old_size=_size((old or {}).get("size")),
            new_size=_size((new or {}).get("size")),
            old_oid=_label((old or {}).get("oid")),
            new_oid=_label((new or {}).get("oid")),
            old_mode=_label((old or {}).get("mode")),
            new_mode=_label((new or {}).get("mode")),
        )
        if change == "changed":
            constants = _constants_diff(path, a, b, context)
            if constants is not None:
                parts.documents.append(constants)
            document, notice = _content_diff(path, a, b, context)
            if document is not None:
                parts.documents.append(document)
            if notice:
                parts.notices.append(notice)
            content = "digest-only" if notice and document is None else "compared"
            if _blob(a, path) is None or _blob(b, path) is None:
                content = "not-compared"
            record = record.model_copy(update={"content": content})
        parts.files.append(record)


def compare_git(a: Capture, b: Capture, context: Context) -> Parts:
    """Commit and tree moved; files added / removed / changed with sizes; their contents."""
    parts = Parts()
    a, b = expand(a, context.blobs_a), expand(b, context.blobs_b)  # a manifest's files listed
    document = _document("data", a.data, b.data, context.volatile, hide=("files",))
    if document:
        parts.documents.append(document)
    _compare_files(a, b, context, parts, lambda f: (f.get("oid"), f.get("mode"), f.get("type")))
    return parts


def compare_huggingface(a: Capture, b: Capture, context: Context) -> Parts:
    """Revision and commit; files by git oid and LFS sha256; fetched small files' contents."""
    parts = Parts()
    document = _document("data", a.data, b.data, context.volatile, hide=("files",))
    if document:
        parts.documents.append(document)
    _compare_files(a, b, context, parts, lambda f: (f.get("oid"), f.get("lfs_sha256")))
    return parts


def _headers(data: dict[str, Any]) -> dict[str, str]:
    merged: dict[str, list[str]] = {}
    for pair in data.get("headers") or []:
        if isinstance(pair, list) and len(pair) == 2:
            merged.setdefault(str(pair[0]).lower(), []).append(str(pair[1]))
    return {name: ", ".join(values) for name, values in merged.items()}


def _error_view(data: dict[str, Any]) -> dict[str, Any]:
    body = data.get("error_body")
    fields = ("code", "message", "request_id", "host_id")
    if not isinstance(body, dict):
        return dict.fromkeys(fields)
    return {name: body.get(name) for name in fields}


def compare_http(a: Capture, b: Capture, context: Context) -> Parts:
    """Status, the headers that matter, the body by digest (and content), the parsed error."""
    parts = Parts()
    volatile = context.volatile
    extra: list[Change] = []

    headers_a, headers_b = _headers(a.data), _headers(b.data)
    for name in sorted(set(headers_a) | set(headers_b)):
        old, new = headers_a.get(name), headers_b.get(name)
        if old == new:
            continue
        names = ["headers", name]
        extra.append(
            Change(
                path=f"headers.{name}",
                pointer="/headers",
                change="added" if old is None else "removed" if new is None else "changed",
                old=old,
                new=new,
                volatile=name not in IMPORTANT_HEADERS or volatile.matches(names),
            )
        )
    error_a, error_b = _error_view(a.data), _error_view(b.data)
    for name, old in error_a.items():
        new = error_b[name]
        if old != new:
            extra.append(
                Change(
                    path=f"error_body.{name}",
                    pointer=f"/error_body/{name}",
                    change="changed",
                    old=old,
                    new=new,
                    volatile=volatile.matches(["error_body", name]),
                )
            )
    body_a, body_b = _blob(a, "body"), _blob(b, "body")
    if (body_a and body_a[0]) != (body_b and body_b[0]):
        # An S3-style error body embeds its request ids: when the parsed error is the same,
        # new bytes are only new ids.
        same_error = error_a["code"] is not None and all(
            error_a[k] == error_b[k] for k in ("code", "message")
        )
        extra.append(
            Change(
                path="body.digest",
                pointer="/body",
                change="changed",
                old=f"{body_a[0]} ({body_a[1]} bytes)" if body_a else None,
                new=f"{body_b[0]} ({body_b[1]} bytes)" if body_b else None,
                volatile=same_error,
            )
        )
        has_json = a.data.get("json") is not None or b.data.get("json") is not None
        if body_a and body_b and not has_json and not same_error:
            body = b.data.get("body")
            media_type = body.get("media_type") if isinstance(body, dict) else None
            document, notice = _content_diff(
                "body",
                a,
                b,
                context,
                name="body",
                media_type=media_type if isinstance(media_type, str) else None,
            )
            if document is not None:
                parts.documents.append(document)
            if notice:
                parts.notices.append(notice)
    order = {"status": 0, "reason": 1, "error_body.code": 2, "error_body.message": 3}
    document = _document(
        "data", a.data, b.data, volatile, hide=("headers", "error_body", "body"), extra=extra
    )
    if document:
        # An HTTP status is a code, not a quantity: no delta.
        shown = [
            c.model_copy(update={"delta": None, "relative": None}) if c.path == "status" else c
            for c in document.changes
        ]
        ranked = sorted(shown, key=lambda c: (c.volatile, order.get(c.path, 9)))
        document = document.model_copy(update={"changes": tuple(ranked)})
        parts.documents.insert(0, document)
    return parts


MAX_OBJECTS = 1000  # object changes listed per listing capture; the counts cover all

ObjectStep = tuple[
    Literal["added", "removed", "changed"], dict[str, Any] | None, dict[str, Any] | None
]
"""One object that differs between two manifests: the change, its entry in A, its entry in B."""


def _manifest(data: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
    for line in data.split(b"\n"):
        if line.strip():
            entry = canonical.loads(line)
            yield entry["key"], entry


def merge_entries(a: bytes, b: bytes) -> Iterator[ObjectStep]:
    """The objects that differ between two key-sorted manifests, every line parsed: the
    reference that ``merge_manifests`` must agree with (tests/unit/compare/test_diff_scale.py)."""
    left, right = _manifest(a), _manifest(b)
    old, new = next(left, None), next(right, None)
    while old is not None or new is not None:
        if new is None or (old is not None and old[0] < new[0]):
            yield "removed", old[1] if old else None, None
            old = next(left, None)
        elif old is None or new[0] < old[0]:
            yield "added", None, new[1]
            new = next(right, None)
        else:
            if old[1] != new[1]:
                yield "changed", old[1], new[1]
            old, new = next(left, None), next(right, None)


Lines = bytes | mmap.mmap


def _common_prefix(a: Lines, i: int, b: Lines, j: int) -> int:
    """How many bytes ``a[i:]`` and ``b[j:]`` share at their start: spans compared in C, growing
    while they match, then halved down to the first byte that differs."""
    limit = min(len(a) - i, len(b) - j)
    low, step = 0, 4096
    while True:
        high = min(low + step, limit)
        if a[i + low : i + high] != b[j + low : j + high]:
            break
        if high == limit:
            return limit
        low, step = high, step * 2
    while high - low > 1:  # the first difference is in [low, high)
        middle = (low + high) // 2
        if a[i + low : i + middle] == b[j + low : j + middle]:
            low = middle
        else:
            high = middle
    return low


def _line(data: Lines, start: int) -> tuple[bytes, int]:
    """The line at ``start`` (without its newline) and where the next one starts."""
    end = data.find(b"\n", start)
    if end < 0:
        return data[start:], len(data)
    return data[start:end], end + 1


def merge_manifests(a: Lines, b: Lines) -> Iterator[ObjectStep]:
    """What ``merge_entries`` yields, at the speed of comparing memory.

    Runs of lines that are the same bytes in A and B are the same objects (canonical lines):
    they are skipped by comparing spans of bytes, not line by line. Only where the bytes differ
    are lines parsed and merged by key, one step as ``merge_entries`` takes it, then the skip
    resumes. Identical lines are never parsed, so at 1% changed 99% of a manifest costs a
    memory comparison (``prov diff`` of two 1,000,000-object manifests: benchmarks/RESULTS.md).
    """
    i = j = 0
    end_a, end_b = len(a), len(b)
    while i < end_a or j < end_b:
        same = _common_prefix(a, i, b, j)
        if same:
            # Skip the whole lines of the common run: resume at the start of the line that
            # holds the first difference (the same offset on both sides).
            newline = a.rfind(b"\n", i, i + same)
            if newline >= 0:
                skip = newline + 1 - i
                i, j = i + skip, j + skip
        line_a, next_a = _line(a, i) if i < end_a else (None, i)
        line_b, next_b = _line(b, j) if j < end_b else (None, j)
        if line_a is not None and not line_a.strip():  # blank lines are no entries
            i = next_a
            continue
        if line_b is not None and not line_b.strip():
            j = next_b
            continue
        if line_a is None and line_b is None:
            break
        if line_a == line_b:  # the same last line, one side without its final newline
            i, j = next_a, next_b
            continue
        old = canonical.loads(line_a) if line_a is not None else None
        new = canonical.loads(line_b) if line_b is not None else None
        if new is None or (old is not None and old["key"] < new["key"]):
            yield "removed", old, None
            i = next_a
        elif old is None or new["key"] < old["key"]:
            yield "added", None, new
            j = next_b
        else:
            if old != new:
                yield "changed", old, new
            i, j = next_a, next_b


def compare_listing(a: Capture, b: Capture, context: Context) -> Parts:
    """An object-store listing: the manifest root and per-prefix counts, then the objects added,
    removed and changed, by a merge of the two key-sorted manifests (content manifest first)."""
    parts = compare_generic(a, b, context)
    for name in ("content-manifest.jsonl", "manifest.jsonl"):
        blob_a, blob_b = _blob(a, name), _blob(b, name)
        if blob_a is not None and blob_b is not None:
            break
    else:
        return parts
    if blob_a[0] == blob_b[0]:
        return parts
    counts = {"added": 0, "removed": 0, "changed": 0}
    with (
        context.blobs_a.mapped(blob_a[0]) as view_a,
        context.blobs_b.mapped(blob_b[0]) as view_b,
    ):
        if view_a is None or view_b is None:
            parts.notices.append(f"{name}: not at hand, objects compared by the manifest root only")
            return parts
        for change, before, after in merge_manifests(view_a, view_b):
            counts[change] += 1
            if len(parts.files) < MAX_OBJECTS:
                parts.files.append(_object_change(change, before, after))
    listed = sum(counts.values())
    if listed > MAX_OBJECTS:
        parts.notices.append(
            f"{listed:,} objects differ ({counts['added']:,} added, {counts['removed']:,} removed, "
            f"{counts['changed']:,} changed); the first {MAX_OBJECTS:,} by key are listed"
        )
    return parts


def _object_change(
    change: Literal["added", "removed", "changed"],
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> FileChange:
    def identity(entry: dict[str, Any] | None) -> str | None:
        if entry is None:
            return None
        found = entry.get("blake3") or entry.get("etag") or entry.get("git_oid")
        return str(found) if found is not None else None

    key = (after or before or {})["key"]
    return FileChange(
        path=key,
        change=change,
        old_size=(before or {}).get("size"),
        new_size=(after or {}).get("size"),
        old_oid=identity(before),
        new_oid=identity(after),
        content="compared",
    )


COMPARERS: dict[str, Comparer] = {
    "git": compare_git,
    "huggingface": compare_huggingface,
    "http": compare_http,
    "wandb": compare_generic,
    "listing": compare_listing,
}
"""How each kind is presented; a kind not listed gets ``compare_generic``."""


def compare_captures(a: Capture | None, b: Capture | None, context: Context) -> CaptureDiff:
    if a is None or b is None:
        present = a or b
        assert present is not None
        return CaptureDiff(
            source=present.source,
            kind=present.kind,
            status="added" if a is None else "removed",
            digest_a=a.digest if a else None,
            digest_b=b.digest if b else None,
        )
    base = {"source": a.source, "digest_a": a.digest, "digest_b": b.digest}
    if a.kind != b.kind:
        return CaptureDiff(
            **base,
            kind=f"{a.kind} -> {b.kind}",
            status="changed",
            notices=("the kind changed: the captures are not compared field by field",),
        )
    if a.digest == b.digest:
        return CaptureDiff(**base, kind=a.kind, status="unchanged")
    comparer = COMPARERS.get(a.kind, compare_generic)
    parts = comparer(a, b, context)
    docs = _envelope_documents(a, b, context) + parts.documents
    changed = bool(docs or parts.files)
    return CaptureDiff(
        **base,
        kind=a.kind,
        status="changed" if changed else "unchanged",
        documents=tuple(docs),
        files=tuple(parts.files),
        notices=tuple(parts.notices),
    )


def _ref(evidence: Evidence) -> SnapshotRef:
    snapshot = evidence.snapshot
    return SnapshotRef(
        label=snapshot.label,
        sha256=snapshot.sha256().hex,
        created=snapshot.created,
        origin=evidence.origin,
    )


def compare(a: Evidence, b: Evidence, notes: Sequence[NoteRef] = ()) -> Diff:
    """Compare two snapshots, source by source."""
    captures_a = {c.source: c for c in a.snapshot.captures}
    captures_b = {c.source: c for c in b.snapshot.captures}
    results = []
    for source in sorted(set(captures_a) | set(captures_b)):
        capture_a, capture_b = captures_a.get(source), captures_b.get(source)
        context = Context(a.blobs, b.blobs, volatile_for(capture_a, capture_b))
        results.append(compare_captures(capture_a, capture_b, context))
    counts = Counts(
        sources_changed=sum(1 for r in results if r.differs),
        changes=sum(r.real_changes + (r.status in ("added", "removed")) for r in results),
        volatile=sum(r.volatile_changes for r in results),
    )
    return Diff(
        a=_ref(a),
        b=_ref(b),
        equal=counts.sources_changed == 0,
        counts=counts,
        captures=tuple(results),
        notes=tuple(notes),
    )


def compare_snapshots(a: Snapshot, b: Snapshot) -> Diff:
    """Compare two snapshots with no blobs at hand (file contents by digest only)."""
    return compare(Evidence(a, a.label, 0, NoBlobs()), Evidence(b, b.label, 0, NoBlobs()))


def statement(diff: Diff) -> bytes:
    """An in-toto statement whose subjects are both snapshots and whose predicate is the diff."""
    from provenance.attest.statement import subject_name, wrap

    subjects = []
    for ref in (diff.a, diff.b):
        subject = {"name": subject_name(ref.label), "digest": {"sha256": ref.sha256}}
        if subject not in subjects:
            subjects.append(subject)
    return wrap(subjects, SCHEMA, diff.to_json())


def headline(capture: CaptureDiff, limit: int = 3) -> str:
    """One short phrase of what changed in a capture, for ``prov log``."""
    if capture.status in ("added", "removed"):
        return f"{capture.source} {capture.status}"
    bits: list[str] = []
    # What was observed first, what was asked for last (a new ref implies a new commit).
    rank = {"data": 0, "capture": 1, "request": 3}
    for document in sorted(capture.documents, key=lambda d: rank.get(d.name, 2)):
        for change in document.changes:
            if change.volatile or len(bits) >= limit:
                continue
            if change.change == "changed" and not isinstance(change.old, (dict, list)):
                bits.append(f"{change.path} {_short(change.old)} -> {_short(change.new)}")
            elif change.change == "added" and document.name in ("data", "request"):
                bits.append(f"+{change.path}")
            elif change.change == "removed" and document.name in ("data", "request"):
                bits.append(f"-{change.path}")
            elif change.change in ("weights", "set"):
                bits.append(f"{change.path} {change.change}")
    if capture.files:
        bits.append(f"{len(capture.files)} file(s)")
    real = capture.real_changes
    return f"{capture.source} ({'; '.join(bits) or f'{real} change(s)'})"


def _short(value: Any) -> str:
    if isinstance(value, str) and len(value) == 40 and all(c in "0123456789abcdef" for c in value):
        return value[:8]
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:37] + "..."
