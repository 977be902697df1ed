"""`prov diff` on two Marin milestones: what a reader must see, exit codes, JSON, signed diffs."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonpatch
import jsonschema
import pytest
from click.testing import Result

from provenance._internal import canonical, documents
from provenance.attest import dsse, keys
from provenance.attest import statement as statements
from provenance.compare import pyconstants
from provenance.digest import Digest
from provenance.model import Capture, Snapshot
from provenance.render.schemas import SCHEMAS
from tests import marin_fixture as marin

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def milestones(tmp_path_factory: pytest.TempPathFactory) -> marin.Marin:
    return marin.build(tmp_path_factory.mktemp("marin"))


def section(text: str, source: str) -> str:
    """The part of the text output about one source."""
    start = text.index(f"\n{source} [")
    end = text.find("\n\n", start + 1)
    return text[start : end if end != -1 else None]


def test_diff_between_milestones_shows_what_changed(
    milestones: marin.Marin, prov: Callable[..., Result]
) -> None:
    result = prov("diff", "m1", "m2", "--store", str(milestones.store.root))
    assert result.exit_code == 1, result.output
    out = result.output

    launcher = section(out, "launcher")
    assert f"commit: {marin.M1_COMMIT} -> {marin.M2_COMMIT}" in launcher
    # the mixture file went from two phases to three: its shape changed
    assert f"in {marin.MIX_PATH}:" in launcher
    assert "- phase_budgets: removed (was [15,000,000,000,000, 3,750,000,000,000])" in launcher
    assert "- phase0_weights: removed (was {200 fields})" in launcher
    assert "+ phases: added [3 items]" in launcher
    # the launcher's Python: changed constants first, then the text
    mix_py = "experiments/grug/moe_hero_ep/harrier_mix_2026_08_18.py"
    constants = launcher.index(f"constants in {mix_py}:")
    assert "+ _MIXTURE_SWITCH_FRACTION: added 0.27674496670091814" in launcher[constants:]
    assert (
        '~ HARRIER_MIX_2026_08_18_TAG: "harrier-mix-2026.08.18" -> '
        '"harrier-mix-2026.08.18-to-996f4891"' in launcher
    )
    assert constants < launcher.index(f"--- a/{mix_py}")
    assert "+ experiments/grug/moe_hero_ep/best_mixture_996f489106c7b922.json: added" in launcher
    assert "+ experiments/grug/moe_hero_ep/harrier_mix_schedule.py: added" in launcher
    run_id = '"hero-12d8b6f0-dee637" -> "hero-mix-996f4891-step108k"'
    assert f"~ CURRENT_HERO_RUN_ID: {run_id}" in launcher
    assert '-CURRENT_HERO_RUN_ID = "hero-12d8b6f0-dee637"' in launcher  # the unified diff
    assert "hero_recipe.py" not in launcher  # the same bytes at both commits

    run = section(out, "hero-run")
    assert f'run.id: "{marin.M1_RUN}" -> "{marin.M2_RUN}"' in run
    assert 'run.tags: +"harrier-mix-996f4891", -"harrier-mix-2026.08.18"' in run
    assert "config.data.phase_switch_steps: +108,000" in run
    real, _, volatile = run.partition("volatile (not counted as differences):")
    for counter in ("run.heartbeat_at", "run.last_step: 13,527 -> 119,874", "summary._step"):
        assert counter in volatile
        assert counter not in real
    # the source's own volatile list, recorded in the capture's request, applies too
    assert "summary.throughput/mfu" in volatile

    artifact = section(out, "harrier-store-artifact")
    assert "~ status: 403 -> 200\n" in artifact
    assert 'error_body.code: "AccessDenied" -> null' in artifact
    assert '+ headers.etag: added "\\"9b2cf535f27731c974343645a3985328\\""' in artifact
    real, _, volatile = artifact.partition("volatile (not counted as differences):")
    assert "elapsed_ms" in volatile and "elapsed_ms" not in real
    assert "x-amz-id-2" in volatile and "x-amz-id-2" not in real

    assert "unchanged: token-counts" in out
    assert "3 of 4 source(s) changed" in out


def test_a_snapshot_equals_itself(milestones: marin.Marin, prov: Callable[..., Result]) -> None:
    store = str(milestones.store.root)
    for a, b in (("m1", "m1"), (str(milestones.m1), "m1")):
        result = prov("diff", a, b, "--store", store)
        assert result.exit_code == 0, result.output
        assert "no differences between m1 and m1" in result.output
    as_json = json.loads(prov("diff", "m1", "m1", "--store", store, "--format", "json").stdout)
    assert as_json["equal"] is True
    assert as_json["counts"] == {"sources_changed": 0, "changes": 0, "volatile": 0}


def test_only_volatile_changes_do_not_make_a_difference(
    milestones: marin.Marin, prov: Callable[..., Result], tmp_path: Path
) -> None:
    # The same run read again later: a new heartbeat and step counter, nothing else.
    snapshot = milestones.s1
    later = []
    for capture in snapshot.captures:
        if capture.source == "hero-run":
            data = copy.deepcopy(capture.data)
            data["run"]["heartbeat_at"] = "2026-08-24T15:20:00"  # type: ignore[index]
            data["run"]["last_step"] = 13611  # type: ignore[index]
            data["summary"]["_step"] = 13611  # type: ignore[index]
            capture = marin.seal(capture, data=data)
        later.append(capture)
    again = Snapshot(label="m1-again", created="2026-08-24T15:30:00Z", captures=tuple(later))
    path = marin.publish(milestones.store, again, milestones.key, tmp_path / "again.intoto.jsonl")
    result = prov("diff", str(milestones.m1), str(path), "--store", str(milestones.store.root))
    assert result.exit_code == 0, result.output
    assert (
        "no differences between m1 and m1-again; 3 volatile change(s) not counted" in result.output
    )
    assert "run.last_step: 13,527 -> 13,611" in result.output


def document_of(name: str, capture: Capture, store: Any) -> Any:
    """A capture's document as the diff names it, read independently of the diff engine."""
    if name == "capture":
        return {
            "status": capture.status,
            "establishes": list(capture.establishes),
            "error": capture.error.model_dump(mode="json") if capture.error else None,
        }
    if name in ("request", "data"):
        return getattr(capture, name)
    if name.startswith("constants:"):
        blob = next(b for b in capture.blobs if b.name == name.removeprefix("constants:"))
        return pyconstants.read(store.read(Digest.parse(blob.digest))).values
    path = name.removeprefix("file:")
    blob = next(b for b in capture.blobs if b.name == path)
    raw = store.read(Digest.parse(blob.digest))
    fmt = documents.format_of(path, blob.media_type)
    assert fmt is not None
    return documents.parse(raw, fmt)


