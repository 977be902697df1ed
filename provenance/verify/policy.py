"""The trust policy: what prov trusts when it says "verified", and where that came from.

Trust comes from the auditor. Keys (``--key``), a Sigstore identity (``--cert-identity`` with
``--cert-oidc-issuer``, or ``--repository``), a Sigstore trusted root (``--trusted-root``,
else the production root shipped with sigstore) and a TSA chain (``--tsa-certs``) are what the
auditor passed, and nothing else. An evidence pack carries the packer's keys, identity, root
and TSA chain; they are trusted only when the auditor says so with ``--trust-pack``, and then
every key fingerprint, identity, root and TSA certificate so trusted is listed in
``TrustPolicy.trusted`` for the reader to compare with what the publisher announced. Any trust
option given means the pack's material is ignored entirely; a pack with neither is a usage
error that says what to pass. An empty policy is an error, never a pass.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from provenance.errors import UsageError

if TYPE_CHECKING:
    from provenance.attest.keys import VerifyingKey
    from provenance.attest.sigstore import IdentityPolicy
    from provenance.attest.timestamp import TsaTrust
    from provenance.store.pack import OpenedPack

__all__ = ["TrustOptions", "TrustPolicy", "for_pack", "from_auditor", "identity_policy"]

NO_POLICY_HINT = "an empty policy would trust anything, so prov refuses it"
TRUST_OPTIONS = (
    "pass --key PUB for each signer you trust, or for a Sigstore bundle --cert-identity and "
    "--cert-oidc-issuer (or --repository owner/name), with --trusted-root for a private "
    "Sigstore instance"
)


@dataclass(frozen=True)
class TrustOptions:
    """The trust material as the auditor gave it (paths and names, nothing loaded yet)."""

    keys: tuple[Path, ...] = ()
    threshold: int = 1
    identity: str | None = None
    issuer: str | None = None
    repository: str | None = None
    ref: str | None = None
    trusted_root: Path | None = None
    tsa_certs: Path | None = None
    trust_pack: bool = False

    @property
    def given(self) -> bool:
        """Whether the auditor passed any trust material of their own."""
        named = (self.identity, self.issuer, self.repository, self.ref)
        return bool(self.keys or any(named) or self.trusted_root or self.tsa_certs)

    @property
    def asked(self) -> bool:
        """Whether signatures are to be checked at all (trust material, or --trust-pack)."""
        return self.given or self.trust_pack


@dataclass(frozen=True)
class TrustPolicy:
    """Loaded trust material and where it came from; what verification uses."""

    keys: tuple[VerifyingKey, ...]
    threshold: int
    identity: IdentityPolicy | None
    trusted_root: Path | None
    tsa: TsaTrust | None
    origin: Literal["auditor", "pack"]
    trusted: tuple[str, ...] = ()
    """With ``--trust-pack``: every fingerprint and identity trusted because the pack said so."""


def identity_policy(
    identity: str | None, issuer: str | None, repository: str | None, ref: str | None
) -> IdentityPolicy | None:
    """The Sigstore identity policy the options name, or None when they name none."""
    from provenance.attest.sigstore import GITHUB_ISSUER, IdentityPolicy

    if not (identity or issuer or repository or ref):
        return None
    if repository and not issuer:
        issuer = GITHUB_ISSUER
    if not issuer:
        raise UsageError("--cert-identity needs --cert-oidc-issuer (both are matched exactly)")
    return IdentityPolicy(issuer=issuer, identity=identity, repository=repository, ref=ref)


def from_auditor(options: TrustOptions) -> TrustPolicy:
    """The auditor's own policy; raises UsageError when it trusts nobody."""
    from provenance.attest import keys
    from provenance.attest.timestamp import TsaTrust

    if options.trust_pack and options.given:
        raise UsageError(
            "--trust-pack and your own trust options exclude each other",
            hint="with --key / --cert-identity / --repository / --trusted-root / --tsa-certs "
            "the pack's trust material is ignored: drop --trust-pack",
        )
    identity = identity_policy(options.identity, options.issuer, options.repository, options.ref)
    if not options.keys and identity is None:
        raise UsageError(f"no trust policy: {TRUST_OPTIONS}", hint=NO_POLICY_HINT)
    return TrustPolicy(
        keys=tuple(keys.load_verifier(path) for path in options.keys),
        threshold=options.threshold,
        identity=identity,
        trusted_root=options.trusted_root,
        tsa=TsaTrust.from_pem(options.tsa_certs) if options.tsa_certs else None,
        origin="auditor",
    )


def for_pack(options: TrustOptions, opened: OpenedPack) -> TrustPolicy:
    """The policy for a pack: the auditor's, or with ``--trust-pack`` alone the pack's own."""
    if options.given or not options.trust_pack:
        if not options.given:
            raise UsageError(
                f"{opened.source} brings its own trust material, which prov does not trust "
                "unless you say so",
                hint=f"{TRUST_OPTIONS}; or --trust-pack to trust the pack's keys, identity and "
                "roots (each is printed, to compare with what the publisher announced)",
            )
        return from_auditor(options)
    return _pack_policy(opened, options.threshold)


def _pack_policy(opened: OpenedPack, threshold: int) -> TrustPolicy:
    from provenance.attest import keys
    from provenance.attest.timestamp import TsaTrust

    name = opened.source.name
    loaded = []
    trusted = []
    for path in opened.keys:
        key = keys.load_verifier(path)
        key = replace(key, source=f"{name}:keys/{path.name} ({key.keyid[:16]})")
        loaded.append(key)
        trusted.append(f"key sha256:{key.keyid} ({name}:keys/{path.name})")
    policy = opened.manifest.policy
    identity = None
    if opened.manifest.kind == "sigstore" and policy.issuer:
        identity = identity_policy(policy.identity, policy.issuer, policy.repository, policy.ref)
        if identity is not None:
            trusted.append(f"Sigstore {identity.describe()}")
    root = opened.trusted_root
    if root is not None:
        trusted.append(f"Sigstore trusted root sha256:{_sha256(root)} ({name}:{_inside(root)})")
    tsa = TsaTrust.from_pem(opened.tsa_chain) if opened.tsa_chain else None
    if tsa is not None:
        from cryptography.hazmat.primitives import hashes

        for certificate in (tsa.tsa, *tsa.intermediates, *tsa.roots):
            fingerprint = certificate.fingerprint(hashes.SHA256()).hex()
            trusted.append(
                f"TSA certificate sha256:{fingerprint} ({certificate.subject.rfc4514_string()})"
            )
    if not loaded and identity is None:
        raise UsageError(f"{opened.source} holds no keys or identity to trust", hint=TRUST_OPTIONS)
    return TrustPolicy(
        keys=tuple(loaded),
        threshold=max(threshold, policy.threshold),
        identity=identity,
        trusted_root=root,
        tsa=tsa,
        origin="pack",
        trusted=tuple(trusted),
    )


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _inside(path: Path) -> str:
    return "/".join(path.parts[-2:])
