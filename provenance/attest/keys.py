"""Local signing keys: ed25519 (default) or ECDSA P-256, as PEM files.

Private keys are PKCS#8, written 0600 and optionally encrypted with ``PROV_KEY_PASSWORD``. A key's
id is the sha256 of its public key's DER SubjectPublicKeyInfo, so it is the same wherever the key
is loaded. ECDSA signatures are DER-encoded, as sigstore, cryptography and securesystemslib expect.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, utils

from provenance._internal.files import atomic_write
from provenance.errors import KeyFileError, UsageError

Algorithm = Literal["ed25519", "ecdsa-p256"]
PASSWORD_ENV = "PROV_KEY_PASSWORD"  # noqa: S105 (the variable's name, not a password)

PrivateKey = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey
PublicKey = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey


def keyid_of(public: PublicKey) -> str:
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(der).hexdigest()


def scheme_of(public: PublicKey) -> str:
    """The securesystemslib scheme name of a key, for interoperability."""
    return "ed25519" if isinstance(public, ed25519.Ed25519PublicKey) else "ecdsa-sha2-nistp256"


@dataclass(frozen=True)
class VerifyingKey:
    """A trusted public key and where it came from."""

    public: PublicKey
    keyid: str
    source: str

    def verify(self, signature: bytes, data: bytes) -> bool:
        public = self.public
        if isinstance(public, ed25519.Ed25519PublicKey):
            return _checks(lambda: public.verify(signature, data))
        if _checks(lambda: public.verify(signature, data, ec.ECDSA(hashes.SHA256()))):
            return True
        # The DSSE spec's own test vector uses raw r||s (IEEE P1363) instead of DER. Both spell
        # the same (r, s), so accepting either admits no signature that DER would not.
        if len(signature) == 64:
            r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
            der = utils.encode_dss_signature(r, s)
            return _checks(lambda: public.verify(der, data, ec.ECDSA(hashes.SHA256())))
        return False


def _checks(verify: Callable[[], None]) -> bool:
    try:
        verify()
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True)
class LocalSigner:
    """Signs with a private key held in memory."""

    private: PrivateKey
    keyid: str
    source: str

    def sign(self, data: bytes) -> bytes:
        if isinstance(self.private, ed25519.Ed25519PrivateKey):
            return self.private.sign(data)
        return self.private.sign(data, ec.ECDSA(hashes.SHA256()))


def generate(
    directory: Path, name: str, algorithm: Algorithm = "ed25519", password: str | None = None
) -> tuple[Path, Path]:
    """Write ``NAME.key`` (0600) and ``NAME.pub``; refuse to overwrite either."""
    if not name or "/" in name or name.startswith("."):
        raise UsageError(f"invalid key name {name!r}", hint="use a plain name such as 'alice'")
    private: PrivateKey = (
        ed25519.Ed25519PrivateKey.generate()
        if algorithm == "ed25519"
        else ec.generate_private_key(ec.SECP256R1())
    )
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password.encode())
        if password
        else serialization.NoEncryption()
    )
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )
    public_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    key_path, pub_path = directory / f"{name}.key", directory / f"{name}.pub"
    for path in (key_path, pub_path):
        if path.exists():
            raise UsageError(
                f"{path} already exists", hint="choose another name; keys are never overwritten"
            )
    # A private key committed by `git add -A` would be captured by the next git snapshot: into
    # the store, the signed file list and every evidence pack. Keep git from seeing it.
    atomic_write(directory / ".gitignore", b"*.key\n")
    if not atomic_write(key_path, private_pem, mode=0o600):
        raise UsageError(f"{key_path} was created by another process meanwhile; kept it")
    key_path.chmod(0o600)
    atomic_write(pub_path, public_pem, mode=0o644)
    return key_path, pub_path


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as e:
        raise KeyFileError(
            f"{what} {path} does not exist", hint="check the path, or run `prov keygen NAME`"
        ) from e
    except OSError as e:
        raise KeyFileError(f"cannot read {what} {path}", cause=str(e)) from e


def is_encrypted(path: Path) -> bool:
    """A readable private key that needs a passphrase: asked of the same parser that loads it."""
    try:
        data = path.read_bytes()
    except OSError:
        return False  # load_signer says what is wrong with it
    try:
        serialization.load_pem_private_key(data, password=None)
    except TypeError:  # cryptography's "password was not given but private key is encrypted"
        return True
    except (ValueError, UnsupportedAlgorithm):
        return False  # not a usable key: load_signer says why
    return False


def load_signer(path: Path, password: str | None = None) -> LocalSigner:
    mode = path.stat().st_mode if path.exists() else 0
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(
            f"private key {path} is readable by other users (mode {stat.S_IMODE(mode):04o})",
            hint=f"run `chmod 600 {path}`",
        )
    data = _read(path, "private key")
    if password is None:
        password = os.environ.get(PASSWORD_ENV) or None
    try:
        private = serialization.load_pem_private_key(data, password.encode() if password else None)
    except TypeError as e:
        if password:
            raise KeyFileError(
                f"private key {path} is not encrypted, but a passphrase was given",
                hint=f"unset {PASSWORD_ENV}",
            ) from e
        raise KeyFileError(
            f"private key {path} is encrypted",
            hint=f"set {PASSWORD_ENV} to its passphrase, or run on a terminal to be asked for it",
        ) from e
    except ValueError as e:
        if b"ENCRYPTED" in data and password:
            raise KeyFileError(
                f"cannot decrypt private key {path}: wrong passphrase",
                hint=f"check {PASSWORD_ENV}",
            ) from e
        raise KeyFileError(
            f"{path} is not a PEM private key",
            cause=str(e).splitlines()[0] if str(e) else None,
            hint="pass the .key file made by `prov keygen` (the .pub goes to `prov verify --key`)",
        ) from e
    if isinstance(private, ec.EllipticCurvePrivateKey) and not isinstance(
        private.curve, ec.SECP256R1
    ):
        raise KeyFileError(
            f"{path} is an ECDSA key on {private.curve.name}; prov signs with P-256 only"
        )
    if not isinstance(private, (ed25519.Ed25519PrivateKey, ec.EllipticCurvePrivateKey)):
        raise KeyFileError(
            f"{path} holds a {type(private).__name__}; prov signs with ed25519 or ECDSA P-256 keys"
        )
    return LocalSigner(private, keyid_of(private.public_key()), str(path))


def load_verifier(path: Path) -> VerifyingKey:
    data = _read(path, "public key")
    try:
        public = serialization.load_pem_public_key(data)
    except ValueError as e:
        hint = "pass the .pub file, not the private key" if b"PRIVATE KEY" in data else None
        raise KeyFileError(f"{path} is not a PEM public key", hint=hint) from e
    if isinstance(public, ec.EllipticCurvePublicKey) and not isinstance(public.curve, ec.SECP256R1):
        raise KeyFileError(
            f"{path} is an ECDSA key on {public.curve.name}; prov accepts P-256 only"
        )
    if not isinstance(public, (ed25519.Ed25519PublicKey, ec.EllipticCurvePublicKey)):
        raise KeyFileError(
            f"{path} holds a {type(public).__name__}; prov accepts ed25519 or ECDSA P-256"
        )
    return VerifyingKey(public, keyid_of(public), str(path))
