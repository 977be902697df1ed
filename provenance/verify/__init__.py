"""Verifying: the numbered steps an auditor's ``prov verify`` runs, offline.

- ``policy``: THE trust decision: what the auditor passed, or a pack's own material only with
  ``--trust-pack`` (every fingerprint listed); nothing else is ever trusted.
- ``audit``: ``prov verify`` and ``prov pack`` on a file or a pack, the label from its outer name.
- ``steps``: parse -> signatures -> timestamp -> statement -> subject -> blobs, each step reported.
- ``predicates``: the statements prov verifies, by predicateType (snapshot, note, diff); a
  snapshot's capture digests are recomputed.
- ``bundle``: one Sigstore bundle for one artifact, as ``prov-conformance`` asks.
- ``oci``: the attestations attached to an image, each verified under the auditor's policy.
- ``observers``: step 7, witness statements counted by distinct key; evidence levels per capture.
- ``fsck``: ``prov fsck``: every object re-hashed, temp files swept, unreferenced ones counted.
- ``reachable``: which store objects the snapshots and notes refer to (kept by ``prov gc``).
- ``tls``: the ``tls-bound`` claim checked against a capture's recorded certificate chain.
- ``witness_policy``: an auditor's witness policy file (witnesses, k-of-n groups, a quorum).
- ``inclusion``: ``prov prove``: an inclusion proof for one file of a manifest, and its check.
- ``resolve``: turning what a user names (a file, a pack, a label, an id) into a checked snapshot.

Verification returns a verified result or raises; it never trusts what it has not checked.
"""

__all__ = [
    "audit",
    "bundle",
    "fsck",
    "inclusion",
    "observers",
    "oci",
    "policy",
    "predicates",
    "reachable",
    "resolve",
    "steps",
    "tls",
    "witness_policy",
]
