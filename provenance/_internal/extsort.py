"""External merge sort of listing entries, for backends that do not list in key order.

Entries are buffered up to ``run_size``, sorted and spilled to temporary JSON Lines runs, then
merged with a heap: memory holds one run plus one entry per run, whatever the listing's size.
"""

from __future__ import annotations

import heapq
import json
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any


def _key(entry: dict[str, Any]) -> str:
    return str(entry["key"])


def sort_entries(
    entries: Iterable[dict[str, Any]], *, run_size: int = 100_000, directory: Path | None = None
) -> Iterator[dict[str, Any]]:
    """Yield ``entries`` sorted by ``key`` (UTF-8 byte order, i.e. ``str`` order)."""
    buffer: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="prov-sort-", dir=directory) as temp:
        runs: list[Path] = []
        for entry in entries:
            buffer.append(entry)
            if len(buffer) >= run_size:
                runs.append(_spill(buffer, Path(temp), len(runs)))
                buffer = []
        buffer.sort(key=_key)
        if not runs:
            yield from buffer
            return
        if buffer:
            runs.append(_spill(buffer, Path(temp), len(runs)))
            buffer = []
        handles: list[IO[str]] = [run.open(encoding="utf-8") for run in runs]
        try:
            streams = [(json.loads(line) for line in handle) for handle in handles]
            yield from heapq.merge(*streams, key=_key)
        finally:
            for handle in handles:
                handle.close()


def _spill(buffer: list[dict[str, Any]], directory: Path, number: int) -> Path:
    buffer.sort(key=_key)
    path = directory / f"run-{number:06d}.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for entry in buffer:
            handle.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
            handle.write("\n")
    return path
