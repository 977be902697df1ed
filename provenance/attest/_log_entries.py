"""Whether a transparency log entry records this bundle's signature, by key and content.

A log entry proves inclusion of its own body; only comparing that body with the bundle ties the
proof to the signature (CVE-2022-36056). One checker per entry kind a Sigstore client meets:
Rekor v1 ``hashedrekord/0.0.1``, ``dsse/0.0.1`` and ``intoto/0.0.2``; Rekor v2
``hashedrekord/0.0.2`` (message signatures, and DSSE envelopes logged as a signature over the
PAE digest, rekor-v2-spec 6.1.4) and ``dsse/0.0.2``. The digest algorithm follows the key
(``_signature_schemes``), so P-384, P-521 and RSA entries check like P-256 ones.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import Certificate, load_der_x509_certificate, load_pem_x509_certificate

from provenance.attest import _signature_schemes as schemes
from provenance.errors import VerificationError

Signer = Certificate | schemes.SigningKey


def inconsistent(what: str) -> VerificationError:
    return VerificationError(f"transparency log entry is inconsistent with other materials: {what}")


def check_message_entry(
    kind: tuple[str, str],
    body: bytes,
    signature: bytes,
    digest: bytes,
    algorithm: hashes.HashAlgorithm,
    signer: Signer,
) -> None:
    """A message signature's entry: ``hashedrekord`` over the artifact digest."""
    spec = _spec(body)
    if kind == ("hashedrekord", "0.0.1"):
        data = (spec.get("data") or {}).get("hash") or {}
        logged = spec.get("signature") or {}
        ok = (
            data.get("algorithm") == algorithm.name
            and data.get("value") == digest.hex()
            and _b64(logged.get("content")) == signature
            and _same_signer(_b64((logged.get("publicKey") or {}).get("content")), signer)
        )
    elif kind == ("hashedrekord", "0.0.2"):
        ok = _hashedrekord_v002(spec, signature, digest, algorithm, signer)
    else:
        raise VerificationError(f"Expected entry type hashedrekord, got {kind[0]}/{kind[1]}")
    if not ok:
        raise inconsistent(f"the {kind[0]}/{kind[1]} entry is not for this signature and key")


def check_envelope_entry(
    kind: tuple[str, str],
    body: bytes,
    payload_type: str,
    payload: bytes,
    pae: bytes,
    signatures: list[bytes],
    signer: Signer,
) -> None:
    """A DSSE envelope's entry, in each of the forms Rekor v1 and v2 log one."""
    spec = _spec(body)
    if kind == ("dsse", "0.0.1"):
        if (spec.get("payloadHash") or {}).get("value") != hashlib.sha256(payload).hexdigest():
            raise VerificationError("log entry payload hash does not match bundle")
        logged = spec.get("signatures")
        if (
            not isinstance(logged, list)
            or len(logged) != len(signatures)
            or not all(
                isinstance(entry, dict)
                and _b64(entry.get("signature")) == ours
                and _same_signer(_b64(entry.get("verifier")), signer)
                for entry, ours in zip(logged, signatures, strict=False)
            )
        ):
            raise VerificationError("log entry signatures do not match bundle")
    elif kind == ("dsse", "0.0.2"):
        v2 = spec.get("dsseV002") or {}
        payload_hash = v2.get("payloadHash") or {}
        if (
            payload_hash.get("algorithm") != "SHA2_256"
            or _b64(payload_hash.get("digest")) != hashlib.sha256(payload).digest()
        ):
            raise VerificationError("log entry payload hash does not match bundle")
        logged = v2.get("signatures")
        if (
            not isinstance(logged, list)
            or len(logged) != len(signatures)
            or not all(
                isinstance(entry, dict) and _v2_signature(entry, ours, signer)
                for entry, ours in zip(logged, signatures, strict=False)
            )
        ):
            raise VerificationError("log entry signatures do not match bundle")
    elif kind == ("hashedrekord", "0.0.2"):
        if len(signatures) != 1:
            raise inconsistent("a hashedrekord entry logs one signature")
        algorithm = schemes.digest_algorithm(_key(signer))
        hasher = hashes.Hash(algorithm)
        hasher.update(pae)
        if not _hashedrekord_v002(spec, signatures[0], hasher.finalize(), algorithm, signer):
            raise inconsistent("the hashedrekord/0.0.2 entry is not for this envelope and key")
    elif kind == ("intoto", "0.0.2"):
        _intoto_v002(spec, payload_type, payload, signatures, signer)
    else:
        raise VerificationError(f"Unsupported DSSE log entry type: {kind[0]}/{kind[1]}")


