"""Counting observers: distinct keys, never signatures; statements checked before they count."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.server import LocalServer
from provenance.attest import keys
from provenance.attest import statement as statements
from provenance.attest.signing import DsseAttester
from provenance.errors import VerificationError
from provenance.model import (
    WITNESS_PREDICATE_TYPE,
    Capture,
    Snapshot,
    SnapshotLink,
    Vantage,
    Witness,
    WitnessedCapture,
)
from provenance.verify.observers import check_witness, count


@pytest.fixture
def snapshot(collect: Callable[..., Capture]) -> Snapshot:
    routes = [Route("/a", body=b"a"), Route("/b", body=b"b")]
    with LocalServer(Fixtures(routes=routes)) as server:
        captures = [
            collect({"name": name, "kind": "http", "url": f"{server.url}/{name}"})
            for name in ("a", "b")
        ]
    return Snapshot(label="m1", created=captures[0].started, captures=tuple(captures))


@pytest.fixture
def key(tmp_path: Path) -> Callable[[str], tuple[Any, Any]]:
    def make(name: str) -> tuple[Any, Any]:
        private, public = keys.generate(tmp_path / "keys", name)
        return keys.load_signer(private), keys.load_verifier(public)

    return make


def _statement(
    snapshot: Snapshot,
    sources: tuple[str, ...] = ("a", "b"),
    *,
    digest: str | None = None,
    about: Snapshot | None = None,
) -> bytes:
    about = about or snapshot
    witnessed = [
        WitnessedCapture(
            source=c.source,
            kind=c.kind,
            digest=digest or c.digest,
            observed=c.digest,
            match="digest",
            started=c.started,
            ended=c.ended,
        )
        for c in snapshot.captures
        if c.source in sources
    ]
    predicate = Witness(
        snapshot=SnapshotLink(label=about.label, sha256=about.sha256().hex, created=about.created),
        created=snapshot.created,
        vantage=Vantage(operator="w", region="r"),
        witnessed=tuple(witnessed),
    )
    subject = {"name": "prov-snapshot:m1", "digest": {"sha256": snapshot.sha256().hex}}
    return statements.wrap([subject], WITNESS_PREDICATE_TYPE, predicate.model_dump(mode="json"))


def _write(tmp_path: Path, name: str, statement: bytes, signers: list[Any]) -> Path:
    path = tmp_path / f"{name}.intoto.jsonl"
    path.write_bytes(DsseAttester(signers).attest(statement))
    return path


def test_two_keys_on_one_statement_are_two_witnesses_and_a_repeated_key_is_one(
    snapshot: Snapshot, key: Callable[[str], tuple[Any, Any]], tmp_path: Path
) -> None:
    (s1, v1), (s2, v2), (_, publisher) = key("w1"), key("w2"), key("pub")
    both = _write(tmp_path, "both", _statement(snapshot), [s1, s2])
    again = _write(tmp_path, "again", _statement(snapshot, ("a",)), [s1, s1])
    trusted = [v1, v2, publisher]
    verified = [check_witness(p, trusted, snapshot) for p in (both, again)]
    assert verified[0].signers == tuple(sorted((v1.keyid, v2.keyid)))
    assert verified[1].signers == (v1.keyid,)  # two signatures, one key
    report = count(snapshot, [publisher.keyid], verified, required=2)
    assert [(c.signers, c.witnesses, c.met) for c in report.captures] == [(3, 2, True)] * 2


def test_the_publishers_key_is_not_a_witness(
    snapshot: Snapshot, key: Callable[[str], tuple[Any, Any]], tmp_path: Path
) -> None:
    signer, verifier = key("pub")
    own = check_witness(
        _write(tmp_path, "own", _statement(snapshot), [signer]), [verifier], snapshot
    )
    report = count(snapshot, [verifier.keyid], [own], required=1)
    assert [(c.signers, c.witnesses, c.met) for c in report.captures] == [(1, 0, False)] * 2
    assert all("multi-vantage" not in c.levels for c in report.captures)


def test_statements_that_do_not_hold_are_refused(
    snapshot: Snapshot, key: Callable[[str], tuple[Any, Any]], tmp_path: Path
) -> None:
    (signer, verifier), (_, stranger) = key("w"), key("stranger")
    wrong_digest = _write(
        tmp_path, "d", _statement(snapshot, digest="blake3:" + "0" * 64), [signer]
    )
    with pytest.raises(VerificationError, match="not the snapshot's"):
        check_witness(wrong_digest, [verifier], snapshot)
    other = snapshot.model_copy(update={"label": "m2"})
    mismatched = _write(tmp_path, "s", _statement(snapshot, about=other), [signer])
    with pytest.raises(VerificationError, match="subject does not name the snapshot"):
        check_witness(mismatched, [verifier], snapshot)
    untrusted = _write(tmp_path, "u", _statement(snapshot), [signer])
    with pytest.raises(VerificationError, match="signature check failed"):
        check_witness(untrusted, [stranger], snapshot)
    note = _write(tmp_path, "n", statements.wrap([], "https://prov.dev/note/v1", {}), [signer])
    with pytest.raises(VerificationError):
        check_witness(note, [verifier], snapshot)


def test_plain_words_for_what_was_not_proven(snapshot: Snapshot) -> None:
    report = count(snapshot, ["pub"], [])
    capture = report.captures[0]
    assert capture.levels == ("observed",) and capture.level == "observed"
    assert any("one vantage only" in text for text in capture.not_proven)
    assert any("not time-anchored" in text for text in capture.not_proven)
    assert any("observer's word" in text for text in capture.not_proven)
    anchored = count(snapshot, ["pub"], [], time_anchored=True).captures[0]
    assert anchored.levels == ("observed", "time-anchored")
