"""git blob oid -> (blake3, size), kept in the store so a re-snapshot skips blobs already stored.

A git oid names exact content (the sha1 or sha256 of the blob), so an entry can only be wrong if
it was written wrong; and an entry is used only while the blake3 object it points to is still in
the store, so deleting objects never leaves a capture pointing at nothing. Entries live in
segment files under ``cache/git-oids/``: each is written once, atomically, and named by the blake3
of its bytes, so a torn or altered segment is noticed and ignored (its blobs are then simply
hashed again). Many segments are merged into one; concurrent writers only ever add files.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import blake3

from provenance._internal.files import atomic_write

SUFFIX = ".seg"
MERGE_AFTER = 8  # segments; merging keeps start-up to one read of one file


class OidCache:
    """The cache of one store. ``load`` once, ``get`` many, ``add`` new entries, ``save`` once."""

    def __init__(self, cache_dir: Path) -> None:
        self.directory = cache_dir / "git-oids"
        self._entries: dict[str, tuple[str, int]] = {}
        self._new: dict[str, tuple[str, int]] = {}
        self._segments: list[Path] = []

    def load(self) -> OidCache:
        if not self.directory.is_dir():
            return self
        for path in sorted(self.directory.glob(f"*{SUFFIX}")):
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if blake3.blake3(data).hexdigest() != path.name.removesuffix(SUFFIX):
                continue  # torn or altered: ignore it, its blobs get hashed again
            self._segments.append(path)
            for line in data.decode("ascii", "replace").splitlines():
                parts = line.split(" ")
                if len(parts) == 3 and len(parts[1]) == 64 and parts[2].isdigit():
                    self._entries[parts[0]] = (parts[1], int(parts[2]))
        return self

    def get(self, oid: str) -> tuple[str, int] | None:
        """The blake3 hex and size recorded for ``oid``, if any."""
        return self._entries.get(oid)

    def add(self, oid: str, blake3_hex: str, size: int) -> None:
        if self._entries.get(oid) != (blake3_hex, size):
            self._entries[oid] = (blake3_hex, size)
            self._new[oid] = (blake3_hex, size)

    def __len__(self) -> int:
        return len(self._entries)

    def save(self) -> None:
        """Write the new entries as one segment; merge all segments once there are many.

        Best effort: the cache only saves work, so a failure to write it is not an error.
        """
        if not self._new:
            return
        merge = len(self._segments) + 1 > MERGE_AFTER
        entries = self._entries if merge else self._new
        data = "".join(
            f"{oid} {hexdigest} {size}\n" for oid, (hexdigest, size) in sorted(entries.items())
        )
        content = data.encode("ascii")
        name = blake3.blake3(content).hexdigest() + SUFFIX
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            atomic_write(self.directory / name, content)
        except OSError:
            return
        self._new.clear()
        if merge:
            # Only segments this process read are removed: their entries are all in the new one.
            for path in self._segments:
                if path.name != name:
                    with contextlib.suppress(OSError):
                        os.unlink(path)
            self._segments = [self.directory / name]
        else:
            self._segments.append(self.directory / name)
