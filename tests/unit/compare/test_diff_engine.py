"""The generic structured-document differ: readable changes and a replayable RFC 6902 patch."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provenance.compare.diff import Volatile, diff_document, is_weights
from provenance.render.report import Format, render_diff
from provenance.render.sections import percent

NONE = Volatile.of([])


def apply(a: Any, patch: list[dict[str, Any]]) -> Any:
    """Replay a patch with an independent implementation (python-json-patch)."""
    return jsonpatch.JsonPatch(patch).apply(copy.deepcopy(a))


def by_path(changes: list[Any]) -> dict[str, Any]:
    return {c.path: c for c in changes}


def test_numbers_carry_their_delta_and_relative_change() -> None:
    a = {"trainer": {"num_train_steps": 390139, "lr": 0.002}}
    b = {"trainer": {"num_train_steps": 390251, "lr": 0.0015}}
    changes, patch = diff_document(a, b, NONE)
    steps = by_path(changes)["trainer.num_train_steps"]
    assert (steps.old, steps.new, steps.delta) == (390139, 390251, 112)
    assert isinstance(steps.delta, int)
    assert steps.relative == pytest.approx(112 / 390139)
    assert percent(steps.relative) == "+0.029%"
    assert by_path(changes)["trainer.lr"].delta == pytest.approx(-0.0005)
    assert apply(a, patch) == b


def test_records_are_matched_by_identity_not_position() -> None:
    a = {
        "files": [
            {"path": "a.py", "size": 1},
            {"path": "b.py", "size": 2},
            {"path": "c.py", "size": 3},
        ]
    }
    b = {
        "files": [
            {"path": "c.py", "size": 30},
            {"path": "a.py", "size": 1},
            {"path": "d.py", "size": 4},
        ]
    }
    changes, patch = diff_document(a, b, NONE)
    found = {(c.path, c.change) for c in changes}
    assert found == {
        ("files[path=b.py]", "removed"),
        ("files[path=c.py].size", "changed"),
        ("files[path=d.py]", "added"),
    }
    assert apply(a, patch) == b


def test_identity_is_the_key_under_which_records_persist() -> None:
    # Both 'source' and 'start_step' are unique, but a phase keeps its start step while its
    # source changes: matching by start step shows the new phase, not a rename of every phase.
    a = {"phases": [{"start_step": 0, "source": "h/p0"}, {"start_step": 312192, "source": "h/p1"}]}
    b = {
        "phases": [
            {"start_step": 0, "source": "h/p0"},
            {"start_step": 108000, "source": "b/p0"},
            {"start_step": 312192, "source": "b/p1"},
        ]
    }
    changes, patch = diff_document(a, b, NONE)
    assert [(c.path, c.change) for c in changes] == [
        ("phases[start_step=108000]", "added"),
        ("phases[start_step=312192].source", "changed"),
    ]
    assert apply(a, patch) == b


def test_tags_compare_as_a_set() -> None:
    a = {"tags": ["grug", "moe", "harrier-mix-2026.08.18"]}
    b = {"tags": ["moe", "grug", "harrier-mix-996f4891"]}
    (change,), patch = diff_document(a, b, NONE)
    assert change.change == "set"
    assert change.added == ["harrier-mix-996f4891"]
    assert change.removed == ["harrier-mix-2026.08.18"]
    assert apply(a, patch) == b
    (reordered,), patch = diff_document({"t": ["x", "y"]}, {"t": ["y", "x"]}, NONE)
    assert reordered.change == "reordered"
    assert apply({"t": ["x", "y"]}, patch) == {"t": ["y", "x"]}


def test_weight_maps_move_in_percentage_points_biggest_first() -> None:
    a = {"weights": {"c00q0": 0.5, "c07q3": 0.3, "c14q1": 0.2}}
    b = {"weights": {"c00q0": 0.45, "c07q3": 0.1, "c30q4": 0.45}}
    (change,), patch = diff_document(a, b, NONE)
    assert change.change == "weights"
    assert [(m.key, m.pp) for m in change.movers] == [
        ("c30q4", pytest.approx(45.0)),
        ("c07q3", pytest.approx(-20.0)),
        ("c14q1", pytest.approx(-20.0)),
        ("c00q0", pytest.approx(-5.0)),
    ]
    assert change.movers[0].old is None
    assert apply(a, patch) == b


def test_an_added_phase_is_compared_with_the_phase_it_interrupts() -> None:
    a = {"phases": [{"start_step": 0, "weights": {"x": 0.8, "y": 0.2}}]}
    b = {
        "phases": [
            {"start_step": 0, "weights": {"x": 0.8, "y": 0.2}},
            {"start_step": 108000, "weights": {"x": 0.3, "y": 0.7}},
        ]
    }
    (change,), patch = diff_document(a, b, NONE)
    assert change.change == "added"
    assert change.baseline == "phases[start_step=0].weights"
    assert [(m.key, round(m.pp, 6)) for m in change.movers] == [("x", -50.0), ("y", 50.0)]
    assert apply(a, patch) == b


def test_weight_detection() -> None:
    assert is_weights({"a": 0.25, "b": 0.75})
    assert is_weights({"a": 0, "b": 0.3}, "phase0_weights")  # named so; need not sum to 1
    assert not is_weights({"a": 0.25, "b": 0.5})  # neither named nor summing to 1
    assert not is_weights({"dropout": 0, "bias": 1})  # integers are flags, not shares
    assert not is_weights({"a": 1.5, "b": -0.5})


def test_volatile_patterns() -> None:
    volatile = Volatile.of(["_step", "run.heartbeat_at", "headers.x-amz-*"])
    assert volatile.matches(["summary", "_step"])  # one segment: any depth
    assert volatile.matches(["_step"])
    assert volatile.matches(["run", "heartbeat_at"])
    assert not volatile.matches(["other", "run", "heartbeat_at"])  # several: from the top
    assert volatile.matches(["headers", "x-amz-request-id"])
    assert not volatile.matches(["headers", "etag"])
    assert volatile.matches(["run", "heartbeat_at", "deeper"])  # covers what is below
    a = {"run": {"heartbeat_at": "1", "state": "running"}, "summary": {"_step": 1}}
    b = {"run": {"heartbeat_at": "2", "state": "finished"}, "summary": {"_step": 2}}
    changes, _ = diff_document(a, b, volatile)
    assert {c.path: c.volatile for c in changes} == {
        "run.heartbeat_at": True,
        "run.state": False,
        "summary._step": True,
    }


def test_pointers_escape_slashes_and_tildes() -> None:
    a = {"summary": {"train/loss": 1.3, "a~b": 1}}
    b = {"summary": {"train/loss": 1.2, "a~b": 2}}
    changes, patch = diff_document(a, b, NONE)
    assert {c.pointer for c in changes} == {"/summary/train~1loss", "/summary/a~0b"}
    assert apply(a, patch) == b


def test_equal_documents_give_nothing() -> None:
    doc = {"a": [1, {"b": [True, None]}], "c": 1.5}
    assert diff_document(doc, copy.deepcopy(doc), NONE) == ([], [])
    # bool is not int, 1 is not "1"
    changes, _ = diff_document({"x": True}, {"x": 1}, NONE)
    assert len(changes) == 1


keys = st.sampled_from(["a", "b", "id", "path", "x/y", "t~", "start_step", "w"])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=4),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(keys, inner, max_size=5),
        # lists of records with an identity, reordered and edited between the sides
        st.lists(
            st.fixed_dictionaries({"id": st.integers(0, 6)}, optional={"v": inner}),
            max_size=6,
            unique_by=lambda r: r["id"],
        ),
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, documents)
def test_the_patch_turns_a_into_b(a: Any, b: Any) -> None:
    changes, patch = diff_document(a, b, NONE)
    assert apply(a, patch) == b
    assert bool(changes) == bool(patch)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(keys, documents, max_size=5), st.data())
def test_the_patch_turns_a_into_an_edit_of_a(a: dict[str, Any], data: st.DataObject) -> None:
    b = copy.deepcopy(a)
    for key in data.draw(st.lists(keys, max_size=3)):
        if key in b and data.draw(st.booleans()):
            del b[key]
        else:
            b[key] = data.draw(documents)
    _, patch = diff_document(a, b, NONE)
    assert apply(a, patch) == b


def test_every_format_renders() -> None:
    """Each member of the Format enum has a renderer (branches end in assert_never)."""
    from provenance.cli import cli

    option = next(o for o in cli.commands["diff"].params if o.name == "output_format")
    assert list(option.type.choices) == [f.value for f in Format]  # type: ignore[attr-defined]
    from provenance.compare.diff import compare_snapshots
    from provenance.model import Snapshot

    empty = Snapshot(label="x", created="2026-08-24T15:00:00Z", captures=())
    diff = compare_snapshots(empty, empty)
    for fmt in Format:
        assert "x" in render_diff(diff, fmt)
