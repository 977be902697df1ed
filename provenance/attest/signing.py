"""The signing seam: an ``Attester`` turns statement bytes into the file that carries them.

Local keys produce a DSSE envelope (``*.intoto.jsonl``); Sigstore keyless produces a bundle
(``*.sigstore.json``). Signing knows nothing of sources: it sees statement bytes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from provenance.attest import dsse
from provenance.attest.statement import PAYLOAD_TYPE


class Attester(Protocol):
    @property
    def suffix(self) -> str: ...

    def attest(self, statement: bytes) -> bytes:
        """The bytes of the attestation file for these statement bytes."""
        ...

    def signer_ids(self) -> list[str]: ...


@dataclass(frozen=True)
class DsseAttester:
    """DSSE with zero or more local keys (zero: an unsigned dry run that verify rejects)."""

    signers: Sequence[dsse.Signer]
    suffix: str = ".intoto.jsonl"

    def attest(self, statement: bytes) -> bytes:
        return dsse.sign(PAYLOAD_TYPE, statement, self.signers).to_json() + b"\n"

    def signer_ids(self) -> list[str]:
        return [signer.keyid for signer in self.signers]
