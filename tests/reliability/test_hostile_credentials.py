"""Credentials stay with their origin and out of what prov keeps (issue 13, classes 6 and 7).

A real ``prov snapshot`` captures real servers on 127.0.0.1. One source sends credentials under
names no fixed list knows (``PRIVATE-TOKEN``, ``X-Vault-Token``, ``Api-Key``) and one whose
value comes from the environment under a harmless name (``X-Custom: ${VAR}``); its server
redirects to another origin (``localhost``), which must receive none of them. Another server
answers with ``X-Session-Token`` and a URL holding ``password=`` and ``auth=``: none of those
values may reach the attestation or the store. A third redirects to a link-local address (a
cloud metadata endpoint) on another host: refused, and nothing fetched from there is signed.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.server import LocalServer
from tests.reliability import figures
from tests.reliability.evidence import run_cli

SECRETS = {
    "PRIVATE-TOKEN": "glpat-private-0123456789",
    "X-Vault-Token": "hvs.vault-0123456789",
    "Api-Key": "apikey-0123456789abcdef",
    "X-Custom": "from-the-environment-0123456789",
}
SESSION = "session-secret-0123456789"
QUERY = {"password": "hunter2hunter2hunter2", "auth": "authvalue-0123456789"}


def _kept(root: Path) -> bytes:
    """Every byte prov wrote (the store's objects and index), and the signed statements."""
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and p.name != "prov.toml"]
    statements = [
        base64.b64decode(json.loads(p.read_bytes())["payload"])
        for p in files
        if p.name.endswith(".intoto.jsonl")
    ]
    return b"".join([*(p.read_bytes() for p in files), *statements])


def test_credentials_never_cross_origins_nor_reach_the_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = Fixtures()
    with LocalServer(fixtures) as server:
        other = f"http://localhost:{server.port}"
        fixtures.routes += [
            Route("/hop", status=302, redirect=f"{other}/echo"),
            Route("/session", headers=[("X-Session-Token", SESSION)], body=b"{}"),
            Route("/to-metadata", status=307, redirect="http://169.254.169.254/latest/"),
        ]
        headers = {k: v for k, v in SECRETS.items() if k != "X-Custom"}
        headers["X-Custom"] = "${CUSTOM_VALUE}"
        monkeypatch.setenv("CUSTOM_VALUE", SECRETS["X-Custom"])
        inline = ", ".join(f'"{k}" = "{v}"' for k, v in headers.items())
        query = "&".join(f"{k}={v}" for k, v in QUERY.items())
        config = tmp_path / "prov.toml"
        config.write_text(
            "[defaults]\ntimeout = 5\nretries = 0\n"
            f'[[sources]]\nname = "hop"\nkind = "http"\nurl = "{server.url}/hop"\n'
            f"headers = {{ {inline} }}\n"
            f'[[sources]]\nname = "session"\nkind = "http"\nurl = "{server.url}/session?{query}"\n'
            f'[[sources]]\nname = "metadata"\nkind = "http"\nurl = "{server.url}/to-metadata"\n'
        )
        code, out, err, unexpected = run_cli(
            "snapshot", "-c", str(config), "--label", "m1", "--no-sign"
        )
        sent_on = [r for r in server.requests if r.path == "/echo"]
    assert unexpected is None, err
    assert code == 4, (code, out, err)  # the metadata redirect is recorded as a failed capture
    assert len(sent_on) == 1 and sent_on[0].header("host") == f"localhost:{server.port}"
    crossed = [name for name in SECRETS if sent_on[0].header(name) is not None]
    kept = _kept(tmp_path)
    leaked = [v for v in [*SECRETS.values(), SESSION, *QUERY.values()] if v.encode() in kept]
    figures.count("hostile:credentials", "credentials planted", len(SECRETS) + 1 + len(QUERY))
    figures.count("hostile:credentials", "wrongly sent to another origin", len(crossed))
    figures.count("hostile:credentials", "wrongly kept in clear", len(leaked))
    assert crossed == [] and leaked == []
    assert b"redirect-refused" in kept and b"another host" in kept
    figures.count("hostile:internal-redirects", "refused", 1)
    assert os.environ["CUSTOM_VALUE"]  # the value really came from the environment
