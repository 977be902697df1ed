"""The Sigstore algorithm registry's signing schemes, verified with ``cryptography``.

sigstore-python 4.5 verifies bundle signatures as ECDSA over a SHA-256 digest only: a P-384 or
P-521 key then reports a digest mismatch and an RSA key a traceback. Fulcio and managed keys
produce every scheme of the registry (architecture-docs ``algorithm-registry.md``), and the key
decides the digest: P-256 and RSA use SHA-256, P-384 SHA-384, P-521 SHA-512; Ed25519 signs the
message itself. RSA certificates do not say which padding their key signs with, so PKCS#1 v1.5
and PSS both verify (both are registry schemes for the same key sizes).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa, utils

from provenance.errors import VerificationError

SigningKey = ec.EllipticCurvePublicKey | rsa.RSAPublicKey | ed25519.Ed25519PublicKey

_CURVES: dict[str, tuple[type[hashes.HashAlgorithm], str, str]] = {
    "secp256r1": (hashes.SHA256, "P-256", "PKIX_ECDSA_P256_SHA_256"),
    "secp384r1": (hashes.SHA384, "P-384", "PKIX_ECDSA_P384_SHA_384"),
    "secp521r1": (hashes.SHA512, "P-521", "PKIX_ECDSA_P521_SHA_512"),
}
RSA_SIZES = (2048, 3072, 4096)

# The spellings of each digest: protobuf HashAlgorithm, Rekor v1 entry bodies.
PROTOBUF_NAMES = {"sha256": "SHA2_256", "sha384": "SHA2_384", "sha512": "SHA2_512"}


def signing_key(key: object) -> SigningKey:
    """The key as one of the registry's key types, or a VerificationError saying which it is."""
    if isinstance(key, ec.EllipticCurvePublicKey):
        if key.curve.name not in _CURVES:
            raise VerificationError(
                f"the signing key is on curve {key.curve.name}, which no Sigstore signing "
                "algorithm uses (P-256, P-384 and P-521 are)"
            )
        return key
    if isinstance(key, rsa.RSAPublicKey):
        if key.key_size not in RSA_SIZES:
            raise VerificationError(
                f"the signing key is RSA {key.key_size}; Sigstore's RSA schemes are 2048, 3072 "
                "and 4096 bits"
            )
        return key
    if isinstance(key, ed25519.Ed25519PublicKey):
        return key
    raise VerificationError(
        f"the signing key is a {type(key).__name__}, not an ECDSA, RSA or Ed25519 key"
    )


def describe(key: SigningKey) -> str:
    """A reader's name for the scheme, e.g. ``ECDSA P-384``."""
    if isinstance(key, ec.EllipticCurvePublicKey):
        return f"ECDSA {_CURVES[key.curve.name][1]}"
    if isinstance(key, rsa.RSAPublicKey):
        return f"RSA {key.key_size}"
    return "Ed25519"


def digest_algorithm(key: SigningKey) -> hashes.HashAlgorithm:
    """The hash a signature over a digest uses with this key (for Ed25519: what Rekor logs)."""
    if isinstance(key, ec.EllipticCurvePublicKey):
        return _CURVES[key.curve.name][0]()
    if isinstance(key, rsa.RSAPublicKey):
        return hashes.SHA256()
    return hashes.SHA512()


def key_details(key: SigningKey) -> set[str]:
    """The ``PublicKeyDetails`` names a Rekor v2 entry may give this key."""
    if isinstance(key, ec.EllipticCurvePublicKey):
        return {_CURVES[key.curve.name][2]}
    if isinstance(key, rsa.RSAPublicKey):
        return {
            f"PKIX_RSA_PKCS1V15_{key.key_size}_SHA256",
            f"PKIX_RSA_PSS_{key.key_size}_SHA256",
        }
    return {"PKIX_ED25519", "PKIX_ED25519_PH"}


def hash_named(name: str) -> hashes.HashAlgorithm | None:
    """The SHA-2 hash a protobuf ``HashAlgorithm`` names, if it is one a signature may use."""
    known: dict[str, hashes.HashAlgorithm] = {
        "SHA2_256": hashes.SHA256(),
        "SHA2_384": hashes.SHA384(),
        "SHA2_512": hashes.SHA512(),
    }
    return known.get(name)


def verify_digest(
    key: SigningKey,
    signature: bytes,
    digest: bytes,
    algorithm: hashes.HashAlgorithm | None = None,
) -> bool:
    """Whether ``signature`` signs ``digest``, hashed with ``algorithm`` (default: the key's)."""
    if isinstance(key, ed25519.Ed25519PublicKey):
        return False  # Ed25519 signs messages; Ed25519ph is not in cryptography
    algorithm = algorithm or digest_algorithm(key)
    if len(digest) != algorithm.digest_size:
        return False
    prehashed = utils.Prehashed(algorithm)
    if isinstance(key, ec.EllipticCurvePublicKey):
        return _ok(lambda: key.verify(signature, digest, ec.ECDSA(prehashed)))
    for scheme in _rsa_paddings(algorithm):
        if _ok(partial(key.verify, signature, digest, scheme, prehashed)):
            return True
    return False


def verify_message(key: SigningKey, signature: bytes, message: bytes) -> bool:
    """Whether ``signature`` signs ``message`` (DSSE PAE bytes, or an artifact for Ed25519)."""
    if isinstance(key, ed25519.Ed25519PublicKey):
        return _ok(lambda: key.verify(signature, message))
    candidates = [digest_algorithm(key)]
    if isinstance(key, ec.EllipticCurvePublicKey) and candidates[0].name != "sha256":
        candidates.append(hashes.SHA256())  # early clients hashed with SHA-256 on any curve
    for algorithm in candidates:
        hasher = hashes.Hash(algorithm)
        hasher.update(message)
        if verify_digest(key, signature, hasher.finalize(), algorithm):
            return True
    return False


def _rsa_paddings(algorithm: hashes.HashAlgorithm) -> list[padding.AsymmetricPadding]:
    return [
        padding.PKCS1v15(),
        padding.PSS(mgf=padding.MGF1(algorithm), salt_length=padding.PSS.AUTO),
    ]


def _ok(check: Callable[[], object]) -> bool:
    try:
        check()
    except (InvalidSignature, UnsupportedAlgorithm, ValueError):
        return False
    return True
