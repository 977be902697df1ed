"""Self-signed certificate authorities for the local services (TLS server, TSA, Sigstore CA)."""

from __future__ import annotations

import datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

SIGNING_ONLY = x509.KeyUsage(
    digital_signature=True,
    content_commitment=False,
    key_encipherment=False,
    data_encipherment=False,
    key_agreement=False,
    key_cert_sign=False,
    crl_sign=False,
    encipher_only=False,
    decipher_only=False,
)
"""The key usage of a leaf that signs (a Fulcio code-signing or a TSA certificate)."""


def ca_certificate(
    key: ec.EllipticCurvePrivateKey,
    name: x509.Name,
    not_before: datetime.datetime,
    not_after: datetime.datetime,
    *,
    path_length: int = 0,
    digital_signature: bool = False,
    hash_algorithm: hashes.SHA256 | hashes.SHA384 | None = None,
) -> x509.Certificate:
    """A self-signed CA certificate: basic constraints, key usage and subject key id set."""
    usage = x509.KeyUsage(
        digital_signature=digital_signature,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=True,
        crl_sign=True,
        encipher_only=False,
        decipher_only=False,
    )
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=path_length), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hash_algorithm or hashes.SHA256())
    )
