"""docs/config.md is what the option models generate: the prov.toml reference cannot drift."""

from __future__ import annotations

import pytest

from provenance.capture.base import REGISTRY, SourceOptions, collector_class
from provenance.render import config_doc
from tests.conftest import ROOT


def test_committed_page_matches_the_models() -> None:
    committed = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    assert committed == config_doc.render(), "run `make schemas` to regenerate docs/config.md"


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_every_key_of_every_kind_is_on_the_page(kind: str) -> None:
    page = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    section = page.split(f'## `kind = "{kind}"`', 1)[1].split("\n## ", 1)[0]
    model = collector_class(kind).options_model
    for name in set(model.model_fields) - set(SourceOptions.model_fields):
        assert f"| `{name}` |" in section, f"{kind}.{name}"


def test_a_key_without_a_description_is_refused() -> None:
    from pydantic import Field

    class Bare(SourceOptions):
        """A kind whose author forgot to say what a key does."""

        depth: int = Field(default=1)

    with pytest.raises(ValueError, match=r"Bare\.depth has no description"):
        config_doc.table(Bare)


def test_types_read_as_toml() -> None:
    from typing import Literal

    assert config_doc.type_name(list[str]) == "list of string"
    assert config_doc.type_name(str | None) == "string (optional)"
    assert config_doc.type_name(Literal["GET", "HEAD"]) == '"GET" \\| "HEAD"'
    assert config_doc.type_name(dict[str, str]) == "table of string"
