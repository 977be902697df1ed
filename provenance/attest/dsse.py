"""DSSE envelopes (https://github.com/secure-systems-lab/dsse, protocol v1).

Signatures are over PAE(payloadType, payload), never over the payload alone. The envelope keeps
the payload as the exact bytes that were signed; nothing here re-serialises it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from provenance.errors import VerificationError


class Signer(Protocol):
    @property
    def keyid(self) -> str: ...

    def sign(self, data: bytes) -> bytes: ...


class Verifier(Protocol):
    @property
    def keyid(self) -> str: ...

    @property
    def source(self) -> str: ...

    def verify(self, signature: bytes, data: bytes) -> bool: ...


def pae(payload_type: str, payload: bytes) -> bytes:
    """Pre-Authentication Encoding: ``DSSEv1 SP len(type) SP type SP len(body) SP body``."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)


@dataclass(frozen=True)
class Signature:
    keyid: str
    sig: bytes


@dataclass(frozen=True)
class Envelope:
    payload: bytes
    payload_type: str
    signatures: tuple[Signature, ...]

    def to_json(self) -> bytes:
        """One line of JSON, as ``*.intoto.jsonl`` files hold."""
        document = {
            "payload": base64.b64encode(self.payload).decode(),
            "payloadType": self.payload_type,
            "signatures": [
                {"keyid": s.keyid, "sig": base64.b64encode(s.sig).decode()} for s in self.signatures
            ],
        }
        return json.dumps(document, separators=(",", ":")).encode()


def sign(payload_type: str, payload: bytes, signers: Sequence[Signer]) -> Envelope:
    message = pae(payload_type, payload)
    return Envelope(
        payload, payload_type, tuple(Signature(s.keyid, s.sign(message)) for s in signers)
    )


def _b64(value: Any, field: str) -> bytes:
    """Decode standard or URL-safe base64, with or without padding (DSSE: accept either)."""
    if not isinstance(value, str):
        raise VerificationError(f"envelope field {field!r} is not a base64 string")
    text = "".join(value.split())
    urlsafe = "-" in text or "_" in text
    if urlsafe and ("+" in text or "/" in text):
        raise VerificationError(f"envelope field {field!r} mixes base64 alphabets")
    alphabet = "-_" if urlsafe else "+/"
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, altchars=alphabet.encode(), validate=True)
    except (binascii.Error, ValueError) as e:
        raise VerificationError(
            f"envelope field {field!r} is not valid base64", cause=str(e)
        ) from e


def parse(data: bytes, origin: str = "envelope") -> Envelope:
    """Parse one DSSE envelope (JSON object). Raises VerificationError on any malformation."""
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise VerificationError(
            f"{origin} is not JSON",
            cause=str(e),
            hint="the file may be truncated or not an attestation; fetch it again",
        ) from e
    if not isinstance(document, dict):
        raise VerificationError(f"{origin} is not a JSON object")
    unknown = set(document) - {"payload", "payloadType", "signatures"}
    if unknown:
        raise VerificationError(f"{origin} has unknown fields: {', '.join(sorted(unknown))}")
    if not isinstance(document.get("payloadType"), str):
        raise VerificationError(f"{origin} has no payloadType")
    payload = _b64(document.get("payload"), "payload")
    signatures_raw = document.get("signatures")
    if not isinstance(signatures_raw, list):
        raise VerificationError(f"{origin} has no signatures list")
    signatures = []
    for index, entry in enumerate(signatures_raw):
        if not isinstance(entry, dict) or set(entry) - {"keyid", "sig"}:
            raise VerificationError(f"{origin}: signature #{index + 1} is malformed")
        keyid = entry.get("keyid", "")
        if not isinstance(keyid, str):
            raise VerificationError(f"{origin}: signature #{index + 1} has a non-string keyid")
        signatures.append(Signature(keyid, _b64(entry.get("sig"), f"signatures[{index}].sig")))
    return Envelope(payload, document["payloadType"], tuple(signatures))


@dataclass(frozen=True)
class SignatureCheck:
    index: int
    keyid: str
    verified_by: str | None  # the trusted key's source, or None


def verify(envelope: Envelope, keys: Sequence[Verifier], threshold: int) -> list[SignatureCheck]:
    """Check signatures over the PAE bytes; raise unless ``threshold`` distinct keys verified.

    The keyid on a signature is only a hint: a signature counts for the key that actually verifies
    it, and each trusted key counts once however many signatures it made.
    """
    if threshold < 1:
        raise VerificationError("the threshold must be at least 1")
    if not keys:
        raise VerificationError(
            "no trusted keys were given", hint="pass --key PUB for every key you trust"
        )
    if not envelope.signatures:
        raise VerificationError(
            "the envelope has no signatures", hint="it was written with --no-sign"
        )
    message = pae(envelope.payload_type, envelope.payload)
    checks: list[SignatureCheck] = []
    verified: set[str] = set()
    for index, signature in enumerate(envelope.signatures):
        by = None
        for key in sorted(keys, key=lambda k: k.keyid != signature.keyid):
            if signature.sig and key.verify(signature.sig, message):
                by = key
                break
        checks.append(SignatureCheck(index, signature.keyid, by.source if by else None))
        if by is not None:
            verified.add(by.keyid)
    if len(verified) < threshold:
        failed = [c for c in checks if c.verified_by is None]
        detail = f"{len(verified)} distinct trusted key(s) verified, {threshold} required"
        if failed:
            detail += f"; {len(failed)} signature(s) not made by any trusted key"
        duplicates = len(checks) - len(failed) - len(verified)
        if duplicates:
            detail += f"; {duplicates} repeated signature(s) by an already counted key"
        raise VerificationError(
            f"signature check failed: {detail}",
            hint="pass the public key of each signer with --key, or lower --threshold",
        )
    return checks
