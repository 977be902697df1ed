"""Acceptance: planted credentials appear in zero bytes of the store, attestations, WARC, output.

The server is made to echo them back (an echo endpoint, a W&B config that logged its own
environment), so the test fails if anything is kept unscrubbed, not only if headers leak.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from provenance._testing.fixtures import Fixtures
from provenance._testing.server import LocalServer


def needles(tokens: dict[str, str]) -> dict[str, bytes]:
    found = {name: token.encode() for name, token in tokens.items()}
    found["wandb-basic"] = base64.b64encode(f"api:{tokens['wandb']}".encode())
    for name, token in tokens.items():
        found[f"{name}-b64"] = base64.b64encode(token.encode())
    return found


def views(path: Path) -> list[bytes]:
    """A file's bytes, and what hides inside: gzip members, DSSE payloads."""
    data = path.read_bytes()
    out = [data]
    if data[:2] == b"\x1f\x8b":
        out.append(gzip.decompress(data))
    for chunk in list(out):
        for line in chunk.splitlines():
            try:
                document = json.loads(line)
            except ValueError:
                continue
            if isinstance(document, dict) and isinstance(document.get("payload"), str):
                out.append(base64.b64decode(document["payload"]))
    return out


def run(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    prov = Path(sys.executable).parent / "prov"
    return subprocess.run(
        [str(prov), *args], cwd=project, env=env, capture_output=True, timeout=120
    )


def test_planted_tokens_never_reach_anything_prov_writes(
    tmp_path: Path,
    marin_fixtures: Fixtures,
    prov: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tokens = {
        "wandb": f"wandbkey{uuid.uuid4().hex}",
        "hf": f"hf_{uuid.uuid4().hex}",
        "authorization": f"authz{uuid.uuid4().hex}",
        "signed": f"sig{uuid.uuid4().hex}",
    }
    marin_fixtures.wandb_api_key = tokens["wandb"]
    # A careless launcher logged its environment into the W&B config: the API echoes the key.
    marin_fixtures.wandb_runs[0].fields["config"]["launcher_env"] = {
        "WANDB_API_KEY": tokens["wandb"],
        "HF_TOKEN": tokens["hf"],
    }
    marin_fixtures.hf_token = tokens["hf"]
    marin_fixtures.hf_repos[0].private = True  # so the HF token is really needed and sent
    project = tmp_path / "project"
    project.mkdir()
    with LocalServer(marin_fixtures) as server:
        signed = (
            f"{server.url}/echo?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600"
            f"&X-Amz-Signature={tokens['signed']}"
        )
        (project / "prov.toml").write_text(
            f"""\
[defaults]
timeout = 5
backoff = 0.01

[[sources]]
name = "hero-run"
kind = "wandb"
run = "marin-community/marin_moe/hero-12d8b6f0-dee637"

[[sources]]
name = "token-counts"
kind = "huggingface"
repo = "marin-community/token-counts"
repo_type = "dataset"
files = ["data/token_counts.csv", "README.md"]

[[sources]]
name = "echo-authorization"
kind = "http"
url = "{server.url}/echo"
headers = {{ Authorization = "Bearer {tokens["authorization"]}" }}

[[sources]]
name = "echo-signed-url"
kind = "http"
url = "{signed}"
"""
        )
        planted = {
            "WANDB_BASE_URL": server.url,
            "WANDB_API_KEY": tokens["wandb"],
            "HF_ENDPOINT": server.url,
            "HF_TOKEN": tokens["hf"],
        }
        for name, value in planted.items():
            monkeypatch.setenv(name, value)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROV_")}
        monkeypatch.chdir(project)
        outputs = [
            prov("keygen", "k"),
            # The snapshot runs as its own process, so -v logging reaches the real stderr.
            run(project, env, "-v", "snapshot", "--label", "s1", "--key", "keys/k.key"),
            prov("show", "s1"),
            prov("show", "s1", "--format", "json"),
            prov("log"),
            prov("export-warc", "s1", "-o", "captures.warc.gz"),
            prov("export-warc", "s1", "-o", "captures.warc"),
            prov("verify", "attestations/s1.intoto.jsonl", "--key", "keys/k.pub"),
        ]
        echoes = [r for r in server.requests if r.path == "/echo"]
        cdn = [r for r in server.requests if r.path.startswith("/hf-cdn/")]

    codes = [
        o.returncode if isinstance(o, subprocess.CompletedProcess) else o.exit_code for o in outputs
    ]
    assert codes == [0] * len(outputs), outputs[1].stderr
    # The credentials really travelled, and the server really sent them back.
    assert any(r.header("authorization") == f"Bearer {tokens['authorization']}" for r in echoes)
    assert any(tokens["signed"] in r.target for r in echoes)
    show = json.loads(outputs[3].stdout)
    captures = {c["source"]: c for c in show["snapshot"]["captures"]}
    assert captures["echo-authorization"]["data"]["body"]["scrubbed"] >= 1
    assert captures["echo-signed-url"]["data"]["body"]["scrubbed"] >= 1
    # Raw bytes are masked in place (same length), and the config is parsed from those bytes.
    masked = captures["hero-run"]["data"]["config"]["launcher_env"]["WANDB_API_KEY"]
    assert masked == "*" * len(tokens["wandb"])
    assert captures["token-counts"]["status"] == "ok"  # the private repo was read with the token
    cdn_signature = cdn[0].param("X-Amz-Signature")
    assert cdn_signature
    tokens["cdn-signature"] = cdn_signature

    haystacks: dict[str, list[bytes]] = {}
    for path in sorted(project.rglob("*")):
        if path.is_file() and path.name != "prov.toml" and "keys" not in path.parts:
            haystacks[str(path.relative_to(project))] = views(path)
    for index, output in enumerate(outputs):
        for stream in ("stdout", "stderr"):
            text = getattr(output, stream)
            haystacks[f"command {index} {stream}"] = [
                text if isinstance(text, bytes) else text.encode()
            ]
    assert any(name.startswith(".prov/objects/") for name in haystacks)
    assert "captures.warc.gz" in haystacks and "attestations/s1.intoto.jsonl" in haystacks

    leaks = [
        (needle_name, where)
        for needle_name, needle in needles(tokens).items()
        for where, contents in haystacks.items()
        if any(needle in content for content in contents)
    ]
    assert leaks == []
