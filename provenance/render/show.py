"""``prov show``: a snapshot (each capture, what it establishes, its data), or a statement."""

from __future__ import annotations

from typing import Any, get_args

from provenance.model import Establishes
from provenance.render.escape import text
from provenance.render.sections import list_items
from provenance.verify.resolve import Foreign, Loaded

__all__ = ["foreign_json", "foreign_text", "snapshot_json", "snapshot_text"]


def snapshot_json(loaded: Loaded) -> dict[str, Any]:
    snap = loaded.snapshot
    return {
        "schema": "https://prov.dev/show/v1",
        "origin": loaded.origin,
        "sha256": snap.sha256().hex,
        "verified_by": list(loaded.verified) if loaded.verified is not None else None,
        "snapshot": snap.model_dump(mode="json"),
    }


def snapshot_text(loaded: Loaded) -> str:
    snap = loaded.snapshot
    lines = [f"snapshot {snap.label}  sha256:{snap.sha256().hex}"]
    lines.append(f"  created {snap.created} by prov {snap.tool.version}; from {loaded.origin}")
    if loaded.verified is None:
        lines.append(f"  {loaded.signatures} signature(s), not checked here (pass --key PUB)")
    else:
        lines.append(text(f"  verified: signed by {', '.join(loaded.verified)}"))
    every = get_args(Establishes)
    for capture in snap.captures:
        lines.append(f"\n{capture.source} [{capture.kind}]: {capture.status}  {capture.digest}")
        lines.append(f"  captured {capture.started} .. {capture.ended}")
        missing = [e for e in every if e not in capture.establishes]
        lines.append(
            f"  establishes: {', '.join(capture.establishes) or 'nothing'}"
            f"; not established: {', '.join(missing) or 'none'}"
        )
        if capture.error:
            lines.append(text(f"  error: {capture.error.type}: {capture.error.message}"))
        for key, value in capture.data.items():
            lines.append(text(f"  {key}: {_manifest_line(value) or _summary(value)}"))
            if isinstance(value, list) and value:
                lines += [f"      {item}" for item in list_items(value)]
        if capture.blobs:
            total = sum(b.size for b in capture.blobs)
            lines.append(f"  blobs: {len(capture.blobs)} ({total:,} bytes) in the store")
    if snap.cross_checks:
        lines.append("\ncross-checks:")
        for key, check in sorted(snap.cross_checks.items()):
            lines.append(text(f"  {key}: {check.result.upper()}: {check.detail}"))
    return "".join(f"{line}\n" for line in lines)


def _manifest_line(value: Any) -> str | None:
    """A manifest's signed summary: entries, bytes, Merkle root (the list is in its blob)."""
    if not isinstance(value, dict) or value.get("format") != "prov-manifest/v1":
        return None
    count, size = value.get("count"), value.get("bytes")
    if not isinstance(count, int) or not isinstance(size, int):
        return None
    return (
        f"{count:,} entries, {size:,} bytes, Merkle root {value.get('root')} "
        f"(the list: {value.get('blob')}; `prov prove` proves one entry)"
    )


def _summary(value: Any) -> str:
    if isinstance(value, list):
        return f"{len(value):,} item(s):" if value else "[] (none)"
    if isinstance(value, dict):
        return f"{{{len(value)} field(s)}}"
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return str(value)


def foreign_json(foreign: Foreign) -> dict[str, Any]:
    return {
        "schema": "https://prov.dev/show-statement/v1",
        "origin": foreign.origin,
        "predicateType": foreign.predicate_type,
        "subject": foreign.subjects,
        "signatures": foreign.signatures,
        "verified_signers": list(foreign.verified) if foreign.verified is not None else None,
    }


def foreign_text(foreign: Foreign) -> str:
    """An in-toto statement that is not a prov snapshot: what it is about and what it claims."""
    lines = [text(f"in-toto statement (not a prov snapshot) from {foreign.origin}")]
    lines.append(text(f"  predicateType {foreign.predicate_type}"))
    for subject in foreign.subjects:
        digest = subject.get("digest")
        digests: dict[str, Any] = digest if isinstance(digest, dict) else {}
        named = "  ".join(f"{alg}:{value}" for alg, value in sorted(digests.items()))
        name = subject.get("name") or subject.get("uri") or "?"
        lines.append(text(f"  subject {name}  {named or 'no digest'}"))
    if foreign.verified is None:
        lines.append(f"  {foreign.signatures} signature(s), not checked here (run `prov verify`)")
    else:
        lines.append(text(f"  signature verified: {', '.join(foreign.verified)}"))
    return "".join(f"{line}\n" for line in lines)
