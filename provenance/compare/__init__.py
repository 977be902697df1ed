"""Comparing: what changed between snapshots, and whether published numbers hold.

- ``diff``: per-kind comparison of two snapshots (documents by path, lists by identity, weights
  in percentage points, files, http exchanges, listings).
- ``evidence``: the blobs a comparison may read, from a store or a pack.
- ``gitmanifest``: a git capture's file manifest read back as its list of files.
- ``claims``: claims files and their evaluation by the safe evaluator.
- ``notes``: signed change notes tied to a snapshot.
- ``recheck``: a snapshot's captures against the same sources now: same, changed, gone, failed.
- ``witness``: witness statements, an independent party's co-signature of what matched.
- ``reads``: the captured values a claim's expression read, for readers of a verdict.
- ``timeline``: the store's snapshots in order, with what changed between them.

Comparisons read snapshots and their blobs, never live sources.
"""

__all__ = [
    "claims",
    "diff",
    "evidence",
    "gitmanifest",
    "notes",
    "reads",
    "recheck",
    "timeline",
    "witness",
]
