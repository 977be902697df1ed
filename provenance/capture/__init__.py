"""Capturing: what each source said, kept as content-hashed captures.

- ``base``: the ``Collector`` interface, its options model and the registry keyed by ``kind``.
- one module per kind: ``git``, ``wandb``, ``huggingface``, ``http``, ``listing``, ``oci``.
- ``_http`` and ``_network``: the collectors' shared HTTP client (retries, deadlines, redaction).
- ``content``: content hashing of listings, locally or on a Ray cluster.
- ``crosscheck``: comparisons between the captures of one snapshot (image revision vs commit).
- ``recheck``: a snapshot's captures turned back into sources and asked again (no prov.toml).
- ``snapshot``: taking a snapshot: config -> collectors -> store -> statement -> signed file.
- ``signed``: ``prov snapshot`` as one call: the signing choice checked, keys, take, timestamp.

Adding a collector means one module here and one line in ``base.REGISTRY``.
"""

__all__ = [
    "base",
    "content",
    "crosscheck",
    "git",
    "http",
    "huggingface",
    "listing",
    "oci",
    "recheck",
    "signed",
    "snapshot",
    "wandb",
]
