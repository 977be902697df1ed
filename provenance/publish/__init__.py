"""Publishing: attaching attestations where their users look for them.

- ``oci``: attestations pushed to and fetched from an OCI registry (referrers or tag scheme).
- ``image``: ``prov push`` and ``prov verify oci://...``: the registry reached, then push or verify.
- ``release``: attestations uploaded to a GitHub release.
"""

__all__ = ["image", "oci", "release"]
