"""Shortening long values so that what differs stays in view.

A changed string is cut around the part that changed (``…/v1/part-00123… -> …/v2/part-00123…``).
The members of a long list are each cut to the part that varies between them (what all of them
share at the start and at the end is elided, a little of it kept for context), so two different
members never print alike, however long their common prefix; a member whose varying part is still
too long shows its start and the place that tells it from its nearest neighbour.
"""

from __future__ import annotations

from collections.abc import Sequence

ELLIPSIS = "…"
CONTEXT = 12  # characters kept either side of the part that differs


def around(old: str, new: str, limit: int) -> tuple[str, str]:
    """``old`` and ``new`` cut to about ``limit`` characters each, around where they differ."""
    if len(old) <= limit and len(new) <= limit:
        return old, new
    prefix = _common(old, new)
    suffix = min(_common(old[::-1], new[::-1]), len(old) - prefix, len(new) - prefix)
    return (
        _window(old, prefix, len(old) - suffix, limit),
        _window(new, prefix, len(new) - suffix, limit),
    )


def shared(old: str, new: str) -> int:
    """How many characters two strings share at their start and their end together."""
    prefix = _common(old, new)
    return prefix + min(_common(old[::-1], new[::-1]), len(old) - prefix, len(new) - prefix)


def distinct(values: Sequence[str], limit: int) -> list[str]:
    """Each value cut to about ``limit`` characters, keeping what tells it from the others."""
    if len(values) < 2 or all(len(v) <= limit for v in values):
        return [v if len(v) <= limit else _window(v, 0, 0, limit) for v in values]
    ordered = sorted(values)
    start = _common(ordered[0], ordered[-1])
    backwards = sorted(v[::-1] for v in values)
    tail = _common(backwards[0], backwards[-1])
    rank = {v: index for index, v in enumerate(ordered)}
    out = []
    for v in values:
        end = max(start, len(v) - tail)
        if end - start <= limit - 2 * len(ELLIPSIS):
            out.append(_window(v, start, end, limit))
            continue
        # The varying part is long: its start, then where it parts from its closest neighbour.
        index = rank[v]
        near = max(
            (_common(v, ordered[i]) for i in (index - 1, index + 1) if 0 <= i < len(ordered)),
            default=start,
        )
        half = limit // 2
        head = _window(v, start, start, half).removesuffix(ELLIPSIS)
        out.append(head + _window(v, near, near + 1, limit - half))
    return out


def _window(text: str, start: int, end: int, limit: int) -> str:
    """``text`` cut to ``limit`` characters showing ``text[start:end]`` (as much as fits), with a
    little context before it, ``…`` where something was cut."""
    if len(text) <= limit:
        return text
    begin = max(0, min(start - CONTEXT, len(text) - limit))
    if end - begin > limit:  # the span does not fit with its context: start at the span
        begin = max(0, min(start, len(text) - limit))
    stop = min(len(text), begin + limit)
    head = ELLIPSIS if begin > 0 else ""
    tail = ELLIPSIS if stop < len(text) else ""
    return f"{head}{text[begin:stop]}{tail}"


def _common(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start."""
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))
