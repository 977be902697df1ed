"""RFC 3161 trusted timestamps over an attestation's signature (the ``time-anchored`` claim).

A token's message imprint is the sha256 of the signature bytes, as Sigstore does for bundles:
it shows the signature, hence the signed statement, existed no later than the token's time.
Where a token is kept:

* a Sigstore bundle: appended to ``verificationMaterial.timestampVerificationData``;
* a DSSE ``*.intoto.jsonl``: a sidecar file ``<attestation>.tsr`` holding the DER
  TimeStampResp, which ``openssl ts -verify`` reads as well.

Verification needs the TSA's certificate chain (``--tsa-certs``, a PEM file: the TSA certificate,
any intermediates and the root), never anything fetched at verify time.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from provenance.errors import InputError, TimestampError, UsageError, VerificationError

if TYPE_CHECKING:
    import httpx
    from cryptography import x509

SIDECAR_SUFFIX = ".tsr"
QUERY_TYPE = "application/timestamp-query"
_IMPRINT_HASHES = {
    "2.16.840.1.101.3.4.2.1": "sha256",
    "2.16.840.1.101.3.4.2.2": "sha384",
    "2.16.840.1.101.3.4.2.3": "sha512",
}
REPLY_TYPE = "application/timestamp-reply"


def sidecar_path(attestation: Path) -> Path:
    return attestation.with_name(attestation.name + SIDECAR_SUFFIX)


@dataclass(frozen=True)
class TsaTrust:
    """The chain a token must verify against: the TSA certificate, intermediates, roots."""

    source: str
    tsa: x509.Certificate
    intermediates: tuple[x509.Certificate, ...]
    roots: tuple[x509.Certificate, ...]

    @classmethod
    def from_pem(cls, path: Path) -> TsaTrust:
        from cryptography import x509

        try:
            certificates = x509.load_pem_x509_certificates(path.read_bytes())
        except FileNotFoundError as e:
            raise InputError(f"TSA certificate file {path} does not exist") from e
        except ValueError as e:
            raise UsageError(f"{path} is not a PEM certificate chain", cause=str(e)) from e
        roots = tuple(c for c in certificates if c.issuer == c.subject)
        leaves = [c for c in certificates if _is_timestamping(c) and c not in roots]
        if len(leaves) != 1 or not roots:
            raise UsageError(
                f"{path} must hold one TSA certificate (timeStamping usage) and its root",
                cause=f"found {len(leaves)} TSA certificate(s) and {len(roots)} root(s)",
            )
        intermediates = tuple(c for c in certificates if c not in roots and c is not leaves[0])
        return cls(str(path), leaves[0], intermediates, roots)


def _is_timestamping(certificate: x509.Certificate) -> bool:
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    try:
        usage = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return False
    return ExtendedKeyUsageOID.TIME_STAMPING in usage


@dataclass(frozen=True)
class Timestamp:
    """A verified token: when, by whom, over which signature."""

    time: datetime
    tsa: str
    serial: int
    imprint: str  # hex digest of the signature it covers

    def describe(self) -> str:
        return f"{self.time.isoformat()} by {self.tsa} (serial {self.serial})"


def request(
    url: str,
    signature: bytes,
    *,
    client: httpx.Client | None = None,
    timeout: float = 30.0,
) -> bytes:
    """Ask the TSA at ``url`` for a token over ``signature``; return the DER TimeStampResp."""
    import httpx
    from rfc3161_client import (
        HashAlgorithm,
        PKIStatus,
        TimestampRequestBuilder,
        decode_timestamp_response,
    )

    from provenance._internal import redact

    # No certificates in the reply: verification always uses the chain the verifier trusts, and
    # TSAs built on OpenSSL order a multi-certificate SET as BER allows but DER (and
    # rfc3161-client) does not.
    built = (
        TimestampRequestBuilder()
        .data(signature)
        .hash_algorithm(HashAlgorithm.SHA256)
        .nonce(nonce=True)
        .cert_request(cert_request=False)
        .build()
    )
    own = client is None
    http = client or httpx.Client(timeout=timeout)
    where = redact.url(url)
    try:
        response = http.post(url, content=built.as_bytes(), headers={"Content-Type": QUERY_TYPE})
    except httpx.HTTPError as e:
        raise TimestampError(
            f"the timestamp authority {where} could not be reached",
            cause=str(e),
            hint="check the URL and the network; --timestamp is optional",
        ) from e
    finally:
        if own:
            http.close()
    if response.status_code != 200:
        raise TimestampError(
            f"the timestamp authority {where} answered HTTP {response.status_code}",
            cause=response.text[:200],
        )
    try:
        reply = decode_timestamp_response(response.content)
    except ValueError as e:
        raise TimestampError(f"{where} did not return a timestamp response", cause=str(e)) from e
    if PKIStatus(reply.status) not in (PKIStatus.GRANTED, PKIStatus.GRANTED_WITH_MODS):
        raise TimestampError(
            f"the timestamp authority {where} refused the request",
            cause=" ".join(reply.status_string) or f"PKIStatus {reply.status}",
        )
    if reply.tst_info.nonce != built.nonce:
        raise TimestampError(f"{where} answered with another request's nonce")
    if reply.tst_info.message_imprint.message != hashlib.sha256(signature).digest():
        raise TimestampError(f"{where} timestamped something other than the signature")
    return response.content


def verify(token: bytes, signatures: list[bytes], trust: TsaTrust) -> tuple[Timestamp, int]:
    """Verify a token against the TSA chain and a signature it must cover.

    Returns the timestamp and the index of the signature it covers, or raises
    VerificationError saying which check failed: parse, imprint, or chain.
    """
    from rfc3161_client import VerificationError as TokenError
    from rfc3161_client import VerifierBuilder, decode_timestamp_response

    try:
        reply = decode_timestamp_response(token)
    except ValueError as e:
        raise VerificationError(
            "the timestamp token is corrupt: it does not parse as an RFC 3161 response",
            cause=str(e),
            hint="the .tsr file or the bundle's timestamp was altered or truncated",
        ) from e
    imprint = reply.tst_info.message_imprint.message
    algorithm = _IMPRINT_HASHES.get(reply.tst_info.message_imprint.hash_algorithm.dotted_string)
    if algorithm is None:
        raise VerificationError("the timestamp token uses an unsupported imprint hash")
    covered = [i for i, s in enumerate(signatures) if hashlib.new(algorithm, s).digest() == imprint]
    if not covered:
        raise VerificationError(
            "the timestamp token is over a different signature than this attestation's",
            cause=f"token imprint sha256 {imprint.hex()}",
            hint="the token belongs to another attestation",
        )
    builder = VerifierBuilder().tsa_certificate(trust.tsa)
    for root in trust.roots:
        builder = builder.add_root_certificate(root)
    for intermediate in trust.intermediates:
        builder = builder.add_intermediate_certificate(intermediate)
    try:
        builder.build().verify_message(reply, signatures[covered[0]])
    except TokenError as e:
        if "signer certificate not found" in str(e):
            raise VerificationError(
                f"the timestamp token was issued by another TSA than the one in {trust.source}",
                cause=str(e),
                hint="pass the chain of the TSA that issued it, if you trust that TSA",
            ) from e
        raise VerificationError(
            f"the timestamp token's signature does not verify with the TSA in {trust.source}",
            cause=str(e),
            hint="the token was altered after the TSA signed it",
        ) from e
    stamp = Timestamp(
        time=reply.tst_info.gen_time,
        tsa=trust.tsa.subject.rfc4514_string(),
        serial=reply.tst_info.serial_number,
        imprint=imprint.hex(),
    )
    return stamp, covered[0]


def stamp_dsse(attestation: Path, url: str, *, client: httpx.Client | None = None) -> Path:
    """Timestamp a DSSE attestation's first signature; write the token to its ``.tsr`` sidecar."""
    from provenance._internal.files import atomic_write
    from provenance.attest.envelope import read_envelope

    envelope = read_envelope(attestation)
    if not envelope.signatures:
        raise UsageError(f"{attestation} is unsigned: there is no signature to timestamp")
    token = request(url, envelope.signatures[0].sig, client=client)
    target = sidecar_path(attestation)
    if not atomic_write(target, token):
        raise UsageError(f"{target} already exists; nothing was replaced")
    return target
