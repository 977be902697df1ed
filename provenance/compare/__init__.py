"""Comparing: what changed between snapshots, and whether published numbers hold.

- ``diff``: per-kind comparison of two snapshots, the entry point: ``diffmodel`` (the wire
  format), ``document_diff`` (documents by path, lists by identity, weights in percentage
  points, volatile paths), ``kinds`` (files, http exchanges, listings: one comparer per kind),
  ``listing_merge`` (two listing manifests merged at memory speed).
- ``pyconstants``: a Python file's module-level constants, read from its syntax, never run.
- ``evidence``: the blobs a comparison may read, from a store or a pack.
- ``gitmanifest``: a git capture's file manifest read back as its list of files.
- ``claims``: claims files and their evaluation by the safe evaluator; ``views``: the snapshot
  as expressions see it (captures, stored files, Python constants, ``[let]`` names).
- ``notes``: signed change notes tied to a snapshot.
- ``recheck``: a snapshot's captures against the same sources now: same, changed, gone, failed.
- ``witness``: witness statements, an independent party's co-signature of what matched.
- ``again``: ``prov recheck`` and ``prov witness`` as calls: load, ask the sources again, sign.
- ``reads``: the captured values a claim's expression read, for readers of a verdict.
- ``timeline``: the store's snapshots in order, with what changed between them.

Comparisons read snapshots and their blobs, never live sources.
"""

__all__ = [
    "again",
    "claims",
    "diff",
    "diffmodel",
    "document_diff",
    "evidence",
    "gitmanifest",
    "kinds",
    "listing_merge",
    "notes",
    "pyconstants",
    "reads",
    "recheck",
    "timeline",
    "views",
    "witness",
]
