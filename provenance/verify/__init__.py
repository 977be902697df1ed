"""Verifying: the numbered steps an auditor's ``prov verify`` runs, offline.

- ``steps``: parse -> signatures -> timestamp -> statement -> subject -> blobs, each step reported.
- ``resolve``: turning what a user names (a file, a pack, a label, an id) into a checked snapshot.

Verification returns a verified result or raises; it never trusts what it has not checked.
"""

__all__ = ["resolve", "steps"]
