"""Sigstore bundles: keyless signing through sigstore-python, and offline bundle verification.

A prov attestation signed keyless is a Sigstore bundle v0.3 (``*.sigstore.json``) whose DSSE
envelope carries the same in-toto statement bytes a local-key attestation would. Verification is
offline by default: the trust root is the one shipped inside the sigstore package (a pinned TUF
target), or a ``trusted_root.json`` the caller names. Identity and issuer are matched exactly,
never as prefixes or patterns.

sigstore is imported inside the functions that need it, so ``prov --help`` never loads it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from provenance._internal import strictjson
from provenance.attest.statement import PAYLOAD_TYPE
from provenance.digest import Digest
from provenance.errors import InputError, ProvError, SigningError, UsageError, VerificationError

if TYPE_CHECKING:
    from sigstore.models import TrustedRoot

    from provenance.attest._signature_schemes import SigningKey

BUNDLE_SUFFIX = ".sigstore.json"
BUNDLE_MEDIA_PREFIX = "application/vnd.dev.sigstore.bundle"
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
PRODUCTION_TUF = "https%3A%2F%2Ftuf-repo-cdn.sigstore.dev"


@dataclass(frozen=True)
class IdentityPolicy:
    """Who must have signed: an OIDC issuer plus an identity (SAN) and/or a GitHub repository.

    Every field given must match exactly. ``repository`` (``owner/name``) checks the Fulcio
    source-repository extension, for "anything this repository's workflows signed".
    """

    issuer: str
    identity: str | None = None
    repository: str | None = None
    ref: str | None = None

    def __post_init__(self) -> None:
        if not self.issuer:
            raise UsageError("an OIDC issuer is required to verify a Sigstore bundle")
        if not self.identity and not self.repository:
            raise UsageError(
                "a Sigstore bundle needs an identity policy",
                hint="pass --cert-identity (and --cert-oidc-issuer), or --repository owner/name",
            )
        if self.repository is not None and self.repository.count("/") != 1:
            raise UsageError(f"--repository must be owner/name, not {self.repository!r}")

    def describe(self) -> str:
        parts = []
        if self.identity:
            parts.append(f"identity {self.identity}")
        if self.repository:
            parts.append(f"repository {self.repository}")
        if self.ref:
            parts.append(f"ref {self.ref}")
        return ", ".join(parts) + f" (issuer {self.issuer})"

    def to_sigstore(self) -> Any:
        from sigstore.verify import policy

        checks: list[Any] = [policy.OIDCIssuer(self.issuer)]
        if self.identity:
            checks.append(policy.Identity(identity=self.identity, issuer=self.issuer))
        if self.repository:
            checks.append(policy.OIDCSourceRepositoryURI(f"https://github.com/{self.repository}"))
        if self.ref:
            checks.append(policy.OIDCSourceRepositoryRef(self.ref))
        return policy.AllOf(checks)


@dataclass(frozen=True)
class VerifiedTime:
    source: str  # "timestamp authority" or "transparency log"
    time: datetime


@dataclass(frozen=True)
class BundleVerified:
    """What a verified bundle proved."""

    media_type: str
    signer: str
    payload_type: str | None
    payload: bytes | None
    signature: bytes
    times: tuple[VerifiedTime, ...] = field(default_factory=tuple)


# -- reading -----------------------------------------------------------------------------------


BUNDLE_FIELDS = frozenset({"verificationMaterial", "dsseEnvelope", "messageSignature"})


def is_bundle(data: bytes) -> bool:
    """Whether these bytes are meant as a Sigstore bundle (as opposed to a DSSE envelope).

    A bundle media type, or any field only a bundle has: a bundle whose mediaType was damaged
    is still checked (and refused) as a bundle, not mistaken for an envelope.
    """
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):  # deep nesting: not a bundle
        return False
    if not isinstance(document, dict):
        return False
    media_type = document.get("mediaType")
    declared = isinstance(media_type, str) and media_type.startswith(BUNDLE_MEDIA_PREFIX)
    return declared or not BUNDLE_FIELDS.isdisjoint(document)


class _RepeatedKey(VerificationError):
    pass


def _document(data: bytes, origin: str) -> dict[str, Any]:
    try:
        document = strictjson.loads(data)
    except strictjson.RepeatedKey as e:
        # prov reads the envelope with this parser, sigstore with another: a repeated key is
        # the one place where the two could disagree on which value counts. Refused anywhere.
        raise _RepeatedKey(f"{origin} repeats the key {e.key!r}") from e
    except strictjson.JSONError as e:
        raise VerificationError(f"{origin} is not JSON", cause=str(e)) from e
    if not isinstance(document, dict):
        raise VerificationError(f"{origin} is not a JSON object")
    return document


def check_form(data: bytes, origin: str = "bundle") -> None:
    """Refuse a bundle that two readers could read differently, before any of them does.

    No object may repeat a key, and every field must read back as written: sigstore's parser
    decodes base64 leniently (skipping characters outside the alphabet) and integers with
    Python's ``int`` (``" 7"``, ``"1_0"``), so junk in a signature or a respelled log index
    would otherwise verify. Line breaks in base64 and ``null`` for an absent field are
    protobuf JSON, and pass. Malformed JSON is left for the bundle parser to report.
    """
    from pydantic import ValidationError

    from provenance.attest._bundle_model import LenientBundle as RawBundle

    try:
        original = _document(data, origin)
    except _RepeatedKey:
        raise
    except VerificationError:
        return
    try:
        parsed = RawBundle.from_json(data).to_dict()
    except (ValidationError, ValueError):
        return
    path = _respelled(original, parsed, "")
    if path is not None:
        raise VerificationError(
            f"{origin}: the field {path} does not read back as it is written",
            hint="the bundle was altered, or written by a tool that does not follow protobuf JSON",
        )


_LINE_BREAKS = str.maketrans("", "", "\r\n")


def _respelled(original: Any, parsed: Any, path: str) -> str | None:
    """The first path where the bundle as written differs from the bundle as parsed."""
    if isinstance(original, dict) and isinstance(parsed, dict):
        for key in sorted(original.keys() | parsed.keys()):
            if key not in parsed and original[key] is None:
                continue  # null is protobuf JSON's spelling of the default value
            if key not in original or key not in parsed:
                return f"{path}/{key}"
            found = _respelled(original[key], parsed[key], f"{path}/{key}")
            if found is not None:
                return found
        return None
    if isinstance(original, list) and isinstance(parsed, list) and len(original) == len(parsed):
        for index, (item, again) in enumerate(zip(original, parsed, strict=True)):
            found = _respelled(item, again, f"{path}/{index}")
            if found is not None:
                return found
        return None
    if isinstance(original, str) and isinstance(parsed, str):
        if original == parsed or original.translate(_LINE_BREAKS) == parsed:  # wrapped base64
            return None
    elif type(original) is type(parsed) and original == parsed:
        return None
    return path or "/"


def dsse_content(data: bytes, origin: str = "bundle") -> tuple[str, bytes, list[bytes]]:
    """The DSSE payload type, payload and signatures of a bundle, without verifying anything.

    The envelope is read by the same parser as a ``*.intoto.jsonl`` one (same messages, same
    refusals); ``check_form`` makes sure sigstore reads the same bytes from it.
    """
    from provenance.attest import dsse

    document = _document(data, origin)
    media_type = document.get("mediaType")
    if not (isinstance(media_type, str) and media_type.startswith(BUNDLE_MEDIA_PREFIX)):
        raise VerificationError(
            f"{origin} has no Sigstore bundle mediaType ({BUNDLE_MEDIA_PREFIX}...): "
            f"it has {str(media_type)[:80]!r}"
        )
    envelope = document.get("dsseEnvelope")
    if not isinstance(envelope, dict):
        raise VerificationError(
            f"{origin} holds no DSSE envelope", hint="prov attestations are DSSE bundles"
        )
    envelope = _without_nulls(envelope)  # protobuf JSON: null is the field's default
    parsed = dsse.parse(json.dumps(envelope).encode(), origin=f"the DSSE envelope of {origin}")
    return parsed.payload_type, parsed.payload, [s.sig for s in parsed.signatures]


def bundle_signature(data: bytes, origin: str = "bundle") -> bytes:
    """The signature bytes a timestamp in this bundle must cover (as Sigstore defines it)."""
    document = _document(data, origin)
    if isinstance(document.get("dsseEnvelope"), dict):
        signatures = dsse_content(data, origin)[2]
        if len(signatures) != 1:
            raise VerificationError(f"{origin}: a bundle's envelope must have exactly 1 signature")
        return signatures[0]
    try:
        return _b64(document["messageSignature"]["signature"])
    except (KeyError, TypeError, binascii.Error, ValueError) as e:
        raise VerificationError(f"{origin} has no signature", cause=str(e)) from e


def _without_nulls(envelope: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in envelope.items() if v is not None}
    if isinstance(out.get("signatures"), list):
        out["signatures"] = [
            {k: v for k, v in s.items() if v is not None} if isinstance(s, dict) else s
            for s in out["signatures"]
        ]
    return out


def _b64(value: Any) -> bytes:
    """Standard base64, possibly wrapped (as check_form allows)."""
    if not isinstance(value, str):
        raise TypeError(f"expected a base64 string, not {type(value).__name__}")
    return base64.b64decode(value.translate(_LINE_BREAKS), validate=True)


def timestamp_tokens(data: bytes, origin: str = "bundle") -> list[bytes]:
    """The RFC 3161 responses kept in ``verificationMaterial.timestampVerificationData``."""
    try:
        material = _document(data, origin).get("verificationMaterial") or {}
        tokens = (material.get("timestampVerificationData") or {}).get("rfc3161Timestamps") or []
        return [_b64(t["signedTimestamp"]) for t in tokens]
    except (AttributeError, KeyError, TypeError, binascii.Error, ValueError) as e:
        raise VerificationError(f"{origin} has a malformed timestamp", cause=str(e)) from e


def add_timestamp(data: bytes, token: bytes) -> bytes:
    """Return the bundle with one more RFC 3161 response in its timestampVerificationData.

    The rest of the document is kept as it was (key order included); only that list changes.
    """
    document = _document(data, "bundle")
    material = document.setdefault("verificationMaterial", {})
    verification = material.setdefault("timestampVerificationData", {})
    tokens = verification.setdefault("rfc3161Timestamps", [])
    tokens.append({"signedTimestamp": base64.b64encode(token).decode()})
    return json.dumps(document, separators=(",", ":")).encode() + b"\n"


# -- trust -------------------------------------------------------------------------------------


def production_trusted_root_path() -> Path:
    """The production trusted_root.json that ships inside the sigstore package (offline)."""
    try:
        root = resources.files("sigstore") / "_store" / PRODUCTION_TUF / "trusted_root.json"
    except ModuleNotFoundError as e:  # pragma: no cover - sigstore is a dependency
        from provenance.errors import MissingDependencyError

        raise MissingDependencyError("the sigstore package is not installed") from e
    return Path(str(root))


def load_trusted_root(path: Path | None) -> TrustedRoot:
    """A ``TrustedRoot`` from a file, or the production one shipped with sigstore.

    An instance without transparency or CT logs (GitHub's) omits ``tlogs`` and ``ctlogs``; in
    protobuf JSON an absent repeated field is an empty one, which sigstore's model does not allow
    for, so they are filled in. A file of several roots (``gh attestation trusted-root`` writes
    one per line) is refused with a hint: which one to trust is the auditor's choice.
    """
    from pydantic import ValidationError
    from sigstore.errors import Error as SigstoreError
    from sigstore.models import TrustedRoot
    from sigstore_models.trustroot.v1 import TrustedRoot as RawTrustedRoot

    source = path or production_trusted_root_path()
    try:
        text = source.read_bytes()
    except FileNotFoundError as e:
        raise InputError(f"trusted root {source} does not exist") from e
    except OSError as e:
        raise InputError(f"cannot read the trusted root {source}", cause=str(e)) from e
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and all(line.lstrip().startswith(b"{") for line in lines):
        try:
            roots = [json.loads(line) for line in lines]
        except ValueError:
            roots = []
        if roots:
            raise UsageError(
                f"{source} holds {len(roots)} trusted roots, one per line",
                hint="keep the line of the instance that signed the bundle (GitHub's names "
                "fulcio.githubapp.com) in a file of its own and pass that",
            )
    try:
        document = json.loads(text)
        if isinstance(document, dict):
            document.setdefault("tlogs", [])
            document.setdefault("ctlogs", [])
        return TrustedRoot(RawTrustedRoot.from_json(json.dumps(document)))
    except (ValidationError, ValueError, SigstoreError) as e:
        raise VerificationError(
            f"the trusted root {source} is malformed",
            cause=_first_line(str(e)),
            hint="use a trusted_root.json from the Sigstore instance's TUF repository",
        ) from e


def load_public_key(path: Path) -> SigningKey:
    """A managed signing key (PEM), for bundles whose verification material is a key."""
    from cryptography.hazmat.primitives import serialization

    from provenance.attest import _signature_schemes as schemes

    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except FileNotFoundError as e:
        raise InputError(f"key file {path} does not exist") from e
    except (ValueError, TypeError) as e:
        raise VerificationError(
            f"the public key {path} cannot be loaded",
            cause=_first_line(str(e)),
            hint="the key must be a PEM SubjectPublicKeyInfo",
        ) from e
    try:
        return schemes.signing_key(key)
    except VerificationError as e:
        raise VerificationError(f"{path}: {e.message}") from e


# -- verifying ---------------------------------------------------------------------------------


def verify_bundle(
    data: bytes,
    *,
    policy: IdentityPolicy | None = None,
    key: SigningKey | None = None,
    trusted_root: Path | None = None,
    artifact: bytes | Digest | None = None,
    origin: str = "bundle",
) -> BundleVerified:
    """Verify a bundle offline against a trust root and an identity policy (or a trusted key).

    ``artifact`` is what a message-signature bundle signed (bytes, or its sha256 where the key's
    scheme signs a sha256 digest); DSSE bundles return their payload for the caller's statement
    checks. Raises VerificationError; whatever the libraries raise on a bad bundle becomes one.
    """
    if (policy is None) == (key is None):
        raise UsageError(
            "verify a Sigstore bundle with either an identity policy or a public key",
            hint="--cert-identity + --cert-oidc-issuer, --repository, or --key PUB",
        )
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.x509 import ExtensionNotFound
    from sigstore.errors import Error as SigstoreError
    from sigstore.hashes import Hashed
    from sigstore_models.common.v1 import HashAlgorithm

    from provenance.attest import _bundle_verifier as impl

    check_form(data, origin)
    root = load_trusted_root(trusted_root)
    target: bytes | Hashed | None = None
    if isinstance(artifact, Digest):
        if artifact.algorithm != "sha256":
            raise UsageError("a Sigstore artifact digest must be sha256")
        target = Hashed(algorithm=HashAlgorithm.SHA2_256, digest=bytes.fromhex(artifact.hex))
    else:
        target = artifact

    try:
        verifier = impl.ProvVerifier(trusted_root=root)
        if key is not None:
            keyed = verifier.verify_with_key(data, key, target)
            return BundleVerified(
                media_type=json_media_type(data),
                signer=f"key {_key_fingerprint(key)}",
                payload_type=keyed.payload_type,
                payload=keyed.payload,
                signature=bundle_signature(data, origin),
                times=tuple(_time(t) for t in keyed.times),
            )
        assert policy is not None
        impl.reject_unusable_material(data)
        loaded = verifier.load(data)
        if loaded.bundle._inner.message_signature is not None and target is None:
            raise UsageError(f"{origin} signs an artifact: name the artifact to verify it")
        verified = verifier.verify_certificate_bundle(loaded, policy.to_sigstore(), target)
    except SigstoreError as e:
        raise VerificationError(
            f"{origin}: {_first_line(str(e))}",
            cause=_cause(e),
            hint="the bundle, the trust root or the identity policy does not match",
        ) from e
    except VerificationError as e:
        raise VerificationError(
            f"{origin}: {e.message}",
            cause=e.cause,
            hint=e.hint or "the bundle, the trust root or the identity policy does not match",
        ) from e
    except (ValueError, OverflowError, TypeError, KeyError, IndexError) as e:
        # What sigstore's parsers let through: DER that does not parse (certificate, timestamp
        # token), integers beyond what a log entry or a date can hold, fields of the wrong type.
        raise VerificationError(
            f"{origin}: the bundle is malformed: {_first_line(str(e))[:200]}",
            hint="the bundle was altered or damaged",
        ) from e
    except (UnsupportedAlgorithm, ExtensionNotFound) as e:
        raise VerificationError(
            f"{origin}: the bundle's certificate cannot be used: {_first_line(str(e))[:200]}",
        ) from e
    except ProvError:
        raise
    except Exception as e:  # a library bug must read as "not verified", never as a crash
        # sigstore assumes what it does not check: whatever it raises, the bundle did not verify.
        raise VerificationError(
            f"{origin}: sigstore could not check the bundle "
            f"({type(e).__name__}: {_first_line(str(e))[:200]})",
            hint="the certificate's key type or the bundle's form is one prov cannot verify",
        ) from e
    return BundleVerified(
        media_type=loaded.bundle._inner.media_type,
        signer=policy.describe(),
        payload_type=verified.payload_type,
        payload=verified.payload,
        signature=loaded.bundle.signature,
        times=tuple(_time(t) for t in verified.times),
    )


def check_subject_digest(payload_type: str | None, payload: bytes, artifact: Digest) -> None:
    """The in-toto layer of a DSSE bundle: the artifact's sha256 must be one of the subjects."""
    if payload_type != PAYLOAD_TYPE:
        raise VerificationError(f"payloadType is {payload_type!r}, not {PAYLOAD_TYPE!r}")
    try:
        statement = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise VerificationError("the in-toto statement is not JSON", cause=str(e)) from e
    if not isinstance(statement, dict) or statement.get("_type") != (
        "https://in-toto.io/Statement/v1"
    ):
        raise VerificationError("the payload is not an in-toto Statement v1")
    subjects = statement.get("subject")
    digests = [
        s.get("digest", {}).get("sha256")
        for s in subjects or []
        if isinstance(s, dict) and isinstance(s.get("digest"), dict)
    ]
    if artifact.hex not in digests:
        raise VerificationError(
            f"in-toto statement has no subject for digest {artifact.hex}",
            cause=f"subject sha256: {', '.join(map(str, digests)) or 'none'}",
        )


def _time(result: Any) -> VerifiedTime:
    source = (
        "timestamp authority" if result.source.name == "TIMESTAMP_AUTHORITY" else "transparency log"
    )
    return VerifiedTime(source, result.time)


def json_media_type(data: bytes) -> str:
    return str(_document(data, "bundle").get("mediaType", ""))


def _key_fingerprint(key: SigningKey) -> str:
    import hashlib

    from cryptography.hazmat.primitives import serialization

    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "sha256:" + hashlib.sha256(der).hexdigest()


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _cause(error: BaseException) -> str | None:
    lines = str(error).strip().splitlines()
    return " ".join(line.strip() for line in lines[1:4]) or None


# -- signing -----------------------------------------------------------------------------------


class BundleSigner(Protocol):
    """Signs DSSE statement bytes and returns a Sigstore bundle (JSON bytes)."""

    def sign_dsse(self, statement: bytes) -> bytes: ...

    def identity(self) -> str: ...


TokenSource = Callable[[], Any]


@dataclass
class KeylessSigner:
    """Fulcio + Rekor (+ the TSA the signing config names) through sigstore-python.

    The identity token comes from ``token`` (a callable returning a sigstore IdentityToken); by
    default the ambient CI credential (GitHub Actions OIDC), else the interactive browser flow.
    """

    staging: bool = False
    token: TokenSource | None = None
    _identity: str = ""

    def _context(self) -> AbstractContextManager[Any]:
        from sigstore.models import ClientTrustConfig
        from sigstore.sign import SigningContext

        config = ClientTrustConfig.staging() if self.staging else ClientTrustConfig.production()
        identity = (self.token or ambient_or_interactive_token(config))()
        self._identity = str(identity.identity)
        return SigningContext.from_trust_config(config).signer(identity, cache=True)

    def sign_dsse(self, statement: bytes) -> bytes:
        from sigstore.dsse import Statement
        from sigstore.errors import Error as SigstoreError

        try:
            with self._context() as signer:
                bundle = signer.sign_dsse(Statement(statement))
        except SigstoreError as e:
            raise SigningError(
                f"Sigstore signing failed: {_first_line(str(e))}",
                cause=_cause(e),
                hint="check the network path to Fulcio and Rekor, and the identity token",
            ) from e
        return str(bundle.to_json()).encode()

    def identity(self) -> str:
        return self._identity


def ambient_or_interactive_token(config: Any) -> TokenSource:
    """GitHub Actions (and other ambient) OIDC credentials first, the browser flow otherwise."""

    def get() -> Any:
        from sigstore.oidc import IdentityError, IdentityToken, Issuer, detect_credential

        try:
            ambient = detect_credential()
        except IdentityError as e:
            raise SigningError(
                "the ambient OIDC credential could not be read",
                cause=str(e),
                hint="in GitHub Actions, grant `permissions: id-token: write`",
            ) from e
        if ambient:
            return IdentityToken(ambient)
        return Issuer(config.signing_config.get_oidc_url()).identity_token()

    return get


@dataclass
class SigstoreAttester:
    """The ``Attester`` for Sigstore: the statement in a DSSE envelope inside a bundle v0.3."""

    signer: BundleSigner
    timestamper: Callable[[bytes], bytes] | None = None
    suffix: str = BUNDLE_SUFFIX

    def attest(self, statement: bytes) -> bytes:
        bundle = self.signer.sign_dsse(statement)
        payload_type, payload, _ = dsse_content(bundle, "the signed bundle")
        # The signer must have signed exactly our bytes: never let a re-serialisation through.
        if payload != statement or payload_type != PAYLOAD_TYPE:
            raise SigningError("the Sigstore bundle does not carry the statement bytes given")
        if self.timestamper is not None:
            bundle = add_timestamp(bundle, self.timestamper(bundle_signature(bundle)))
        # One line, so the file is also a valid *.intoto.jsonl (one bundle per line). The
        # bundle's JSON is not what is signed: the statement bytes travel base64 inside it.
        return json.dumps(json.loads(bundle), separators=(",", ":")).encode() + b"\n"

    def signer_ids(self) -> list[str]:
        identity = self.signer.identity()
        return [identity] if identity else []
