"""The W&B public GraphQL API, as far as the ``Run`` query goes.

Answers like api.wandb.ai: HTTP 401 with a GraphQL ``errors`` document for a wrong key; 200 with
``project: null`` or ``run: null`` for what does not exist; otherwise the run with only the
top-level fields the query selects on ``run`` (fragment spreads expanded).
"""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING, Any

from provenance._testing.fixtures import Fixtures

if TYPE_CHECKING:
    from provenance._testing.server import Handler, Request


def graphql(handler: Handler, request: Request, fixtures: Fixtures) -> None:
    if fixtures.wandb_api_key is not None:
        expected = "Basic " + base64.b64encode(f"api:{fixtures.wandb_api_key}".encode()).decode()
        if request.header("authorization") != expected:
            handler.send_json(
                401,
                {"errors": [{"message": "user is not logged in", "path": ["project"]}]},
            )
            return
    try:
        payload = json.loads(request.body)
        query = str(payload["query"])
        variables = dict(payload.get("variables") or {})
    except (ValueError, KeyError, TypeError):
        handler.send_json(400, {"errors": [{"message": "Must provide query string."}]})
        return
    if not re.search(r"project\s*\(\s*name\s*:", query) or not re.search(r"run\s*\(", query):
        handler.send_json(400, {"errors": [{"message": "only the Run query is served here"}]})
        return
    entity, project, name = (str(variables.get(k, "")) for k in ("entity", "project", "name"))
    if not fixtures.has_project(entity, project):
        handler.send_json(200, {"data": {"project": None}})
        return
    run = fixtures.run(entity, project, name)
    if run is None:
        handler.send_json(200, {"data": {"project": {"run": None}}})
        return
    asked = _run_fields(query)
    selected: dict[str, Any] = {k: v for k, v in run.wire().items() if k in asked}
    handler.send_json(200, {"data": {"project": {"run": selected}}})


def _selection(text: str, start: int) -> str:
    """The text inside the braces that open at or after ``start``."""
    opening = text.index("{", start)
    depth = 0
    for index in range(opening, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[opening + 1 : index]
    raise ValueError("unbalanced braces")


def _run_fields(query: str) -> set[str]:
    """The field names selected directly on ``run(...)``, nested selections left out."""
    match = re.search(r"run\s*\([^)]*\)", query)
    if match is None:
        return set()
    pending = [_selection(query, match.end())]
    fields: set[str] = set()
    while pending:
        body = pending.pop()
        depth = 0
        flat = []
        for char in body:
            depth += {"{": 1, "(": 1, "}": -1, ")": -1}.get(char, 0)
            flat.append(char if depth == 0 and char not in "})" else " ")
        for token in re.findall(r"(\.\.\.)?\s*([A-Za-z_][A-Za-z0-9_]*)", "".join(flat)):
            if token[0]:
                fragment = re.search(rf"fragment\s+{token[1]}\s+on\s+\w+", query)
                if fragment:
                    pending.append(_selection(query, fragment.end()))
            else:
                fields.add(token[1])
    return fields
