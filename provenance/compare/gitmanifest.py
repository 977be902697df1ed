"""A git capture over many files keeps its file list as a manifest blob; readers see the list.

``expand`` turns such a capture back into the shape of a small one (``data.files`` and one blob
per file), read from the manifest in the store or pack, so that diff and claims treat both alike.
The manifest's bytes are checked against its address, and its Merkle root and counts against
the signed capture, before a single entry is used.
"""

from __future__ import annotations

import json
from typing import Any

from provenance.compare.evidence import BlobSource
from provenance.errors import IntegrityError
from provenance.model import BlobRef, Capture
from provenance.store.manifest import file_manifest, summarise


def expand(capture: Capture, blobs: BlobSource) -> Capture:
    """``capture`` with its manifest's files listed; unchanged when it has no manifest, or
    when the manifest is not at hand (then files compare by the manifest root only)."""
    info = file_manifest(capture)
    if info is None:
        return capture
    with blobs.mapped(info.blob) as view:
        if view is None:
            return capture
        lines = [line for line in bytes(view).split(b"\n") if line]
    root, count, total = summarise(lines)
    if (root, count, total) != (info.root, info.count, info.bytes):
        raise IntegrityError(
            f"capture {capture.source!r}: its manifest does not match the signed root and counts",
            hint="the manifest blob was replaced; take it from the evidence pack",
        )
    files: list[dict[str, Any]] = []
    refs: list[BlobRef] = list(capture.blobs)
    for line in lines:
        entry = json.loads(line)
        record = {"path": entry["key"], "mode": entry.get("mode"), "type": entry.get("type")}
        record["oid"] = entry.get("oid")
        if "size" in entry:
            record["size"] = entry["size"]
        files.append(record)
        if isinstance(entry.get("blake3"), str):
            refs.append(
                BlobRef.model_construct(
                    name=entry["key"],
                    digest=f"blake3:{entry['blake3']}",
                    size=int(entry.get("size", 0)),
                    media_type=None,
                )
            )
    data = {**capture.data, "files": files}
    return capture.model_copy(update={"data": data, "blobs": tuple(refs)})
