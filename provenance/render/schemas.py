"""JSON Schemas of prov's documents, generated from the models.

``python -m provenance.render.schemas schemas`` rewrites ``schemas/``; a test fails when the
committed files and the models disagree, so the published contract can never drift silently.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from provenance.model import DRAFT, snapshot_schema, witness_schema


def diff_schema() -> dict[str, Any]:
    from provenance.compare.diff import SCHEMA, Diff

    schema = Diff.model_json_schema(mode="serialization", by_alias=True)
    schema["required"] = ["schema", *schema["required"]]  # the tag is always written
    return {"$schema": DRAFT, "$id": SCHEMA, **schema}


def claims_report_schema() -> dict[str, Any]:
    from provenance.compare.claims import SCHEMA, ClaimsReport

    schema = ClaimsReport.model_json_schema(mode="serialization", by_alias=True)
    schema["required"] = ["schema", *schema["required"]]
    return {"$schema": DRAFT, "$id": SCHEMA, **schema}


def note_schema() -> dict[str, Any]:
    from provenance.model import NOTE_PREDICATE_TYPE, Note

    schema = Note.model_json_schema(mode="serialization")
    return {"$schema": DRAFT, "$id": NOTE_PREDICATE_TYPE, **schema}


def recheck_report_schema() -> dict[str, Any]:
    from provenance.compare.recheck import SCHEMA, RecheckReport

    schema = RecheckReport.model_json_schema(mode="serialization", by_alias=True)
    schema["required"] = ["schema", *schema["required"]]
    return {"$schema": DRAFT, "$id": SCHEMA, **schema}


def site_schema() -> dict[str, Any]:
    from provenance.render.site_model import SCHEMA, Site

    schema = Site.model_json_schema(mode="serialization", by_alias=True)
    schema["required"] = ["schema", *schema["required"]]
    return {"$schema": DRAFT, "$id": SCHEMA, **schema}


def witness_run_schema() -> dict[str, Any]:
    from provenance.compare.witness import RUN_SCHEMA, WitnessRun

    schema = WitnessRun.model_json_schema(mode="serialization", by_alias=True)
    schema["required"] = ["schema", *schema["required"]]
    return {"$schema": DRAFT, "$id": RUN_SCHEMA, **schema}


SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "snapshot.v1.schema.json": snapshot_schema,
    "diff.v1.schema.json": diff_schema,
    "claims-report.v1.schema.json": claims_report_schema,
    "note.v1.schema.json": note_schema,
    "witness.v1.schema.json": witness_schema,
    "recheck-report.v1.schema.json": recheck_report_schema,
    "witness-run.v1.schema.json": witness_run_schema,
    "site.v1.schema.json": site_schema,
}


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else Path("schemas")
    target.mkdir(exist_ok=True)
    for name, build in SCHEMAS.items():
        (target / name).write_text(render(build()))
        print(f"wrote {target / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
