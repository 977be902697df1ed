"""One Sigstore bundle verified for one artifact: the check ``prov-conformance`` exposes.

The sigstore-conformance client protocol names the trust on the command line: an identity with
its OIDC issuer (matched exactly) or a managed key, and a trusted root (default: the production
root shipped with sigstore, so offline). DSSE bundles also get the in-toto check: the artifact
must be a subject.
"""

from __future__ import annotations

import re
from pathlib import Path

from provenance.attest import sigstore
from provenance.digest import Digest, sha256_bytes
from provenance.errors import UsageError

__all__ = ["verify_bundle_file"]

_DIGEST = re.compile(r"^sha256:([0-9a-f]{64})$")


def verify_bundle_file(
    bundle_path: Path,
    artifact: str,
    identity: str | None,
    issuer: str | None,
    key_path: Path | None,
    trusted_root: Path | None,
) -> None:
    """Verify a bundle for an artifact (a file, or ``sha256:HEX``) under exactly one of an
    identity (with its issuer) or a key; raises VerificationError, UsageError on bad input."""
    if key_path is not None and (identity or issuer):
        raise UsageError("--key excludes --certificate-identity / --certificate-oidc-issuer")
    if key_path is None and not (identity and issuer):
        raise UsageError("pass --certificate-identity and --certificate-oidc-issuer, or --key")
    match = _DIGEST.match(artifact)
    content: bytes | None = None
    if match:
        digest = Digest("sha256", match.group(1))
    else:
        try:
            content = Path(artifact).read_bytes()
        except OSError as e:
            raise UsageError(f"cannot read the artifact {artifact}", cause=str(e)) from e
        digest = sha256_bytes(content)
    try:
        data = bundle_path.read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read the bundle {bundle_path}", cause=str(e)) from e

    result = sigstore.verify_bundle(
        data,
        policy=sigstore.IdentityPolicy(issuer=issuer, identity=identity) if issuer else None,
        key=sigstore.load_public_key(key_path) if key_path else None,
        trusted_root=trusted_root,
        artifact=content if content is not None else digest,
        origin=str(bundle_path),
    )
    if result.payload is not None:
        sigstore.check_subject_digest(result.payload_type, result.payload, digest)
