"""Checking a capture's ``tls-bound`` claim against the certificate chain it recorded.

An https capture records the chain the server presented and the client verified
(``data.tls.chain_pem``, leaf first), each certificate's sha256, the peer certificate's sha256
and the negotiated protocol. ``tls-bound`` holds when: the leaf is the peer certificate recorded,
each certificate is issued and signed by the next, every one was valid when the capture started,
and the leaf names the host that was asked. That binds the exchange to the host name at that
time; it does not make the body the server's word (TLS gives no non-repudiation), and the root
at the end is not checked against anyone's trust store here.
"""

from __future__ import annotations

import hashlib
import ipaddress
import itertools
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from provenance.errors import VerificationError
from provenance.model import Capture

__all__ = ["check"]


def _host(capture: Capture) -> str | None:
    for where, key in (
        (capture.data, "final_url"),
        (capture.data, "url"),
        (capture.request, "url"),
        (capture.request, "endpoint"),
        (capture.request, "base_url"),
        (capture.request, "repo"),
    ):
        value = where.get(key)
        if isinstance(value, str) and value.startswith("https://"):
            return urlsplit(value).hostname
    return None


def _names(cert: Any) -> list[str]:
    from cryptography import x509

    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [str(n) for n in san.get_values_for_type(x509.DNSName)] + [
        str(a) for a in san.get_values_for_type(x509.IPAddress)
    ]


def _matches(host: str, names: list[str]) -> bool:
    try:
        address = ipaddress.ip_address(host)
        return any(str(address) == name for name in names)
    except ValueError:
        pass
    host = host.lower().rstrip(".")
    for name in names:
        name = name.lower().rstrip(".")
        if name == host:
            return True
        if name.startswith("*.") and "." in host and host.split(".", 1)[1] == name[2:]:
            return True
    return False


def check(capture: Capture) -> str:
    """Say how the chain binds the capture, or raise VerificationError with the reason."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature

    tls = capture.data.get("tls")
    if not isinstance(tls, dict):
        raise VerificationError("no TLS record in the capture")
    pem = tls.get("chain_pem")
    if not isinstance(pem, str) or not pem:
        raise VerificationError(
            "no certificate chain recorded (made by a prov before chains were kept)"
        )
    try:
        chain = x509.load_pem_x509_certificates(pem.encode())
    except ValueError as e:
        raise VerificationError("the recorded chain does not parse", cause=str(e)) from e
    from cryptography.hazmat.primitives.serialization import Encoding

    leaf_sha = hashlib.sha256(chain[0].public_bytes(Encoding.DER)).hexdigest()
    if leaf_sha != tls.get("peer_cert_sha256"):
        raise VerificationError(
            "the chain's first certificate is not the peer certificate recorded"
        )
    when = datetime.strptime(capture.started[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    for index, cert in enumerate(chain):
        if not cert.not_valid_before_utc <= when <= cert.not_valid_after_utc:
            raise VerificationError(
                f"certificate {index + 1} ({cert.subject.rfc4514_string()}) was not valid at "
                f"{capture.started}: valid {cert.not_valid_before_utc:%Y-%m-%dT%H:%M:%SZ} .. "
                f"{cert.not_valid_after_utc:%Y-%m-%dT%H:%M:%SZ}"
            )
    for index, (cert, issuer) in enumerate(itertools.pairwise(chain)):
        try:
            cert.verify_directly_issued_by(issuer)
        except (ValueError, TypeError, InvalidSignature) as e:
            raise VerificationError(
                f"certificate {index + 1} is not issued by certificate {index + 2}",
                cause=str(e) or type(e).__name__,
            ) from e
    host = _host(capture)
    if host is None:
        raise VerificationError("the capture names no https host to bind the chain to")
    if not _matches(host, _names(chain[0])):
        raise VerificationError(f"the leaf certificate does not name the host {host!r}")
    root = chain[-1].subject.rfc4514_string()
    return f"{len(chain)} certificate(s) valid at capture time, naming {host}, up to {root}"
