"""What a claim read: each captured value its expression looks up, with the capture it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from provenance.compare import claims
from provenance.compare.evidence import Evidence, StoreBlobs
from provenance.compare.reads import reads
from tests import marin_fixture as marin

CLAIMS = """
[let]
run = "captures['hero-run'].config"
steps = "run.trainer.num_train_steps"

[[claims]]
name = "tokens"
claimed = "18.75T"
derived = "steps * run.trainer.train_batch_size * run.model.max_seq_len"

[[claims]]
name = "a branch not taken"
claimed = 390251
derived = "steps if steps > 0 else run.nowhere"

[[claims]]
name = "the store"
claimed = 403
derived = "captures['harrier-store-artifact'].status + 0 * snapshot.created.count"
"""


@pytest.fixture(scope="module")
def evidence(tmp_path_factory: pytest.TempPathFactory) -> Evidence:
    work = marin.build(tmp_path_factory.mktemp("marin"))
    return Evidence(work.s1, "m1", 1, StoreBlobs(work.store))


def _read(evidence: Evidence, name: str) -> list[tuple[str, object, str | None, str | None]]:
    parsed = claims.parse(CLAIMS, Path("claims.toml"))
    claim = next(c for c in parsed.claims if c.name == name)
    return [(r.path, r.value, r.source, r.error) for r in reads(claim, evidence, parsed.lets)]


def test_let_names_read_the_capture_they_start_from(evidence: Evidence) -> None:
    assert _read(evidence, "tokens") == [
        ("steps", 390251, "hero-run", None),
        ("run.trainer.train_batch_size", 11264, "hero-run", None),
        ("run.model.max_seq_len", 4096, "hero-run", None),
    ]


def test_a_lookup_that_fails_says_why_and_the_others_still_read(evidence: Evidence) -> None:
    found = _read(evidence, "a branch not taken")
    assert found[0] == ("steps", 390251, "hero-run", None)
    path, value, source, error = found[1]
    assert (path, value, source) == ("run.nowhere", None, "hero-run")
    assert error is not None and "nowhere" in error


def test_direct_captures_and_snapshot_fields(evidence: Evidence) -> None:
    found = _read(evidence, "the store")
    assert found[0] == (
        "captures['harrier-store-artifact'].status",
        403,
        "harrier-store-artifact",
        None,
    )
    assert found[1][0] == "snapshot.created.count" and found[1][2] is None
