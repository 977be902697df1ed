"""Bundle verification: sigstore-python's building blocks, assembled to verify what clients sign.

Imported only by ``provenance.attest.sigstore`` inside the functions that verify, so that sigstore
loads only when a bundle is verified. sigstore-python 4.5 refuses or mis-verifies bundles that
sigstore-js, sigstore-java, sigstore-go or ``gh`` accept; prov keeps sigstore's parsers, chain
building, SCT, checkpoint, Merkle and SET checks, and does the rest itself:

* signatures by every scheme of the algorithm registry (``_signature_schemes``): ECDSA P-384 and
  P-521 with their own digests, RSA PKCS#1 v1.5 and PSS, Ed25519 -- upstream verifies P-256 only;
* log entries of each kind a client meets (``_log_entries``), Rekor v1 and v2;
* a v0.1 bundle needs its inclusion promise, not a proof (bundle.proto); a proof without a
  checkpoint is not counted;
* an instance without transparency or CT logs (GitHub's, for private repositories): its trusted
  root lists no ``tlogs``/``ctlogs`` and its bundles no log entry; time then comes from the
  signed timestamps. A trust root that names logs still requires an entry in every bundle;
* ``intoto/0.0.2`` entries' SET-bound integrated time counts like other Rekor v1 kinds;
* a TSA's validity period in the trusted root is a closed interval (protobuf-specs ``TimeRange``);
* every signed timestamp must verify (upstream skips one that does not), with the reason;
* bundles signed with a managed key (``verificationMaterial.publicKey``) verify against a key
  the caller trusts (``verify_with_key``);
* a certificate chain that carries a root CA is refused (the client spec says MUST), and so is a
  v0.3 bundle with an ``x509CertificateChain`` (v0.3 carries the leaf in ``certificate``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ed25519
from cryptography.x509 import (
    Certificate,
    ExtendedKeyUsage,
    ExtensionNotFound,
    KeyUsage,
    load_der_x509_certificate,
)
from cryptography.x509.oid import ExtendedKeyUsageOID
from rfc3161_client import TimeStampResponse, VerifierBuilder
from rfc3161_client import VerificationError as Rfc3161VerificationError
from sigstore import dsse
from sigstore._internal.merkle import verify_merkle_inclusion
from sigstore._internal.rekor.checkpoint import verify_checkpoint
from sigstore._internal.sct import verify_sct
from sigstore._internal.timestamp import TimestampSource, TimestampVerificationResult
from sigstore._internal.trust import KeyringPurpose
from sigstore._utils import cert_is_leaf, cert_is_root_ca
from sigstore.errors import MetadataError, VerificationError
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

from provenance.attest import _log_entries as entries
from provenance.attest import _signature_schemes as schemes
from provenance.attest._bundle_model import LenientBundle
from provenance.errors import VerificationError as ProvVerificationError

REKOR_V1_KINDS = {("dsse", "0.0.1"), ("hashedrekord", "0.0.1"), ("intoto", "0.0.2")}
V03 = {Bundle.BundleType.BUNDLE_0_3, Bundle.BundleType.BUNDLE_0_3_ALT}
MAX_TIMESTAMPS = 32
Artifact = bytes | Hashed


@dataclass(frozen=True)
class Loaded:
    """A parsed bundle and its log entry (none for a bundle from an instance without a log)."""

    bundle: Bundle
    entry: TransparencyLogEntry | None


@dataclass(frozen=True)
class Verified:
    """What a bundle proved: the DSSE content (if any) and the verified times."""

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
    """``sigstore.verify.Verifier`` with the additions listed in the module docstring."""

    def __init__(self, *, trusted_root: TrustedRoot) -> None:
        # Upstream's constructor insists on a transparency log, for online lookups prov never
        # makes; GitHub's instance has none.
        self._fulcio_certificate_chain = trusted_root.get_fulcio_certs()
        self._trusted_root = trusted_root

    # -- loading ---------------------------------------------------------------------------

    def load(self, raw: bytes) -> Loaded:
        """Parse a certificate bundle with the client spec's rules for each bundle version."""
        inner = _raw_bundle(raw)
        media_type = Bundle.BundleType(inner.media_type)
        material = inner.verification_material
        if media_type in V03:
            if material.x509_certificate_chain is not None:
                raise InvalidBundle(
                    "a v0.3 bundle carries its signing certificate in "
                    "verificationMaterial.certificate; x509CertificateChain is the v0.1/v0.2 "
                    "form (protobuf-specs bundle.proto), and sigstore-js and sigstore-python "
                    "refuse it too"
                )
            if material.certificate is None:
                raise InvalidBundle("expected certificate in bundle")
            leaf = load_der_x509_certificate(material.certificate.raw_bytes)
        else:
            chain = material.x509_certificate_chain
            if chain is None:
                raise InvalidBundle("expected certificate chain in bundle")
            if not chain.certificates:
                raise InvalidBundle("expected non-empty certificate chain in bundle")
            leaf = load_der_x509_certificate(chain.certificates[0].raw_bytes)
            if not cert_is_leaf(leaf):
                raise InvalidBundle(
                    "bundle contains an invalid leaf or non-leaf certificate in the leaf position"
                )
        entry = self._entry(inner, media_type)
        bundle = Bundle.__new__(Bundle)  # upstream's checks are the ones above, per version
        bundle._inner = inner
        bundle._signing_certificate = leaf
        if entry is not None:
            bundle._log_entry = entry
        return Loaded(bundle, entry)

    def _entry(
        self, inner: RawBundle, media_type: Bundle.BundleType
    ) -> TransparencyLogEntry | None:
        material = inner.verification_material
        tlog_entries = material.tlog_entries
        if len(tlog_entries) > 1:
            raise InvalidBundle("expected exactly one log entry in bundle")
        if not tlog_entries:
            if self._trusted_root._inner.tlogs:
                raise InvalidBundle(
                    "expected exactly one log entry in bundle, found none: the trust root "
                    "names transparency logs, and only an instance without one (GitHub's, for "
                    "private repositories) signs without a log entry"
                )
            return None
        raw_entry = tlog_entries[0]
        kind = raw_entry.kind_version
        if kind.version not in ("0.0.1", "0.0.2"):
            raise InvalidBundle(f"unsupported log entry version {kind.kind}/{kind.version}")
        entry = TransparencyLogEntry.__new__(TransparencyLogEntry)  # its check is per version
        entry._inner = raw_entry
        if media_type is Bundle.BundleType.BUNDLE_0_1:
            if not raw_entry.inclusion_promise:
                raise InvalidBundle("a v0.1 bundle must contain an inclusion promise")
            return entry
        if not _checkpoint(entry):
            raise InvalidBundle(
                "entry must contain inclusion proof, with checkpoint: from bundle v0.2 on, the "
                "log entry needs an inclusionProof whose checkpoint is signed"
            )
        stamped = material.timestamp_verification_data
        if not raw_entry.inclusion_promise and not (stamped and stamped.rfc3161_timestamps):
            raise InvalidBundle(
                "not enough sources of verified time: the bundle must contain an inclusion "
                "promise or signed timestamp(s)"
            )
        return entry

    # -- certificate bundles -----------------------------------------------------------------

    def verify_certificate_bundle(
        self, loaded: Loaded, policy: VerificationPolicy, artifact: Artifact | None
    ) -> Verified:
        """Verify a certificate bundle: time, chain, SCT, policy, log entry, signature."""
        times = self._verify_signing_certificate(loaded, policy)
        cert = loaded.bundle.signing_certificate
        key = schemes.signing_key(cert.public_key())
        return _verify_content(key, cert, loaded.bundle._inner, loaded.entry, artifact, times)

    def _verify_signing_certificate(
        self, loaded: Loaded, policy: VerificationPolicy
    ) -> list[TimestampVerificationResult]:
        """Upstream's steps (0)-(6), with the SCT and the log entry only where the instance
        has CT and transparency logs."""
        bundle, entry = loaded.bundle, loaded.entry
        cert = bundle.signing_certificate
        times = self._times(bundle._inner, bundle.signature, entry)
        if not times:
            raise VerificationError(
                "not enough sources of verified time: the bundle has no inclusion promise and "
                "no signed timestamp"
            )
        chain: list[Certificate] = []
        for verified in times:
            chain = self._verify_chain_at_time(cert, verified)
        if self._trusted_root._inner.ctlogs:
            try:
                verify_sct(cert, chain, self._trusted_root.ct_keyring(KeyringPurpose.VERIFY))
            except VerificationError as e:
                raise VerificationError(f"failed to verify SCT on signing certificate: {e}") from e
        try:
            usage = cert.extensions.get_extension_for_class(KeyUsage).value
            extended = cert.extensions.get_extension_for_class(ExtendedKeyUsage).value
        except ExtensionNotFound as e:
            raise VerificationError(f"the signing certificate lacks an extension: {e}") from e
        if not usage.digital_signature:
            raise VerificationError("Key usage is not of type `digital signature`")
        if ExtendedKeyUsageOID.CODE_SIGNING not in extended:
            raise VerificationError("Extended usage does not contain `code signing`")
        policy.verify(cert)
        if entry is not None:
            self._verify_log_entry(entry)
        for verified in times:
            if not cert.not_valid_before_utc <= verified.time <= cert.not_valid_after_utc:
                raise VerificationError(
                    f"invalid signing cert: expired at time of signing, time via {verified}"
                )
        return times

    def _verify_log_entry(self, entry: TransparencyLogEntry) -> None:
        """The inclusion proof and its checkpoint when present, and the promise when present."""
        try:
            keyring = self._trusted_root.rekor_keyring(KeyringPurpose.VERIFY)
        except MetadataError as e:
            raise VerificationError(
                "the bundle has a log entry but the trust root has no transparency log key"
            ) from e
        checked = False
        try:
            if _checkpoint(entry):
                verify_merkle_inclusion(entry)
                verify_checkpoint(keyring, entry)
                checked = True
            if entry._inner.inclusion_promise and entry._inner.integrated_time:
                entry._verify_set(keyring)
                checked = True
        except VerificationError as e:
            raise VerificationError(f"invalid log entry: {e}") from e
        if not checked:
            raise VerificationError(
                "invalid log entry: it has neither an inclusion proof with a checkpoint nor an "
                "inclusion promise to check"
            )

    # -- time --------------------------------------------------------------------------------

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

    def _times(
        self, inner: RawBundle, signature: bytes, entry: TransparencyLogEntry | None
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
            if len(responses) > MAX_TIMESTAMPS:
                raise VerificationError(f"too many signed timestamps: {len(responses)}")
            if len(set(responses)) != len(responses):
                raise VerificationError("duplicate timestamp found")
            for number, response in enumerate(responses, start=1):
                result = self._verify_signed_timestamp(response, signature)
                # Upstream skips a token that does not verify; a bundle carrying one has been
                # altered or assembled wrongly, and a reader would take its time for proven.
                if result is None:
                    raise VerificationError(_unverified_token(number, response, signature))
                times.append(result)
        if entry is None:
            return times
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

    # -- managed keys ------------------------------------------------------------------------

    def verify_with_key(
        self, raw: bytes, key: schemes.SigningKey, input_: Artifact | None
    ) -> Verified:
        """Verify a bundle whose verification material is a public key the caller trusts."""
        inner = _raw_bundle(raw)
        material = inner.verification_material
        if material.public_key is None:
            raise VerificationError(
                "the bundle is signed with a certificate, not a key: verify it with an "
                "identity and issuer"
            )
        entry = self._entry(inner, Bundle.BundleType(inner.media_type))
        if entry is None:
            raise InvalidBundle("expected exactly one log entry in bundle")
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
        self._verify_log_entry(entry)
        return _verify_content(key, key, inner, entry, input_, times)


def _raw_bundle(raw: bytes) -> RawBundle:
    try:
        inner = LenientBundle.from_json(raw)
    except ValueError as e:
        raise InvalidBundle(f"failed to load bundle: {e}") from e
    try:
        Bundle.BundleType(inner.media_type)
    except ValueError as e:
        raise InvalidBundle(f"unsupported bundle format: {inner.media_type}") from e
    return inner


def _checkpoint(entry: TransparencyLogEntry) -> bool:
    proof = entry._inner.inclusion_proof
    return proof is not None and proof.checkpoint is not None and bool(proof.checkpoint.envelope)


def _kind(entry: TransparencyLogEntry | None) -> tuple[str, str] | None:
    if entry is None:
        return None
    return (entry._inner.kind_version.kind, entry._inner.kind_version.version)


def _verify_content(
    key: schemes.SigningKey,
    signer: entries.Signer,
    inner: RawBundle,
    entry: TransparencyLogEntry | None,
    artifact: Artifact | None,
    times: list[TimestampVerificationResult],
) -> Verified:
    """The signature over the envelope or the artifact, and the log entry that records it."""
    kind = _kind(entry)
    body = entry._inner.canonicalized_body if entry is not None else b""
    if inner.dsse_envelope is not None:
        envelope = dsse.Envelope(inner.dsse_envelope)
        _verify_envelope(key, envelope)
        if kind is not None:
            entries.check_envelope_entry(
                kind,
                body,
                envelope._inner.payload_type,
                envelope._inner.payload,
                envelope.pae(),
                [s.sig for s in envelope._inner.signatures],
                signer,
            )
        return Verified(envelope._inner.payload_type, envelope._inner.payload, times)
    signature, digest, algorithm = _verify_message(key, inner, artifact)
    if kind is not None:
        entries.check_message_entry(kind, body, signature, digest, algorithm, signer)
    return Verified(None, None, times)


def _verify_envelope(key: schemes.SigningKey, envelope: dsse.Envelope) -> None:
    """The DSSE signature over PAE(payloadType, payload), by the key's own scheme."""
    if len(envelope._inner.signatures) != 1:
        raise VerificationError(
            f"DSSE: exactly 1 signature allowed, got {len(envelope._inner.signatures)}"
        )
    if not schemes.verify_message(key, envelope.signature, envelope.pae()):
        raise VerificationError(f"DSSE: invalid signature ({schemes.describe(key)} key)")


def _verify_message(
    key: schemes.SigningKey, inner: RawBundle, artifact: Artifact | None
) -> tuple[bytes, bytes, hashes.HashAlgorithm]:
    """A message signature over the artifact; returns (signature, digest, digest algorithm)."""
    message = inner.message_signature
    if message is None:
        raise VerificationError("Missing bundle message signature")
    if artifact is None:
        raise ProvVerificationError("a message-signature bundle needs the artifact to verify")
    documented = message.message_digest
    # The documented digest names the hash (a P-384 key of early sigstore-python signed SHA-256
    # digests); without one, the key's registry scheme does.
    algorithm = schemes.digest_algorithm(key)
    if documented is not None:
        named = schemes.hash_named(documented.algorithm.value)
        if named is None:
            raise VerificationError(
                f"Bundle message digest uses {documented.algorithm.value}, which no Sigstore "
                "signing algorithm uses"
            )
        algorithm = named
    expected = schemes.PROTOBUF_NAMES[algorithm.name]
    if isinstance(artifact, bytes):
        hasher = hashes.Hash(algorithm)
        hasher.update(artifact)
        digest = hasher.finalize()
    elif artifact.algorithm.value == expected:
        digest = artifact.digest
    else:
        raise ProvVerificationError(
            f"the bundle signs the artifact's {expected} digest ({schemes.describe(key)} key); "
            f"its {artifact.algorithm.value} digest cannot be checked against it",
            hint="name the artifact file rather than its digest",
        )
    if documented is not None and documented.digest != digest:
        raise VerificationError("Bundle message digest mismatch")
    if isinstance(key, ed25519.Ed25519PublicKey):
        if not isinstance(artifact, bytes):
            raise ProvVerificationError(
                "an Ed25519 signature covers the artifact itself, not a digest",
                hint="name the artifact file rather than its digest",
            )
        ok = schemes.verify_message(key, message.signature, artifact)
    else:
        ok = schemes.verify_digest(key, message.signature, digest, algorithm)
    if not ok:
        raise VerificationError(f"Signature is invalid for input ({schemes.describe(key)} key)")
    return message.signature, digest, algorithm


def _unverified_token(number: int, response: TimeStampResponse, signature: bytes) -> str:
    """Why a signed timestamp does not count, as precisely as the token lets us say."""
    imprint = response.tst_info.message_imprint
    digests = {"sha256": hashlib.sha256, "sha384": hashlib.sha384, "sha512": hashlib.sha512}
    oid_names = {
        "2.16.840.1.101.3.4.2.1": "sha256",
        "2.16.840.1.101.3.4.2.2": "sha384",
        "2.16.840.1.101.3.4.2.3": "sha512",
    }
    name = oid_names.get(imprint.hash_algorithm.dotted_string)
    if name is not None and digests[name](signature).digest() != imprint.message:
        return (
            f"not enough sources of verified time: signed timestamp #{number} covers another "
            "signature: its message imprint is not "
            f"the {name} of this bundle's signature (the bundle was assembled from parts of "
            "others, or altered)"
        )
    return (
        f"not enough sources of verified time: signed timestamp #{number} does not verify "
        "against the trust root's timestamp authorities"
    )
