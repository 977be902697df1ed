"""docs/config.md: the prov.toml reference, generated from the models that check prov.toml.

Every key of ``[store]``, ``[attestations]``, ``[defaults]`` and of each source kind's options
model is listed with its type, default and description. ``python -m provenance.render.config_doc
docs/config.md`` rewrites the page (``make schemas`` does both); a test fails when a model and
the committed page disagree, or when a key has no description.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

HEADER = """\
# prov.toml reference

<!-- Generated from the option models by `make schemas`
     (python -m provenance.render.config_doc docs/config.md): do not edit by hand. -->

`prov snapshot` reads `prov.toml` (or `-c PATH`, `PROV_CONFIG`). Paths are relative to the folder
of prov.toml. An unknown key is an error that names the file, the line and the keys allowed;
`prov init` writes a template. What each source records is in [captures.md](captures.md).
"""


def type_name(annotation: Any) -> str:
    """A type as a prov.toml author reads it: ``string``, ``list of string``, ``"a" | "b"``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        shown = [type_name(a) for a in args if a is not type(None)]
        optional = len(shown) < len(args)
        return " \\| ".join(shown) + (" (optional)" if optional else "")
    if origin is list:
        return f"list of {type_name(args[0])}"
    if origin is dict:
        return f"table of {type_name(args[1])}"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if annotation in names:
        return names[annotation]
    raise TypeError(f"no prov.toml spelling for the type {annotation!r}")


def default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, BaseModel):
        return ""
    return f"`{json.dumps(value)}`"


def table(model: type[BaseModel], skip: frozenset[str] = frozenset()) -> list[str]:
    rows = ["| key | type | default | description |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        if not field.description:
            raise ValueError(f"{model.__name__}.{name} has no description")
        description = field.description.replace("|", "\\|")
        rows.append(
            f"| `{name}` | {type_name(field.annotation)} | {default_text(field)} | {description} |"
        )
    return rows


def render() -> str:
    from provenance.capture.base import REGISTRY, SourceOptions, collector_class
    from provenance.config import AttestationsSection, DefaultsSection, StoreSection

    lines = [HEADER]
    sections: tuple[tuple[str, type[BaseModel]], ...] = (
        ("[store]", StoreSection),
        ("[attestations]", AttestationsSection),
        ("[defaults]", DefaultsSection),
    )
    for title, section in sections:
        lines += [f"## `{title}`", "", (section.__doc__ or "").strip(), "", *table(section), ""]
    common = frozenset(SourceOptions.model_fields)
    lines += [
        "## `[[sources]]`: keys of every kind",
        "",
        (SourceOptions.__doc__ or "").strip(),
        "",
        *table(SourceOptions),
        "",
    ]
    for kind in sorted(REGISTRY):
        model = collector_class(kind).options_model
        lines += [
            f'## `kind = "{kind}"`',
            "",
            (model.__doc__ or "").strip(),
            "",
            *table(model, common),
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else Path("docs/config.md")
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
