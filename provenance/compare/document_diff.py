"""The generic differ of two JSON documents, and the volatile paths that do not count.

One walk yields both the *changes* a reader wants (paths, numbers with their delta and relative
change, lists of records matched by identity such as ``files[path=README.md]``, scalar lists as
sets, maps of weights as percentage-point movers, each flagged volatile or not) and an RFC 6902
*patch* that turns A's document into B's, complete (volatile changes included), so a JSON-patch
library can replay it.

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
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from provenance._internal import canonical
from provenance.compare.diffmodel import Change, ChangeKind, Mover
from provenance.model import Capture

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


_IDENTITY_KEYS = ("id", "name", "key", "path", "rfilename", "source", "url", "start_step", "step")


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