def _hashedrekord_v002(
    spec: dict[str, Any],
    signature: bytes,
    digest: bytes,
    algorithm: hashes.HashAlgorithm,
    signer: Signer,
) -> bool:
    v2 = spec.get("hashedRekordV002") or {}
    data = v2.get("data") or {}
    return (
        data.get("algorithm") == schemes.PROTOBUF_NAMES.get(algorithm.name)
        and _b64(data.get("digest")) == digest
        and isinstance(v2.get("signature"), dict)
        and _v2_signature(v2["signature"], signature, signer)
    )


def _v2_signature(logged: dict[str, Any], signature: bytes, signer: Signer) -> bool:
    verifier = logged.get("verifier") or {}
    if verifier.get("keyDetails") not in schemes.key_details(_key(signer)):
        return False
    if isinstance(signer, Certificate):
        raw = _b64((verifier.get("x509Certificate") or {}).get("rawBytes"))
        same = raw == signer.public_bytes(serialization.Encoding.DER)
    else:
        raw = _b64((verifier.get("publicKey") or {}).get("rawBytes"))
        same = raw == _spki(signer)
    return same and _b64(logged.get("content")) == signature


def _intoto_v002(
    spec: dict[str, Any],
    payload_type: str,
    payload: bytes,
    signatures: list[bytes],
    signer: Signer,
) -> None:
    """intoto/0.0.2 (rekor pkg/types/intoto/v0.0.2): payloadHash + signatures + verifier.

    The entry keeps the envelope with each ``sig`` and ``payload`` base64-encoded once more than
    DSSE does; its envelope ``hash`` covers uncanonicalised JSON and cannot be recomputed.
    """
    content = spec.get("content")
    if not isinstance(content, dict):
        raise inconsistent("the intoto entry has no content")
    payload_hash = content.get("payloadHash") or {}
    if payload_hash.get("algorithm") != "sha256":
        raise inconsistent("expected a sha256 payloadHash in the intoto entry")
    if payload_hash.get("value") != hashlib.sha256(payload).hexdigest():
        raise inconsistent("the intoto entry's payloadHash does not match the envelope")
    logged = content.get("envelope") or {}
    if logged.get("payloadType", payload_type) != payload_type:
        raise inconsistent("the intoto entry's payloadType differs from the envelope's")
    if "payload" in logged and _b64(_b64(logged["payload"])) != payload:
        raise inconsistent("the intoto entry's payload differs from the envelope's")
    entries = logged.get("signatures")
    if not isinstance(entries, list) or len(entries) != len(signatures):
        raise inconsistent("the intoto entry's signatures differ from the envelope's")
    for entry, ours in zip(entries, signatures, strict=True):
        if not isinstance(entry, dict) or _b64(_b64(entry.get("sig"))) != ours:
            raise inconsistent("the intoto entry's signatures differ from the envelope's")
        if not _same_signer(_b64(entry.get("publicKey")), signer):
            raise inconsistent("the intoto entry was logged with another certificate")


def _spec(body: bytes) -> dict[str, Any]:
    try:
        document = json.loads(body)
    except ValueError as e:
        raise VerificationError(f"the log entry body is not JSON: {e}") from e
    if not isinstance(document, dict) or not isinstance(document.get("spec"), dict):
        raise VerificationError("the log entry body has no spec")
    spec: dict[str, Any] = document["spec"]
    return spec


def _key(signer: Signer) -> schemes.SigningKey:
    if isinstance(signer, Certificate):
        return schemes.signing_key(signer.public_key())
    return signer


def _spki(key: schemes.SigningKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _same_signer(pem: bytes, signer: Signer) -> bool:
    """Whether the PEM a v1 entry logged is this certificate or key (compared as DER: logs keep
    the PEM as submitted, with its own line length and trailing newline)."""
    if isinstance(signer, Certificate):
        try:
            logged = load_pem_x509_certificate(pem)
        except ValueError:
            try:
                logged = load_der_x509_certificate(pem)
            except ValueError:
                return False
        der = serialization.Encoding.DER
        return logged.public_bytes(der) == signer.public_bytes(der)
    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError):
        return False
    der, spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    return key.public_bytes(der, spki) == _spki(signer)


def _b64(value: Any) -> bytes:
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""
