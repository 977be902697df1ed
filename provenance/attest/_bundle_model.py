"""sigstore's bundle model, with the fields protobuf makes optional optional again.

sigstore-models requires ``verificationMaterial.tlogEntries`` and each entry's
``inclusionProof``. In protobuf JSON an absent repeated field is an empty one, and bundle.proto
makes the proof optional in v0.1 bundles (which need the inclusion promise instead): a bundle
from GitHub's instance (no log at all) or an old npm provenance bundle (promise only) then
cannot even be read. Whether the bundle is acceptable without them is decided by the verifier,
per bundle version (``_bundle_verifier.ProvVerifier.load``).
"""

from __future__ import annotations

from sigstore_models.bundle.v1 import Bundle, VerificationMaterial
from sigstore_models.rekor.v1 import InclusionProof, TransparencyLogEntry


class Entry(TransparencyLogEntry):
    inclusion_proof: InclusionProof | None = None  # type: ignore[assignment]


class Material(VerificationMaterial):
    tlog_entries: list[Entry] = []  # type: ignore[assignment]


class LenientBundle(Bundle):
    verification_material: Material
