"""The W&B public GraphQL API, as far as the ``Run`` query goes.

Answers like api.wandb.ai: HTTP 401 with a GraphQL ``errors`` document for a wrong key; 200 with
``project: null`` or ``run: null`` for what does not exist; otherwise the run with only the
fields the query names (a crude but honest selection: a field is sent if the query mentions it).
"""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING, Any

from provenance.testing.fixtures import Fixtures

if TYPE_CHECKING:
    from provenance.testing.server import Handler, Request


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
    asked = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query))
    selected: dict[str, Any] = {k: v for k, v in run.wire().items() if k in asked}
    handler.send_json(200, {"data": {"project": {"run": selected}}})
