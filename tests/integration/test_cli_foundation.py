"""Issue 2's acceptance, run as a user would: init, keygen, snapshot, verify, show, log, fsck."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

import blake3
import pytest
from click.testing import Result

from tests.conftest import GitRepo, rewrite_object

README_BLOB = blake3.blake3(b"# marin\n").hexdigest()

Prov = Callable[..., Result]


@pytest.fixture
def milestone(project: Path, make_repo: Callable[[str], GitRepo], prov: Prov) -> Path:
    """A real repository, `prov init`, `prov keygen alice`, and a signed snapshot m1."""
    repo = GitRepo(project)
    repo.write("experiments/grug/moe_hero_ep/launch_scaling_ladder.py", "NUM_STEPS = 390_251\n")
    repo.write("README.md", "# marin\n")
    repo.commit("launcher")
    assert prov("init").exit_code == 0
    assert prov("keygen", "alice").exit_code == 0
    result = prov("snapshot", "--label", "m1", "--key", "keys/alice.key")
    assert result.exit_code == 0, result.output
    return project / "attestations" / "m1.intoto.jsonl"


def test_snapshot_then_verify_lists_every_step(milestone: Path, prov: Prov) -> None:
    assert milestone.is_file()
    result = prov("verify", str(milestone), "--key", "keys/alice.pub", "--store", ".prov")
    assert result.exit_code == 0, result.output
    for step in ("1. envelope", "2. signatures", "4. statement", "5. subject", "6. blobs"):
        assert step in result.stdout
    assert "verified: m1" in result.stdout


def test_verify_without_a_store_says_what_it_skipped(milestone: Path, prov: Prov) -> None:
    result = prov("verify", str(milestone), "--key", "keys/alice.pub")
    assert result.exit_code == 0
    assert "[skip] 6. blobs: no --store" in result.stdout


def test_verify_json_report(milestone: Path, prov: Prov) -> None:
    result = prov("verify", str(milestone), "--key", "keys/alice.pub", "--format", "json")
    report = json.loads(result.stdout)
    assert report["schema"] == "https://prov.dev/verify-report/v1"
    assert report["verified"] is True
    statuses = {s["name"]: s["status"] for s in report["steps"]}
    assert statuses == {
        "envelope": "passed",
        "signatures": "passed",
        "timestamp": "skipped",
        "statement": "passed",
        "subject": "passed",
        "blobs": "skipped",
        "witnesses": "skipped",  # none beside it; the evidence levels are counted all the same
    }
    assert {c["level"] for c in report["observers"]["captures"]} == {"observed"}


def _envelope(path: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(path.read_text())


def _write(path: Path, envelope: dict) -> None:  # type: ignore[type-arg]
    path.write_text(json.dumps(envelope) + "\n")


def _flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


def tamper_payload(path: Path, project: Path) -> None:
    envelope = _envelope(path)
    payload = base64.b64decode(envelope["payload"])
    envelope["payload"] = base64.b64encode(_flip(payload, len(payload) // 2)).decode()
    _write(path, envelope)


def tamper_signature(path: Path, project: Path) -> None:
    envelope = _envelope(path)
    sig = base64.b64decode(envelope["signatures"][0]["sig"])
    envelope["signatures"][0]["sig"] = base64.b64encode(_flip(sig, 5)).decode()
    _write(path, envelope)


def tamper_payload_type(path: Path, project: Path) -> None:
    envelope = _envelope(path)
    envelope["payloadType"] = "application/json"
    _write(path, envelope)


def tamper_blob(path: Path, project: Path) -> None:
    # The README's blob (in a pack or a loose file): flip one byte.
    rewrite_object(project / ".prov", README_BLOB, lambda data: data.replace(b"n", b"m"))


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (tamper_payload, "step 2 (signatures) failed"),
        (tamper_signature, "step 2 (signatures) failed"),
        (tamper_payload_type, "step 1 (envelope) failed: payloadType is 'application/json'"),
        (tamper_blob, "step 6 (blobs) failed: blob 'README.md' of source 'code'"),
    ],
)
def test_tampering_fails_with_a_message_naming_what_failed(
    milestone: Path, project: Path, prov: Prov, tamper: Callable[[Path, Path], None], message: str
) -> None:
    tamper(milestone, project)
    result = prov("verify", str(milestone), "--key", "keys/alice.pub", "--store", ".prov")
    assert result.exit_code == 1, result.output
    assert message in result.stderr


def test_an_untrusted_signer_fails(milestone: Path, prov: Prov) -> None:
    prov("keygen", "mallory")
    result = prov("verify", str(milestone), "--key", "keys/mallory.pub")
    assert result.exit_code == 1
    assert "0 distinct trusted key(s) verified, 1 required" in result.stderr
    assert "1 signature(s) not made by any trusted key" in result.stderr


def test_threshold_two_with_one_signer_fails(milestone: Path, prov: Prov) -> None:
    prov("keygen", "bob")
    result = prov(
        "verify",
        str(milestone),
        "--key",
        "keys/alice.pub",
        "--key",
        "keys/bob.pub",
        "--threshold",
        "2",
    )
    assert result.exit_code == 1
    assert "1 distinct trusted key(s) verified, 2 required" in result.stderr


def test_the_same_signature_twice_does_not_reach_a_threshold(milestone: Path, prov: Prov) -> None:
    prov("keygen", "bob")
    envelope = _envelope(milestone)
    duplicate = dict(envelope["signatures"][0])
    duplicate["keyid"] = "bob"  # even claiming to be another trusted key
    envelope["signatures"].append(duplicate)
    _write(milestone, envelope)
    result = prov(
        "verify",
        str(milestone),
        "--key",
        "keys/alice.pub",
        "--key",
        "keys/bob.pub",
        "--threshold",
        "2",
    )
    assert result.exit_code == 1
    assert "1 repeated signature(s) by an already counted key" in result.stderr


def test_two_signers_meet_a_threshold_of_two(project: Path, prov: Prov) -> None:
    repo = GitRepo(project)
    repo.write("a.txt", "a\n")
    repo.commit()
    prov("init")
    prov("keygen", "alice")
    prov("keygen", "bob", "--algorithm", "ecdsa-p256")
    result = prov("snapshot", "--label", "m1", "--key", "keys/alice.key", "--key", "keys/bob.key")
    assert result.exit_code == 0, result.output
    result = prov(
        "verify",
        "attestations/m1.intoto.jsonl",
        "--key",
        "keys/alice.pub",
        "--key",
        "keys/bob.pub",
        "--threshold",
        "2",
    )
    assert result.exit_code == 0, result.output
    assert "2 trusted key(s) verified (threshold 2)" in result.stdout


def test_unsigned_dry_run_is_rejected_by_verify(project: Path, prov: Prov) -> None:
    repo = GitRepo(project)
    repo.write("a.txt", "a\n")
    repo.commit()
    prov("init")
    prov("keygen", "alice")
    assert prov("snapshot", "--label", "dry", "--no-sign").exit_code == 0
    result = prov("verify", "attestations/dry.intoto.jsonl", "--key", "keys/alice.pub")
    assert result.exit_code == 1
    assert "no signatures" in result.stderr


def test_moving_the_branch_records_the_new_commit(
    milestone: Path, project: Path, prov: Prov
) -> None:
    repo = GitRepo.__new__(GitRepo)
    repo.path = project
    first = repo.git("rev-parse", "HEAD")
    assert prov("snapshot", "--label", "m1-again", "--key", "keys/alice.key").exit_code == 0
    repo.write("experiments/grug/moe_hero_ep/launch_scaling_ladder.py", "NUM_STEPS = 390_139\n")
    second = repo.commit("steps")
    assert prov("snapshot", "--label", "m2", "--key", "keys/alice.key").exit_code == 0

    def shown(label: str) -> dict:  # type: ignore[type-arg]
        return json.loads(prov("show", label, "--format", "json").stdout)["snapshot"]["captures"][0]

    assert shown("m1")["digest"] == shown("m1-again")["digest"]
    assert shown("m1")["data"]["commit"] == first
    assert shown("m2")["data"]["commit"] == second
    text = prov("show", "attestations/m2.intoto.jsonl").stdout
    assert f"commit: {second}" in text
    timeline = prov("log").stdout.splitlines()
    heads = [line for line in timeline if not line.startswith(" ")]
    assert [line.split()[2] for line in heads] == ["m1", "m1-again", "m2"]
    # under each snapshot: what changed since the one before (issue 4)
    assert timeline[timeline.index(heads[1]) + 1].strip() == "no differences since m1"
    assert "code (commit " in timeline[timeline.index(heads[2]) + 1]


def test_fsck_exits_1_on_a_corrupt_object(milestone: Path, project: Path, prov: Prov) -> None:
    assert prov("fsck").exit_code == 0
    tamper_blob(milestone, project)
    result = prov("fsck")
    assert result.exit_code == 1
    assert f"CORRUPT: blake3:{README_BLOB}" in result.stdout


def test_a_label_is_never_overwritten(milestone: Path, prov: Prov) -> None:
    before = milestone.read_bytes()
    result = prov("snapshot", "--label", "m1", "--key", "keys/alice.key")
    assert result.exit_code == 2
    assert "already exists" in result.stderr
    assert milestone.read_bytes() == before


@pytest.mark.parametrize("command", ["show", "log", "verify"])
def test_every_output_format_renders(milestone: Path, prov: Prov, command: str) -> None:
    from provenance.cli import cli
    from provenance.render.formats import Format

    option = next(o for o in cli.commands[command].params if o.name == "output_format")
    offered = [Format(value) for value in option.type.choices]  # type: ignore[attr-defined]
    assert {Format.TEXT, Format.JSON} <= set(offered)
    for fmt in offered:
        args = {
            "show": ["show", "m1"],
            "log": ["log"],
            "verify": ["verify", str(milestone), "--key", "keys/alice.pub"],
        }[command]
        result = prov(*args, "--format", fmt.value)
        assert result.exit_code == 0, result.output
        if fmt is Format.JSON:
            assert json.loads(result.stdout)["schema"].startswith("https://prov.dev/")
        else:
            assert "m1" in result.stdout
