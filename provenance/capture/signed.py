"""``prov snapshot`` as one call: how to sign, checked first; then collect, sign and timestamp.

Everything that can be wrong without collecting (the signing choice, prov.toml, the label, the
output file) is checked before keys are asked for, and keys are asked for before any source is.
Keys come through ``load_keys`` because asking for a passphrase is the terminal's business.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from provenance import config as configuration
from provenance.attest import timestamp
from provenance.attest.keys import LocalSigner
from provenance.attest.signing import Attester, DsseAttester
from provenance.capture.snapshot import Progress, SnapshotResult, prepare, take
from provenance.errors import ProvError, UsageError
from provenance.store.objects import Store

__all__ = ["Signing", "Taken", "take_signed"]

LoadKeys = Callable[[tuple[Path, ...]], Sequence[LocalSigner]]


@dataclass(frozen=True)
class Signing:
    """How a snapshot is to be signed, as ``prov snapshot``'s options say."""

    keys: tuple[Path, ...] = ()
    sigstore: bool = False
    staging: bool = False
    timestamp_url: str | None = None
    unsigned: bool = False

    def check(self) -> None:
        """Exactly one way to sign, and options that go with it; UsageError otherwise."""
        chosen = [bool(self.keys), self.sigstore, self.unsigned]
        if sum(chosen) > 1:
            raise UsageError("--key, --sigstore and --no-sign exclude each other")
        if not any(chosen):
            raise UsageError(
                "choose how to sign: --key keys/NAME.key (repeatable), --sigstore (keyless), "
                "or --no-sign for a dry run",
                hint="`prov keygen NAME` makes a key pair",
            )
        if self.timestamp_url and self.unsigned:
            raise UsageError("--timestamp needs a signature to timestamp: drop --no-sign")
        if self.staging and not self.sigstore:
            raise UsageError("--sigstore-staging goes with --sigstore")


@dataclass(frozen=True)
class Taken:
    """A snapshot written: the result, where it is kept, who signed, where its timestamp is."""

    result: SnapshotResult
    store: Store
    signed_by: tuple[str, ...]
    timestamp: str | None


def _attester(signing: Signing, signers: Sequence[LocalSigner]) -> Attester:
    if not signing.sigstore:
        return DsseAttester(list(signers))
    from provenance.attest.sigstore import KeylessSigner, SigstoreAttester

    url = signing.timestamp_url

    def stamp(signature: bytes) -> bytes:
        assert url is not None
        return timestamp.request(url, signature)

    return SigstoreAttester(
        KeylessSigner(staging=signing.staging), timestamper=stamp if url else None
    )


def _suffix(signing: Signing) -> str:
    if signing.sigstore:
        from provenance.attest.sigstore import SigstoreAttester

        return SigstoreAttester.suffix
    return DsseAttester.suffix


def _stamp(result: SnapshotResult, url: str) -> str:
    try:
        return str(timestamp.stamp_dsse(result.attestation, url))
    except ProvError as e:  # the snapshot stands: say so, since nothing else was printed
        written = f"{result.snapshot.label} is written and signed ({result.attestation}) "
        e.hint = written + "without a token" + (f"; {e.hint}" if e.hint else "")
        raise


def take_signed(
    config_path: Path,
    store: Path | None,
    signing: Signing,
    *,
    label: str | None = None,
    output: Path | None = None,
    load_keys: LoadKeys,
    progress: Progress | None = None,
) -> Taken:
    """Check, collect every source of prov.toml, sign, write; a DSSE signature timestamped
    afterwards into its ``.tsr`` sidecar, a Sigstore one inside the bundle."""
    signing.check()
    config = configuration.load(config_path)
    target_store = Store(configuration.store_path(store, config.store_path))
    prepared = prepare(config, target_store, _suffix(signing), label=label, output=output)
    signers = load_keys(signing.keys)
    attester = _attester(signing, signers)
    result = take(config, target_store, attester, prepared=prepared, progress=progress)
    stamped = None
    if signing.timestamp_url and not signing.sigstore:
        stamped = _stamp(result, signing.timestamp_url)
    elif signing.timestamp_url:
        stamped = "in the bundle's timestampVerificationData"
    signed_by = attester.signer_ids() if signing.sigstore else [s.keyid[:16] for s in signers]
    return Taken(result, target_store, tuple(signed_by), stamped)
