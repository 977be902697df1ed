"""Registry credentials from docker's ``config.json``, read when needed and never stored.

The file is ``$DOCKER_CONFIG/config.json`` or ``~/.docker/config.json``. An ``auths`` entry gives
``auth`` (base64 ``user:password``), ``username``/``password`` or an ``identitytoken``; a
``credHelpers`` entry or a ``credsStore`` names a ``docker-credential-<helper>`` program that is
asked with ``get``, as docker itself does.
"""

from __future__ import annotations

import base64
import binascii
import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from provenance._internal.oci.reference import DOCKER_HUB
from provenance.errors import UsageError

_HUB_KEYS = ("https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io")


@dataclass(frozen=True)
class Credentials:
    """A user name with a password, or an identity (refresh) token. The secret never prints."""

    username: str
    secret: str = field(repr=False)
    identity_token: bool = False
    origin: str = "docker-config"

    def basic(self) -> str:
        raw = f"{self.username}:{self.secret}".encode()
        return "Basic " + base64.b64encode(raw).decode()


def config_path(env: Mapping[str, str]) -> Path | None:
    if directory := env.get("DOCKER_CONFIG"):
        return Path(directory) / "config.json"
    if home := env.get("HOME"):
        return Path(home) / ".docker" / "config.json"
    return None


def lookup(registry: str, env: Mapping[str, str]) -> Credentials | None:
    """The credentials docker would use for ``registry``, or None (anonymous)."""
    path = config_path(env)
    if path is None or not path.is_file():
        return None
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UsageError(
            f"cannot read the docker credentials file {path}",
            cause=str(e),
            hint="fix or remove it (prov reads it only for registry logins)",
        ) from e
    if not isinstance(config, dict):
        raise UsageError(f"the docker credentials file {path} is not a JSON object")
    keys = _HUB_KEYS if registry == DOCKER_HUB else (registry, f"https://{registry}")
    helpers = config.get("credHelpers") or {}
    for key in keys:
        if isinstance(helpers, dict) and isinstance(helpers.get(key), str):
            return _from_helper(helpers[key], key, env)
    auths = config.get("auths") or {}
    for key in keys:
        entry = auths.get(key) if isinstance(auths, dict) else None
        if isinstance(entry, dict) and (found := _from_entry(entry, path, key)):
            return found
    store = config.get("credsStore")
    if isinstance(store, str) and store:
        return _from_helper(store, keys[0], env)
    return None


def _from_entry(entry: dict[str, Any], path: Path, key: str) -> Credentials | None:
    username, secret = entry.get("username"), entry.get("password")
    if isinstance(entry.get("auth"), str) and entry["auth"]:
        try:
            decoded = base64.b64decode(entry["auth"], validate=True).decode()
        except (binascii.Error, UnicodeDecodeError) as e:
            raise UsageError(
                f"{path}: the auth entry for {key!r} is not base64 user:password"
            ) from e
        username, _, secret = decoded.partition(":")
    token = entry.get("identitytoken")
    if isinstance(token, str) and token:
        return Credentials(str(username or "<token>"), token, identity_token=True)
    if isinstance(username, str) and isinstance(secret, str) and username:
        return Credentials(username, secret)
    return None


def _from_helper(helper: str, server: str, env: Mapping[str, str]) -> Credentials | None:
    program = f"docker-credential-{helper}"
    try:
        result = subprocess.run(
            [program, "get"],
            input=server.encode(),
            capture_output=True,
            timeout=30,
            check=False,
            env=dict(env),
        )
    except (OSError, subprocess.TimeoutExpired):
        # docker treats a missing helper as "no credentials" for pulls; so do we.
        return None
    if result.returncode != 0:
        return None  # the helper's way of saying "no credentials for this server"
    try:
        answer = json.loads(result.stdout)
        username, secret = answer["Username"], answer["Secret"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(username, str) or not isinstance(secret, str) or not secret:
        return None
    if username == "<token>":
        return Credentials(username, secret, identity_token=True, origin=program)
    return Credentials(username, secret, origin=program)
