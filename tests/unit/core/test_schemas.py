"""The committed JSON Schemas equal what the models generate: the contract cannot drift."""

from __future__ import annotations

import json

import pytest

from provenance.model import PREDICATE_TYPE
from provenance.render.schemas import SCHEMAS, render
from tests.conftest import ROOT


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_committed_schema_matches_the_models(name: str) -> None:
    committed = (ROOT / "schemas" / name).read_text()
    assert committed == render(SCHEMAS[name]()), f"run `make schemas` to regenerate {name}"


def test_predicate_type_is_the_schema_id() -> None:
    schema = json.loads((ROOT / "schemas" / "snapshot.v1.schema.json").read_text())
    assert schema["$id"] == PREDICATE_TYPE
