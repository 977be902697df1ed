"""sigstore-python's ``Verifier``, completed where the Sigstore client spec asks for more.

Imported only by ``provenance.attest.sigstore`` inside the functions that verify, so that sigstore
loads only when a bundle is verified. sigstore-python 4.5 leaves four gaps that the
sigstore-conformance suite exercises; each override below names the one it fills:

* ``intoto/0.0.2`` Rekor v1 entries (bundles from older cosign/sigstore-js) are refused outright;
  we check the entry body against the envelope like sigstore-go does, and accept its SET-bound
  integrated time like that of every other Rekor v1 kind;
* a TSA's validity period in the trusted root is a closed interval (protobuf-specs ``TimeRange``),
  sigstore-python treats its end as exclusive;
* bundles signed with a managed key (``verificationMaterial.publicKey``, no certificate) cannot be
  loaded at all; ``verify_with_key`` verifies them against a key the caller trusts;
* a certificate chain that carries a root CA only warns; the client spec says clients MUST
  reject it.

Everything else (chain building, SCTs, checkpoints, inclusion proofs and promises, hashedrekord
and dsse entry consistency) is sigstore-python's own code.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils
from cryptography.x509 import Certificate, load_der_x509_certificate, load_pem_x509_certificate
from rfc3161_client import TimeStampResponse, VerifierBuilder
from rfc3161_client import VerificationError as Rfc3161VerificationError
from sigstore import dsse
from sigstore._internal.timestamp import TimestampSource, TimestampVerificationResult
from sigstore._internal.trust import KeyringPurpose
from sigstore._utils import cert_is_root_ca
from sigstore.errors import VerificationError
from sigstore.hashes import Hashed
from sigstore.models import (
    Bundle,
    InvalidBundle,
    TimestampVerificationData,
    TransparencyLogEntry,
    TrustedRoot,
)
from sigstore.verify import Verifier
from sigstore.verify.policy import VerificationPolicy
from sigstore_models.bundle.v1 import Bundle as RawBundle

REKOR_V1_KINDS = {("dsse", "0.0.1"), ("hashedrekord", "0.0.1"), ("intoto", "0.0.2")}


@dataclass(frozen=True)
class KeyVerified:
    """What a managed-key bundle proved: the DSSE content (if any) and the verified times."""

    payload_type: str | None
    payload: bytes | None
    times: list[TimestampVerificationResult]


def reject_unusable_material(raw: bytes) -> None:
    """Checks before parsing for certificate verification, for a precise reason on failure.

    A key-signed bundle cannot satisfy an identity policy; and client policy (protobuf-specs
    bundle.proto) says the certificate chain MUST NOT include a root CA.
    """
    try:
        material = json.loads(raw)["verificationMaterial"]
    except (ValueError, KeyError, TypeError):
        return  # malformed: the bundle parser reports it
    if isinstance(material, dict) and "publicKey" in material:
        raise VerificationError(
            "the bundle is signed with a managed key, not a certificate: an identity policy "
            "cannot hold; verify it with the public key"
        )
    reject_root_in_chain(raw)


def reject_root_in_chain(raw: bytes) -> None:
    """Client policy (protobuf-specs bundle.proto): the chain MUST NOT include a root CA."""
    try:
        document = json.loads(raw)
        chain = document["verificationMaterial"]["x509CertificateChain"]["certificates"]
    except (ValueError, KeyError, TypeError):
        return  # no chain, or malformed: the bundle parser reports it
    for entry in chain if isinstance(chain, list) else []:
        try:
            cert = load_der_x509_certificate(base64.b64decode(entry["rawBytes"]))
        except (ValueError, KeyError, TypeError, binascii.Error):
            return
        if cert_is_root_ca(cert):
            raise InvalidBundle(
                "the bundle's certificate chain contains a root CA "
                f"({cert.subject.rfc4514_string()}); roots come from the trusted root only"
            )


class ProvVerifier(Verifier):
    """``sigstore.verify.Verifier`` plus the gaps listed in the module docstring."""

    def __init__(self, *, trusted_root: TrustedRoot) -> None:
        super().__init__(trusted_root=trusted_root)

    def _verify_signed_timestamp(
        self, timestamp_response: TimeStampResponse, message: bytes
    ) -> TimestampVerificationResult | None:
        # Upstream's loop, with the validity period's end inclusive (TimeRange is closed).
        for authority in self._trusted_root.get_timestamp_authorities():
            certificates = authority.certificates(allow_expired=True)
            if len(certificates) < 2:
                continue
            builder = (
                VerifierBuilder()
                .tsa_certificate(certificates[0])
                .add_root_certificate(certificates[-1])
            )
            for certificate in certificates[1:-1]:
                builder = builder.add_intermediate_certificate(certificate)
            try:
                builder.build().verify_message(timestamp_response, message)
            except Rfc3161VerificationError:
                continue
            when = timestamp_response.tst_info.gen_time
            end = authority.validity_period_end
            if authority.validity_period_start <= when and (end is None or when <= end):
                return TimestampVerificationResult(
                    source=TimestampSource.TIMESTAMP_AUTHORITY, time=when
                )
        return None

    def _establish_time(self, bundle: Bundle) -> list[TimestampVerificationResult]:
        return self._times(bundle._inner, bundle.signature, bundle.log_entry)

    def _times(
        self, inner: RawBundle, signature: bytes, entry: TransparencyLogEntry
    ) -> list[TimestampVerificationResult]:
        times: list[TimestampVerificationResult] = []
        material = inner.verification_material
        if material.timestamp_verification_data and (
            material.timestamp_verification_data.rfc3161_timestamps
        ):
            if not self._trusted_root.get_timestamp_authorities():
                raise VerificationError(
                    "the bundle has a signed timestamp but the trusted root has no "
                    "timestamp authority to check it"
                )
            responses = TimestampVerificationData(
                material.timestamp_verification_data
            ).rfc3161_timestamps
            if len(responses) > 32:
                raise VerificationError(f"too many signed timestamps: {len(responses)}")
            if len(set(responses)) != len(responses):
                raise VerificationError("duplicate timestamp found")
            for number, response in enumerate(responses, start=1):
                result = self._verify_signed_timestamp(response, signature)
                # Upstream skips a token that does not verify; a bundle carrying one has been
                # altered or assembled wrongly, and a reader would take its time for proven.
                if result is None:
                    raise VerificationError(
                        f"not enough sources of verified time: signed timestamp #{number} does "
                        "not verify against the trust root's timestamp authorities"
                    )
                times.append(result)
        # A Rekor v1 integrated time counts only when the inclusion promise (SET) binds it; the
        # SET itself is verified with the rest of the entry.
        inner_entry = entry._inner
        if inner_entry.inclusion_promise and not inner_entry.integrated_time:
            # Upstream then skips the SET: an unchecked signature would ride along in the bundle.
            raise VerificationError(
                "the log entry has an inclusion promise but no integrated time to check it with"
            )
        if inner_entry.integrated_time and inner_entry.inclusion_promise:
            kind = (inner_entry.kind_version.kind, inner_entry.kind_version.version)
            if kind not in REKOR_V1_KINDS:
                raise VerificationError(
                    f"integrated time is not supported for {kind[0]}/{kind[1]} entries"
                )
            times.append(
                TimestampVerificationResult(
                    source=TimestampSource.TRANSPARENCY_SERVICE,
                    time=datetime.fromtimestamp(inner_entry.integrated_time, tz=UTC),
                )
            )
        return times

    def verify_dsse(self, bundle: Bundle, policy: VerificationPolicy) -> tuple[str, bytes]:
        kind = bundle.log_entry._inner.kind_version
        if (kind.kind, kind.version) != ("intoto", "0.0.2"):
            return super().verify_dsse(bundle, policy)
        self._verify_common_signing_cert(bundle, policy)
        envelope = bundle._dsse_envelope
        if envelope is None:
            raise VerificationError("the bundle has no DSSE envelope")
        key = cast(ec.EllipticCurvePublicKey, bundle.signing_certificate.public_key())
        dsse._verify(key, envelope)
        _check_intoto_v002_body(bundle)
        return envelope._inner.payload_type, envelope._inner.payload

    def verify_with_key(
        self, raw: bytes, key: ec.EllipticCurvePublicKey, input_: Hashed | None
    ) -> KeyVerified:
        """Verify a bundle whose verification material is a public key the caller trusts."""
        try:
            inner = RawBundle.from_json(raw)
        except ValueError as e:
            raise InvalidBundle(f"failed to load bundle: {e}") from e
        try:
            Bundle.BundleType(inner.media_type)
        except ValueError as e:
            raise InvalidBundle(f"unsupported bundle format: {inner.media_type}") from e
        material = inner.verification_material
        if material.public_key is None:
            raise VerificationError(
                "the bundle is signed with a certificate, not a key: verify it with an "
                "identity and issuer"
            )
        if len(material.tlog_entries) != 1:
            raise InvalidBundle("expected exactly one log entry in bundle")
        entry = TransparencyLogEntry(material.tlog_entries[0])
        envelope = dsse.Envelope(inner.dsse_envelope) if inner.dsse_envelope else None
        if envelope is not None:
            signature = envelope.signature
        elif inner.message_signature is not None:
            signature = inner.message_signature.signature
        else:
            raise InvalidBundle("the bundle has neither a message signature nor an envelope")

        times = self._times(inner, signature, entry)
        if not times:
            raise VerificationError("not enough sources of verified time")
        try:
            entry._verify(self._trusted_root.rekor_keyring(KeyringPurpose.VERIFY))
        except VerificationError as e:
            raise VerificationError(f"invalid log entry: {e}") from e

        if envelope is not None:
            dsse._verify(key, envelope)
            _check_dsse_body_with_key(entry, envelope, key)
            return KeyVerified(envelope._inner.payload_type, envelope._inner.payload, times)

        assert inner.message_signature is not None
        if input_ is None:
            raise VerificationError("a message-signature bundle needs the artifact to verify")
        documented = inner.message_signature.message_digest
        if documented is not None and documented.digest != input_.digest:
            raise VerificationError("Bundle message digest mismatch")
        try:
            key.verify(signature, input_.digest, ec.ECDSA(utils.Prehashed(hashes.SHA256())))
        except InvalidSignature as e:
            raise VerificationError("Signature is invalid for input") from e
        _check_hashedrekord_body_with_key(entry, signature, input_, key)
        return KeyVerified(None, None, times)


def _body(entry: TransparencyLogEntry) -> dict[str, Any]:
    try:
        body = json.loads(entry._inner.canonicalized_body)
    except ValueError as e:
        raise VerificationError(f"the log entry body is not JSON: {e}") from e
    if not isinstance(body, dict) or not isinstance(body.get("spec"), dict):
        raise VerificationError("the log entry body has no spec")
    return body


def _inconsistent(what: str) -> VerificationError:
    return VerificationError(f"transparency log entry is inconsistent with other materials: {what}")


def _same_key(encoded_pem_b64: Any, key: ec.EllipticCurvePublicKey) -> bool:
    try:
        logged = serialization.load_pem_public_key(base64.b64decode(encoded_pem_b64))
    except (ValueError, TypeError, binascii.Error):
        return False
    der = serialization.Encoding.DER
    spki = serialization.PublicFormat.SubjectPublicKeyInfo
    return logged.public_bytes(der, spki) == key.public_bytes(der, spki)


def _same_certificate(encoded_pem_b64: Any, cert: Certificate) -> bool:
    # Compared as DER: logs keep the PEM as submitted (line length, trailing newline vary).
    try:
        logged = load_pem_x509_certificate(base64.b64decode(encoded_pem_b64))
    except (ValueError, TypeError, binascii.Error):
        return False
    der = serialization.Encoding.DER
    return logged.public_bytes(der) == cert.public_bytes(der)


def _check_intoto_v002_body(bundle: Bundle) -> None:
    """intoto/0.0.2 (rekor pkg/types/intoto/v0.0.2): payloadHash + signatures + verifier.

    The entry keeps the envelope with each ``sig`` and ``payload`` base64-encoded once more than
    DSSE does; its envelope ``hash`` covers uncanonicalised JSON and cannot be recomputed.
    """
    envelope = bundle._dsse_envelope
    assert envelope is not None
    content = _body(bundle.log_entry)["spec"].get("content")
    if not isinstance(content, dict):
        raise _inconsistent("the intoto entry has no content")
    payload_hash = content.get("payloadHash") or {}
    if payload_hash.get("algorithm") != "sha256":
        raise _inconsistent("expected a sha256 payloadHash in the intoto entry")
    if payload_hash.get("value") != hashlib.sha256(envelope._inner.payload).hexdigest():
        raise _inconsistent("the intoto entry's payloadHash does not match the envelope")
    logged = content.get("envelope") or {}
    if logged.get("payloadType", envelope._inner.payload_type) != envelope._inner.payload_type:
        raise _inconsistent("the intoto entry's payloadType differs from the envelope's")
    if "payload" in logged and _b64(_b64(logged["payload"])) != envelope._inner.payload:
        raise _inconsistent("the intoto entry's payload differs from the envelope's")
    signatures = logged.get("signatures")
    if not isinstance(signatures, list) or len(signatures) != len(envelope._inner.signatures):
        raise _inconsistent("the intoto entry's signatures differ from the envelope's")
    for logged_sig, ours in zip(signatures, envelope._inner.signatures, strict=True):
        if not isinstance(logged_sig, dict) or _b64(_b64(logged_sig.get("sig"))) != ours.sig:
            raise _inconsistent("the intoto entry's signatures differ from the envelope's")
        if not _same_certificate(logged_sig.get("publicKey"), bundle.signing_certificate):
            raise _inconsistent("the intoto entry was logged with another certificate")


def _check_dsse_body_with_key(
    entry: TransparencyLogEntry, envelope: dsse.Envelope, key: ec.EllipticCurvePublicKey
) -> None:
    kind = (entry._inner.kind_version.kind, entry._inner.kind_version.version)
    spec = _body(entry)["spec"]
    if kind != ("dsse", "0.0.1"):
        raise VerificationError(f"unsupported log entry type for a keyed DSSE bundle: {kind}")
    payload_hash = spec.get("payloadHash") or {}
    if payload_hash.get("value") != hashlib.sha256(envelope._inner.payload).hexdigest():
        raise VerificationError("log entry payload hash does not match bundle")
    logged = spec.get("signatures")
    if not isinstance(logged, list) or len(logged) != len(envelope._inner.signatures):
        raise VerificationError("log entry signatures do not match bundle")
    for logged_sig, ours in zip(logged, envelope._inner.signatures, strict=True):
        if _b64(logged_sig.get("signature")) != ours.sig or not _same_key(
            logged_sig.get("verifier"), key
        ):
            raise VerificationError("log entry signatures do not match bundle")


def _check_hashedrekord_body_with_key(
    entry: TransparencyLogEntry,
    signature: bytes,
    input_: Hashed,
    key: ec.EllipticCurvePublicKey,
) -> None:
    kind = (entry._inner.kind_version.kind, entry._inner.kind_version.version)
    spec = _body(entry)["spec"]
    if kind == ("hashedrekord", "0.0.1"):
        data = (spec.get("data") or {}).get("hash") or {}
        logged_sig = spec.get("signature") or {}
        ok = (
            data.get("algorithm") == "sha256"
            and data.get("value") == input_.digest.hex()
            and _b64(logged_sig.get("content")) == signature
            and _same_key((logged_sig.get("publicKey") or {}).get("content"), key)
        )
    elif kind == ("hashedrekord", "0.0.2"):
        body = spec.get("hashedRekordV002") or {}
        data = body.get("data") or {}
        logged_sig = body.get("signature") or {}
        raw_key = ((logged_sig.get("verifier") or {}).get("publicKey") or {}).get("rawBytes")
        der = key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        ok = (
            _b64(data.get("digest")) == input_.digest
            and _b64(logged_sig.get("content")) == signature
            and _b64(raw_key) == der
        )
    else:
        raise VerificationError(f"Expected entry type hashedrekord, got {kind[0]}/{kind[1]}")
    if not ok:
        raise _inconsistent(f"the {kind[0]}/{kind[1]} entry is not for this signature and key")


def _b64(value: Any) -> bytes:
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    if not isinstance(value, str):
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""
