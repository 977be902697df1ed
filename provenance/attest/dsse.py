"""DSSE envelopes (https://github.com/secure-systems-lab/dsse, protocol v1).

Signatures are over PAE(payloadType, payload), never over the payload alone. The envelope keeps
the payload as the exact bytes that were signed; nothing here re-serialises it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from provenance._internal import strictjson
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


_WHITESPACE = str.maketrans("", "", " \t\r\n")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*")
_SPACE = re.compile(r"[ \t\r\n]")
_FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")
_TO_URLSAFE = bytes.maketrans(b"+/", b"-_")


def _b64(value: Any, field: str) -> bytes:
    """Decode standard or URL-safe base64, with or without padding (DSSE: accept either).

    Line breaks and spaces are ignored (wrapped base64 is still the same bytes). What is not a
    valid spelling of any bytes is refused: wrong or excess padding, and non-zero padding bits
    (RFC 4648 section 3.5), which would let one envelope be re-spelled into many that verify.
    """
    if not isinstance(value, str):
        raise VerificationError(f"envelope field {field!r} is not a base64 string")
    # str.translate costs more than the signature check's overhead itself: only when needed.
    text = value.translate(_WHITESPACE) if _SPACE.search(value) else value
    urlsafe = "-" in text or "_" in text
    if urlsafe and ("+" in text or "/" in text):
        raise VerificationError(f"envelope field {field!r} mixes base64 alphabets")
    data = text.rstrip("=")
    if not _BASE64.fullmatch(data):
        raise VerificationError(
            f"envelope field {field!r} is not valid base64",
            cause="it holds a character outside the base64 alphabet",
        )
    missing = -len(data) % 4
    if len(text) != len(data) and len(text) - len(data) != missing:
        raise VerificationError(f"envelope field {field!r} has wrong base64 padding")
    # binascii directly: base64.b64decode would check the alphabet again with its own regex.
    standard = (data + "=" * missing).encode()
    if urlsafe:
        standard = standard.translate(_FROM_URLSAFE)
    try:
        raw = binascii.a2b_base64(standard, strict_mode=True)
    except (binascii.Error, ValueError) as e:
        raise VerificationError(
            f"envelope field {field!r} is not valid base64", cause=str(e)
        ) from e
    again = binascii.b2a_base64(raw, newline=False)
    if urlsafe:
        again = again.translate(_TO_URLSAFE)
    if again.rstrip(b"=") != data.encode():
        raise VerificationError(f"envelope field {field!r} has non-zero base64 padding bits")
    return raw


def _text(value: str, field: str) -> str:
    # JSON can spell lone UTF-16 surrogates ("\ud800"); PAE needs UTF-8, which cannot hold them.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise VerificationError(f"envelope field {field!r} is not valid Unicode") from e
    return value


def parse(data: bytes | str, origin: str = "envelope") -> Envelope:
    """Parse one DSSE envelope (JSON object). Raises VerificationError on any malformation."""
    try:
        document = strictjson.loads(data)
    except strictjson.RepeatedKey as e:
        # Two parsers reading {"payload": A, "payload": B} may pick different values: refuse it.
        raise VerificationError(f"the envelope repeats the key {e.key!r}") from e
    except strictjson.NotUTF8 as e:
        raise VerificationError(f"{origin} is not UTF-8 JSON", cause=str(e)) from e
    except strictjson.TooDeep as e:
        raise VerificationError(f"{origin} nests JSON too deeply to be an envelope") from e
    except strictjson.JSONError as e:
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
        signatures.append(
            Signature(_text(keyid, "keyid"), _b64(entry.get("sig"), f"signatures[{index}].sig"))
        )
    return Envelope(payload, _text(document["payloadType"], "payloadType"), tuple(signatures))


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
