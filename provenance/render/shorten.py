"""Shortening long values so that what differs stays in view.

A changed string is cut around the part that changed (``…/v1/part-00123… -> …/v2/part-00123…``);
the members of a long list are each cut around what tells them from their neighbours, so that no
two different values print alike, however long their common prefix.
"""

from __future__ import annotations

from collections.abc import Sequence

ELLIPSIS = "…"
CONTEXT = 12  # characters kept before the first difference


def around(old: str, new: str, limit: int) -> tuple[str, str]:
    """``old`` and ``new`` cut to about ``limit`` characters each, around where they differ."""
    if len(old) <= limit and len(new) <= limit:
        return old, new
    prefix = _common(old, new)
    suffix = _common(old[prefix:][::-1], new[prefix:][::-1])
    return _window(old, prefix, len(old) - suffix, limit), _window(
        new, prefix, len(new) - suffix, limit
    )


def distinct(values: Sequence[str], limit: int) -> list[str]:
    """Each value cut to about ``limit`` characters around what tells it from the others."""
    if all(len(v) <= limit for v in values):
        return list(values)
    order = sorted(range(len(values)), key=lambda i: values[i])
    starts = [0] * len(values)
    for rank, index in enumerate(order):
        value = values[index]
        shared = 0
        for other in (rank - 1, rank + 1):
            if 0 <= other < len(order):
                neighbour = values[order[other]]
                shared = max(shared, _common(value, neighbour))
        starts[index] = shared
    return [_window(v, start, start + 1, limit) for v, start in zip(values, starts, strict=True)]


def _window(text: str, start: int, end: int, limit: int) -> str:
    """``text`` cut to ``limit`` characters showing ``text[start:end]`` (as much as fits)."""
    if len(text) <= limit:
        return text
    begin = max(0, min(start - CONTEXT, len(text) - limit))
    stop = min(len(text), begin + limit)
    if end > stop and end - start <= limit:  # the differing span does not fit from here
        begin = max(0, end - limit)
        stop = begin + limit
    head = ELLIPSIS if begin > 0 else ""
    tail = ELLIPSIS if stop < len(text) else ""
    return f"{head}{text[begin:stop]}{tail}"


def _common(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start."""
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))
