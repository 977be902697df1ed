"""Change notes: signed, tied to a snapshot, shown in `prov log`, diffs and claim checks."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from click.testing import Result

from provenance.attest import dsse, keys
from provenance.attest import statement as statements
from provenance.compare import notes
from provenance.digest import Digest
from provenance.errors import VerificationError
from provenance.verify.policy import TrustOptions
from tests import marin_fixture as marin

ROOT = Path(__file__).resolve().parents[3]
TEXT = "PR #9162: the best mixture of swarm 996f4891 takes over at step 108,000"


@pytest.fixture
def milestones(tmp_path: Path) -> marin.Marin:
    return marin.build(tmp_path / "marin")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_note_is_signed_and_leaves_the_attestation_alone(
    milestones: marin.Marin, prov: Callable[..., Result], tmp_path: Path
) -> None:
    store = str(milestones.store.root)
    before = sha(milestones.m1)
    output = tmp_path / "note.intoto.jsonl"
    result = prov(
        "note",
        "m1",
        "--text",
        TEXT,
        "--supersedes",
        "total training tokens",
        "--key",
        str(milestones.key),
        "--store",
        store,
        "-o",
        str(output),
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("note ") and " on m1 (" in result.output
    assert sha(milestones.m1) == before

    (entry,) = notes.entries(milestones.store)
    stored = milestones.store.read(Digest.parse(entry.attestation))
    assert stored == output.read_bytes()
    envelope = dsse.parse(stored)
    dsse.verify(envelope, [keys.load_verifier(milestones.pub)], threshold=1)
    _, other_pub = keys.generate(tmp_path, "stranger")
    with pytest.raises(VerificationError):
        dsse.verify(envelope, [keys.load_verifier(other_pub)], threshold=1)
    parsed = statements.parse(envelope.payload)
    assert parsed.predicate_type == notes.PREDICATE_TYPE
    assert parsed.subjects == [
        {"name": "prov-snapshot:m1", "digest": {"sha256": milestones.s1.sha256().hex}}
    ]
    schema = json.loads((ROOT / "schemas" / "note.v1.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(parsed.predicate)
    assert parsed.predicate["text"] == TEXT
    assert parsed.predicate["supersedes"] == ["total training tokens"]
    assert entry.id == hashlib.sha256(envelope.payload).hexdigest()

    # the snapshot still verifies as before
    verified = prov("verify", str(milestones.m1), "--key", str(milestones.pub))
    assert verified.exit_code == 0, verified.output


def test_notes_show_in_log_diff_and_check(
    milestones: marin.Marin, prov: Callable[..., Result]
) -> None:
    store = str(milestones.store.root)
    key = str(milestones.key)
    assert (
        prov(
            "note",
            "m2",
            "--text",
            TEXT,
            "--supersedes",
            "total training tokens",
            "--key",
            key,
            "--store",
            store,
        ).exit_code
        == 0
    )
    assert (
        prov(
            "note",
            "m1",
            "--text",
            "store answers 403 to anonymous GETs",
            "--key",
            key,
            "--store",
            store,
        ).exit_code
        == 0
    )

    log = prov("log", "--store", store)
    assert log.exit_code == 0, log.output
    lines = log.output.splitlines()
    m1 = next(i for i, line in enumerate(lines) if "  m1  " in line)
    m2 = next(i for i, line in enumerate(lines) if "  m2  " in line)
    assert m1 < m2
    assert lines[m1 + 1].strip() == "first snapshot"
    assert "store answers 403" in lines[m1 + 2]
    change = lines[m2 + 1]
    assert change.strip().startswith("changed since m1: ")
    assert "launcher (commit 12d8b6f0 -> 0cb3167f" in change
    assert "harrier-store-artifact (status 403 -> 200" in change
    assert "hero-run (" in change and "token-counts" not in change
    assert TEXT in lines[m2 + 2] and "(supersedes: total training tokens)" in lines[m2 + 2]

    as_json = json.loads(prov("log", "--store", store, "--format", "json").stdout)
    first, second = as_json["snapshots"]
    assert first["since"] is None and second["since"] == "m1"
    assert [n["text"] for n in second["notes"]] == [TEXT]
    assert any(c.startswith("launcher (") for c in second["changes"])

    spanning = prov("diff", "m1", "m2", "--store", store)
    assert "notes in this span:" in spanning.output
    assert TEXT in spanning.output and "store answers 403" in spanning.output
    only_m1 = prov("diff", "m1", "m1", "--store", store)
    assert only_m1.exit_code == 0
    assert "store answers 403" in only_m1.output and TEXT not in only_m1.output

    claims = marin.CLAIMS
    checked_m2 = prov("check", "--claims", str(claims), "m2", "--store", store)
    assert "superseded by note" in checked_m2.output and TEXT in checked_m2.output
    checked_m1 = prov("check", "--claims", str(claims), "m1", "--store", store)
    assert TEXT not in checked_m1.output  # a later note does not reach back


def test_a_note_needs_a_key_and_text(milestones: marin.Marin, prov: Callable[..., Result]) -> None:
    store = str(milestones.store.root)
    unsigned = prov("note", "m1", "--text", TEXT, "--store", store)
    assert unsigned.exit_code == 2 and "--key" in unsigned.output
    empty = prov("note", "m1", "--text", "  ", "--key", str(milestones.key), "--store", store)
    assert empty.exit_code == 2 and "a note needs text" in empty.output
    missing = prov("note", "m7", "--text", TEXT, "--key", str(milestones.key), "--store", store)
    assert missing.exit_code == 2 and "no snapshot 'm7'" in missing.output
    assert notes.entries(milestones.store) == []


def test_log_in_every_format(milestones: marin.Marin, prov: Callable[..., Result]) -> None:
    from provenance.render.report import Format

    for fmt in Format:
        result = prov("log", "--store", str(milestones.store.root), "--format", fmt.value)
        assert result.exit_code == 0
        assert "m2" in result.output and "m1" in result.output


def test_notes_verify_like_snapshots_and_a_hand_written_note_is_never_shown(
    milestones: marin.Marin,
    prov: Callable[..., Result],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`prov verify` takes a signed note (its predicateType was refused before); an index entry
    that no signed note backs (written by hand into the store) is left out of `prov check` and
    `prov log`, and a real note's signers show only when its signature was checked."""
    store = str(milestones.store.root)
    note_file = tmp_path / "note.intoto.jsonl"
    made = prov(
        "note", "m1", "--text", TEXT, "--key", str(milestones.key), "--store", store,
        "-o", str(note_file),
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    verified = prov("verify", str(note_file), "--key", str(milestones.pub))
    assert verified.exit_code == 0, verified.output
    assert "verified: a signed note about m1" in verified.stdout
    _, stranger = keys.generate(tmp_path, "stranger")
    assert prov("verify", str(note_file), "--key", str(stranger)).exit_code == 1

    real = notes.entries(milestones.store)[0]
    assert real.signers == []  # not checked: nobody is named as having signed
    checked = notes.entries(milestones.store, _trust(milestones.pub))
    assert checked[0].signers and checked[0].id == real.id
    assert notes.entries(milestones.store, _trust(stranger)) == []

    forged = real.model_copy(
        update={
            "id": "f" * 64,
            "note": real.note.model_copy(update={"supersedes": ("total training tokens",)}),
            "signers": ["alice"],
        }
    )
    index = milestones.store.root / "notes" / f"{forged.id}.json"
    index.write_text(forged.model_dump_json())
    claims = marin.CLAIMS
    result = prov("check", "--claims", str(claims), "m1", "--store", store)
    assert "superseded by note" not in result.stdout
    assert "note ffffffffffff left out" in caplog.text  # a warning on stderr
    assert "signatures were not checked" in result.stderr


def _trust(pub: Path) -> TrustOptions:
    return TrustOptions(keys=(pub,))
