"""Valid evidence to tamper with: a real repository, real keys, two signed snapshots, a store.

Built once per session with the real ``prov`` command line. ``m1`` is signed by alice (ed25519),
``m2`` (one commit later) by alice and bob (ECDSA P-256). mallory and carol have keys that no
verifier trusts; ``bob-compressed.pub`` is bob's key spelled with a compressed point.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from provenance.attest import dsse, keys
from provenance.attest import statement as statements
from provenance.cli import cli
from tests.conftest import GitRepo

PAYLOAD_TYPE = statements.PAYLOAD_TYPE


def run_cli(
    *args: str, env: dict[str, str | None] | None = None
) -> tuple[int, str, str, BaseException | None]:
    """Run ``prov`` in-process; returns (exit code, stdout, stderr, unexpected exception).

    ``PROV_*`` variables of the calling environment are cleared, so only ``args`` count.
    """
    cleared: dict[str, str | None] = {k: None for k in os.environ if k.startswith("PROV_")}
    result = CliRunner().invoke(cli, list(args), env={**cleared, **(env or {})})
    unexpected = None if isinstance(result.exception, SystemExit | None) else result.exception
    return result.exit_code, result.stdout, result.stderr, unexpected


@dataclass
class Evidence:
    root: Path

    @property
    def keys(self) -> Path:
        return self.root / "keys"

    @property
    def store(self) -> Path:
        return self.root / ".prov"

    @property
    def config(self) -> Path:
        return self.root / "prov.toml"

    def attestation(self, label: str) -> Path:
        return self.root / "attestations" / f"{label}.intoto.jsonl"

    def pub(self, name: str) -> str:
        return str(self.keys / f"{name}.pub")

    def trust(self, *names: str, threshold: int = 1) -> tuple[str, ...]:
        args: list[str] = []
        for name in names:
            args += ["--key", self.pub(name)]
        return (*args, "--threshold", str(threshold))

    def envelope(self, label: str) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.attestation(label).read_bytes())
        return document

    def payload(self, label: str) -> bytes:
        return base64.b64decode(self.envelope(label)["payload"])

    def statement(self, label: str) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.payload(label))
        return document

    def signer(self, name: str) -> keys.LocalSigner:
        return keys.load_signer(self.keys / f"{name}.key")

    def keyid(self, name: str) -> str:
        return keys.load_verifier(self.keys / f"{name}.pub").keyid

    def sign(self, name: str, payload: bytes, payload_type: str = PAYLOAD_TYPE) -> bytes:
        """A real signature by ``name`` over the PAE of (type, payload)."""
        return self.signer(name).sign(dsse.pae(payload_type, payload))

    @cached_property
    def sha256(self) -> dict[str, str]:
        return {
            label: self.statement(label)["subject"][0]["digest"]["sha256"] for label in ("m1", "m2")
        }


def build(root: Path) -> Evidence:
    repo = GitRepo(root)
    repo.write("experiments/grug/moe_hero_ep/launch.py", "NUM_STEPS = 390_251\nBATCH = 11_264\n")
    repo.write("README.md", "# marin\n")
    repo.write("data/mix.bin", bytes(range(256)) * 4)
    repo.commit("launcher")
    ev = Evidence(root)

    def prov(*args: str) -> None:
        code, out, err, unexpected = run_cli(*args)
        assert code == 0 and unexpected is None, (args, out, err, unexpected)

    prov("init", "--dir", str(root))
    for name, algorithm in (
        ("alice", "ed25519"),
        ("bob", "ecdsa-p256"),
        ("mallory", "ed25519"),
        ("carol", "ecdsa-p256"),
    ):
        prov("keygen", name, "--dir", str(ev.keys), "--algorithm", algorithm)
    (ev.keys / "alice-copy.pub").write_bytes((ev.keys / "alice.pub").read_bytes())
    (ev.keys / "bob-compressed.pub").write_bytes(_compressed_pem(ev.keys / "bob.pub"))

    def snapshot(label: str, *signers: str) -> None:
        args = ["snapshot", "-c", str(ev.config), "--label", label]
        for signer in signers:
            args += ["--key", str(ev.keys / f"{signer}.key")]
        prov(*args)

    snapshot("m1", "alice")
    repo.write("experiments/grug/moe_hero_ep/launch.py", "NUM_STEPS = 390_139\nBATCH = 11_264\n")
    repo.commit("steps")
    snapshot("m2", "alice", "bob")
    return ev


def _compressed_pem(path: Path) -> bytes:
    """The same P-256 public key, as a SubjectPublicKeyInfo holding the compressed point."""
    public = serialization.load_pem_public_key(path.read_bytes())
    assert isinstance(public, ec.EllipticCurvePublicKey)
    point = public.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.CompressedPoint
    )
    algorithm = bytes.fromhex("301306072a8648ce3d020106082a8648ce3d030107")
    bit_string = b"\x03" + bytes([len(point) + 1]) + b"\x00" + point
    body = algorithm + bit_string
    der = b"\x30" + bytes([len(body)]) + body
    text = base64.encodebytes(der).decode().replace("\n", "")
    return f"-----BEGIN PUBLIC KEY-----\n{text}\n-----END PUBLIC KEY-----\n".encode()
