"""Publishing: attaching attestations where their users look for them.

- ``oci``: attestations pushed to and fetched from an OCI registry (referrers or tag scheme).
- ``release``: attestations uploaded to a GitHub release.
"""

__all__ = ["oci", "release"]
