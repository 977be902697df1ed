"""A throwaway certificate authority and server certificate, made at run time with cryptography.

A CA plus a leaf (rather than one self-signed leaf) keeps strict verifiers happy: the leaf has
CA:FALSE, a subjectAltName for localhost and 127.0.0.1, and key identifiers linking it to the CA.
"""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ServerCertificate:
    ca_file: Path
    """PEM of the CA: give it to a client as its trust anchor (``ca_bundle``, SSL_CERT_FILE)."""
    cert_file: Path
    key_file: Path
    cert_sha256: str
    """sha256 of the leaf certificate's DER bytes: what a client sees as the peer certificate."""


def make_certificate(
    directory: Path, hostnames: tuple[str, ...] = ("localhost",)
) -> ServerCertificate:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    from provenance._testing.certs import ca_certificate

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "prov test CA")])
    ca_cert = ca_certificate(
        ca_key,
        ca_name,
        now - datetime.timedelta(minutes=5),
        now + datetime.timedelta(days=2),
        digital_signature=True,
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(h) for h in hostnames]
    names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostnames[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    ca_file = directory / "ca.pem"
    cert_file = directory / "server.pem"
    key_file = directory / "server.key"
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_file.chmod(0o600)
    der = cert.public_bytes(serialization.Encoding.DER)
    return ServerCertificate(ca_file, cert_file, key_file, hashlib.sha256(der).hexdigest())
