"""Verifying: the numbered steps an auditor's ``prov verify`` runs, offline.

- ``steps``: parse -> signatures -> timestamp -> statement -> subject -> blobs, each step reported.
- ``observers``: step 7, witness statements counted by distinct key; evidence levels per capture.
- ``reachable``: which store objects the snapshots and notes refer to (kept by ``prov gc``).
- ``tls``: the ``tls-bound`` claim checked against a capture's recorded certificate chain.
- ``witness_policy``: an auditor's witness policy file (witnesses, k-of-n groups, a quorum).
- ``resolve``: turning what a user names (a file, a pack, a label, an id) into a checked snapshot.

Verification returns a verified result or raises; it never trusts what it has not checked.
"""

__all__ = ["observers", "reachable", "resolve", "steps", "tls", "witness_policy"]
