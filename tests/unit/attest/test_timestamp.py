"""RFC 3161 timestamps against real ``openssl ts`` authorities served on 127.0.0.1."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result
from cryptography.hazmat.primitives import serialization

from provenance._testing.tsa import LocalTSA
from provenance.attest import timestamp
from provenance.errors import TimestampError, UsageError, VerificationError


@pytest.fixture
def tsa(tmp_path: Path) -> Iterator[LocalTSA]:
    with LocalTSA(tmp_path / "tsa-a", name="TSA A") as authority:
        yield authority


@pytest.fixture
def other_tsa(tmp_path: Path) -> Iterator[LocalTSA]:
    with LocalTSA(tmp_path / "tsa-b", name="TSA B") as authority:
        yield authority


@pytest.fixture
def signed_project(project: Path, make_repo, prov: Callable[..., Result]) -> Path:  # type: ignore[no-untyped-def]
    repo = make_repo("code")
    repo.write("train.py", "steps = 390251\n")
    repo.commit("launcher")
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    assert prov("keygen", "alice").exit_code == 0
    return project


def test_timestamped_attestation_verifies_and_reports_its_time(
    signed_project: Path, tsa: LocalTSA, prov: Callable[..., Result]
) -> None:
    made = prov("snapshot", "--key", "keys/alice.key", "--label", "m1", "--timestamp", tsa.url)
    assert made.exit_code == 0, made.output
    sidecar = signed_project / "attestations" / "m1.intoto.jsonl.tsr"
    assert sidecar.is_file() and tsa.requests == 1

    result = prov(
        "verify", "attestations/m1.intoto.jsonl", "--key", "keys/alice.pub",
        "--tsa-certs", str(tsa.chain_pem),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if "3. timestamp" in x)
    assert line.startswith("[ok  ]")
    stamped = re.search(r"no later than (\S+) by CN=TSA A", line)
    assert stamped, line
    # The reported time is the token's genTime, the one openssl itself reads back.
    token = timestamp.verify(
        sidecar.read_bytes(),
        [_first_signature(signed_project / "attestations/m1.intoto.jsonl")],
        timestamp.TsaTrust.from_pem(tsa.chain_pem),
    )[0]
    assert stamped.group(1) == token.time.isoformat()

    unchecked = prov("verify", "attestations/m1.intoto.jsonl", "--key", "keys/alice.pub")
    assert unchecked.exit_code == 0
    assert "[skip] 3. timestamp: a token is in m1.intoto.jsonl.tsr but not checked" in (
        unchecked.output
    )


def _first_signature(path: Path) -> bytes:
    from provenance.attest.envelope import read_envelope

    return read_envelope(path).signatures[0].sig


def _snapshot(prov: Callable[..., Result], label: str, url: str) -> None:
    made = prov("snapshot", "--key", "keys/alice.key", "--label", label, "--timestamp", url)
    assert made.exit_code == 0, made.output


def _verify_with(prov: Callable[..., Result], label: str, chain: Path) -> Result:
    return prov(
        "verify", f"attestations/{label}.intoto.jsonl", "--key", "keys/alice.pub",
        "--tsa-certs", str(chain),
    )  # fmt: skip


def test_token_from_another_tsa_fails(
    signed_project: Path, tsa: LocalTSA, other_tsa: LocalTSA, prov: Callable[..., Result]
) -> None:
    _snapshot(prov, "m1", other_tsa.url)
    result = _verify_with(prov, "m1", tsa.chain_pem)
    assert result.exit_code == 1
    assert "[FAIL] 3. timestamp" in result.output
    assert "issued by another TSA than the one in" in result.stderr


def test_token_over_a_different_signature_fails(
    signed_project: Path, tsa: LocalTSA, prov: Callable[..., Result]
) -> None:
    _snapshot(prov, "m1", tsa.url)
    _snapshot(prov, "m2", tsa.url)
    attestations = signed_project / "attestations"
    (attestations / "m2.intoto.jsonl.tsr").write_bytes(
        (attestations / "m1.intoto.jsonl.tsr").read_bytes()
    )
    result = _verify_with(prov, "m2", tsa.chain_pem)
    assert result.exit_code == 1
    assert "over a different signature than this attestation's" in result.stderr


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("flip-signature", "signature does not verify with the TSA"),
        ("flip-time", "signature does not verify with the TSA"),
        ("truncate", "the timestamp token is corrupt"),
    ],
)
def test_tampered_token_fails(
    signed_project: Path, tsa: LocalTSA, prov: Callable[..., Result], how: str, message: str
) -> None:
    _snapshot(prov, "m1", tsa.url)
    sidecar = signed_project / "attestations" / "m1.intoto.jsonl.tsr"
    token = bytearray(sidecar.read_bytes())
    if how == "flip-signature":
        token[-5] ^= 0x01  # inside the ECDSA signature, the last field of SignerInfo
    elif how == "flip-time":
        reply = timestamp.verify(
            bytes(token),
            [_first_signature(signed_project / "attestations/m1.intoto.jsonl")],
            timestamp.TsaTrust.from_pem(tsa.chain_pem),
        )[0]
        stamp = reply.time.strftime("%Y%m%d%H%M%S").encode()
        at = bytes(token).index(stamp)
        token[at + 3] = ord("9") if token[at + 3] != ord("9") else ord("8")  # another year
    else:
        del token[len(token) // 2 :]
    sidecar.write_bytes(bytes(token))
    result = _verify_with(prov, "m1", tsa.chain_pem)
    assert result.exit_code == 1
    assert message in result.stderr


def test_tsa_certs_without_a_token_fails(
    signed_project: Path, tsa: LocalTSA, prov: Callable[..., Result]
) -> None:
    assert prov("snapshot", "--key", "keys/alice.key", "--label", "m1").exit_code == 0
    result = _verify_with(prov, "m1", tsa.chain_pem)
    assert result.exit_code == 1
    assert "no timestamp token in m1.intoto.jsonl.tsr" in result.stderr


def test_request_checks_what_came_back(tsa: LocalTSA) -> None:
    token = timestamp.request(tsa.url, b"sig")
    stamp, index = timestamp.verify(
        token, [b"other", b"sig"], timestamp.TsaTrust.from_pem(tsa.chain_pem)
    )
    assert index == 1 and stamp.tsa == "CN=TSA A,O=prov test"
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(TimestampError, match=r"could not be reached"):
        timestamp.request(f"http://127.0.0.1:{port}/", b"sig", timeout=2)


def test_tsa_chain_file_must_name_a_tsa(tmp_path: Path, tsa: LocalTSA) -> None:
    only_root = tmp_path / "root.pem"
    only_root.write_bytes(tsa.root.public_bytes(serialization.Encoding.PEM))
    with pytest.raises(UsageError, match="one TSA certificate"):
        timestamp.TsaTrust.from_pem(only_root)
    with pytest.raises(VerificationError, match="corrupt"):
        timestamp.verify(b"not der", [b"sig"], timestamp.TsaTrust.from_pem(tsa.chain_pem))
