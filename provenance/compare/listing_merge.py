"""The objects that differ between two key-sorted listing manifests, at memory speed.

``merge_entries`` is the line-by-line reference; ``merge_manifests`` yields the same steps but
skips runs of identical bytes without parsing them (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from typing import Any, Literal

from provenance._internal import canonical

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
