"""Ephemeral signing keys of every Sigstore registry scheme, for the local instance's bundles.

Fulcio certifies ECDSA P-256/P-384/P-521, RSA 2048-4096 and Ed25519 keys; sigstore-python only
ever signs with P-256. ``LocalSigstore(scheme=...)`` signs its DSSE envelopes with any of these,
so that each scheme prov verifies is exercised end to end (and by sigstore-js).
"""

from __future__ import annotations

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey

_CURVES: dict[str, tuple[ec.EllipticCurve, hashes.HashAlgorithm]] = {
    "p256": (ec.SECP256R1(), hashes.SHA256()),
    "p384": (ec.SECP384R1(), hashes.SHA384()),
    "p521": (ec.SECP521R1(), hashes.SHA512()),
}
SCHEMES = (
    "ecdsa-p256",
    "ecdsa-p384",
    "ecdsa-p521",
    "rsa-2048",
    "rsa-3072",
    "rsa-4096",
    "rsa-pss-2048",
    "rsa-pss-3072",
    "rsa-pss-4096",
    "ed25519",
)


def ephemeral(scheme: str) -> PrivateKey:
    """A new key for ``scheme`` (one of ``SCHEMES``)."""
    if scheme.startswith("ecdsa-"):
        return ec.generate_private_key(_CURVES[scheme.removeprefix("ecdsa-")][0])
    if scheme.startswith("rsa-"):
        return rsa.generate_private_key(65537, int(scheme.rsplit("-", 1)[1]))
    if scheme == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    raise ValueError(f"unknown signing scheme {scheme!r}; one of {', '.join(SCHEMES)}")


def sign(key: PrivateKey, scheme: str, message: bytes) -> bytes:
    """``message`` signed the way the scheme signs (the digest is the scheme's own)."""
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return key.sign(message, ec.ECDSA(_CURVES[scheme.removeprefix("ecdsa-")][1]))
    if isinstance(key, rsa.RSAPrivateKey):
        if scheme.startswith("rsa-pss-"):
            pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
            return key.sign(message, pss, hashes.SHA256())
        return key.sign(message, padding.PKCS1v15(), hashes.SHA256())
    return key.sign(message)
