"""The store: where captured bytes live, content-addressed by blake3 and immutable.

- ``objects``: the object store (``.prov/objects``), atomic writes, the snapshot index, fsck.
- ``packs``: pack files, many small objects in one file with a sorted index (read by ``objects``).
- ``gc``: removing unreferenced objects and repacking the rest.
- ``manifest``: sorted manifests of many entries and their RFC 9162 Merkle root and proofs.
- ``pack``: evidence packs, one tar holding an attestation and every blob it references.

The store knows nothing of sources, signatures or verification; every stage above uses it.
"""

__all__ = ["gc", "manifest", "objects", "pack", "packs"]