def test_json_diff_validates_and_its_patches_replay(
    milestones: marin.Marin, prov: Callable[..., Result]
) -> None:
    result = prov("diff", "m1", "m2", "--store", str(milestones.store.root), "--format", "json")
    assert result.exit_code == 1
    diff = json.loads(result.stdout)
    assert diff["schema"] == "https://prov.dev/diff/v1"
    schema = json.loads((ROOT / "schemas" / "diff.v1.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(diff)

    a = {c.source: c for c in milestones.s1.captures}
    b = {c.source: c for c in milestones.s2.captures}
    replayed = []
    for capture in diff["captures"]:
        for document in capture["documents"]:
            if document["format"] == "text":
                continue
            source, name = capture["source"], document["name"]
            before = document_of(name, a[source], milestones.store)
            after = document_of(name, b[source], milestones.store)
            assert before != after
            patched = jsonpatch.JsonPatch(document["patch"]).apply(copy.deepcopy(before))
            assert patched == after, f"{source} {name}"
            replayed.append(f"{source}:{name}")
    assert f"launcher:file:{marin.MIX_PATH}" in replayed
    assert "launcher:constants:experiments/grug/moe_hero_ep/current_run.py" in replayed
    assert {"hero-run:data", "hero-run:request", "harrier-store-artifact:data"} <= set(replayed)

    change = next(
        c
        for capture in diff["captures"]
        for d in capture["documents"]
        if d["name"] == f"file:{marin.MIX_PATH}"
        for c in d["changes"]
        if c["path"] == "phases"
    )
    assert change["change"] == "added" and len(change["new"]) == 3
    assert all(abs(sum(phase["weights"].values()) - 1) < 1e-6 for phase in change["new"])


def test_a_tampered_schema_would_reject_the_output(
    milestones: marin.Marin, prov: Callable[..., Result]
) -> None:
    """The schema is a real contract: a wrong type in a change is caught."""
    diff = json.loads(
        prov("diff", "m1", "m2", "--store", str(milestones.store.root), "--format", "json").stdout
    )
    diff["captures"][0]["status"] = "moved"
    schema = json.loads((ROOT / "schemas" / "diff.v1.schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(diff)


def test_signed_diff_names_both_snapshots(
    milestones: marin.Marin, prov: Callable[..., Result], tmp_path: Path
) -> None:
    target = tmp_path / "m1-m2.diff.intoto.jsonl"
    store = str(milestones.store.root)
    result = prov(
        "diff", "m1", "m2", "--store", store, "--sign-key", str(milestones.key), "-o", str(target)
    )
    assert result.exit_code == 1
    envelope = dsse.parse(target.read_bytes())
    checks = dsse.verify(envelope, [keys.load_verifier(milestones.pub)], threshold=1)
    assert checks[0].verified_by == str(milestones.pub)
    parsed = statements.parse(envelope.payload)
    assert parsed.predicate_type == "https://prov.dev/diff/v1"
    assert parsed.subjects == [
        {"name": "prov-snapshot:m1", "digest": {"sha256": milestones.s1.sha256().hex}},
        {"name": "prov-snapshot:m2", "digest": {"sha256": milestones.s2.sha256().hex}},
    ]
    as_json = json.loads(prov("diff", "m1", "m2", "--store", store, "--format", "json").stdout)
    assert parsed.predicate == as_json
    assert envelope.payload == canonical.dumps(canonical.loads(envelope.payload))
    # a changed byte breaks the signature
    forged = dsse.Envelope(
        envelope.payload.replace(b"403", b"404"), envelope.payload_type, envelope.signatures
    )
    from provenance.errors import VerificationError

    with pytest.raises(VerificationError):
        dsse.verify(forged, [keys.load_verifier(milestones.pub)], threshold=1)
    # `prov verify` takes a signed diff like a snapshot (its predicateType was refused before)
    verified = prov("verify", str(target), "--key", str(milestones.pub))
    assert verified.exit_code == 0, verified.output
    assert "verified: a signed diff about m1, m2" in verified.stdout
    # never overwritten
    again = prov(
        "diff", "m1", "m2", "--store", store, "--sign-key", str(milestones.key), "-o", str(target)
    )
    assert again.exit_code == 2 and "already exists" in again.output


def test_markdown_for_release_notes(milestones: marin.Marin, prov: Callable[..., Result]) -> None:
    result = prov("diff", "m1", "m2", "--store", str(milestones.store.root), "--format", "markdown")
    assert result.exit_code == 1
    md = result.stdout
    assert md.startswith("## prov diff: `m1` → `m2`")
    assert "### harrier-store-artifact \\[http\\]: changed" in md
    assert "- `status`: 403 -> 200" in md
    assert "```diff\n--- a/experiments/grug/moe_hero_ep/current_run.py" in md
    assert "<details><summary>volatile (not counted as differences)</summary>" in md
    assert "| `experiments/grug/moe_hero_ep/best_mixture_996f489106c7b922.json` | add |" in md


def test_without_blobs_contents_are_compared_by_digest(
    milestones: marin.Marin, prov: Callable[..., Result], tmp_path: Path
) -> None:
    """Attestation files alone (no store): files still listed, contents by digest only."""
    empty = tmp_path / "no-store"
    result = prov("diff", str(milestones.m1), str(milestones.m2), "--store", str(empty))
    assert result.exit_code == 1
    launcher = section(result.output, "launcher")
    assert "~ experiments/grug/moe_hero_ep/current_run.py" in launcher
    assert "content not at hand" in launcher
    assert "blob not at hand, compared by digest only" in launcher
    assert "+ phases" not in launcher


def test_unknown_snapshot_is_a_usage_error(
    milestones: marin.Marin, prov: Callable[..., Result]
) -> None:
    result = prov("diff", "m1", "m9", "--store", str(milestones.store.root))
    assert result.exit_code == 2
    assert "no snapshot 'm9'" in result.output


def test_schemas_match_the_models() -> None:
    """The committed schemas are what the models generate (`make schemas` rewrites them)."""
    from provenance.render.schemas import render

    for name, build in SCHEMAS.items():
        committed = (ROOT / "schemas" / name).read_text()
        assert committed == render(build()), f"schemas/{name} drifted: run `make schemas`"


def test_colour_only_when_asked_or_on_a_terminal(
    milestones: marin.Marin, prov: Callable[..., Result]
) -> None:
    store = str(milestones.store.root)
    plain = prov("diff", "m1", "m2", "--store", store).output  # not a tty here
    assert "\033[" not in plain
    coloured = prov("diff", "m1", "m2", "--store", store, "--color").output
    assert "\033[32m+ phases\033[0m" in coloured
    assert "\033[31m" in coloured and "\033[2m" in coloured  # removals, volatile dimmed
    assert (
        "\033["
        not in prov("diff", "m1", "m2", "--store", store, "--color", "--format", "json").output
    )
