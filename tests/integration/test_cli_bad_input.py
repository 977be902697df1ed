"""Bad input gets a clear message and the documented exit code, and writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.conftest import GitRepo

Prov = Callable[..., Result]


@pytest.fixture
def ready(project: Path, prov: Prov) -> Path:
    repo = GitRepo(project)
    repo.write("a.txt", "a\n")
    repo.commit()
    prov("init")
    prov("keygen", "alice")
    return project


def written(project: Path) -> list[str]:
    attestations = sorted(p.name for p in (project / "attestations").iterdir())
    store = project / ".prov" / "objects"
    objects = sorted(str(p) for p in store.rglob("*") if p.is_file()) if store.exists() else []
    return attestations + objects


def set_source(project: Path, old: str, new: str) -> None:
    config = project / "prov.toml"
    config.write_text(config.read_text().replace(old, new))


@pytest.mark.parametrize(
    ("setup", "code", "message"),
    [
        (lambda p: (p / "prov.toml").unlink(), 2, "no configuration file at prov.toml"),
        (lambda p: (p / "prov.toml").write_text("[[sources]\n"), 2, "not valid TOML"),
        (lambda p: set_source(p, 'kind = "git"', 'kind = "svn"'), 2, "unknown kind 'svn'"),
        (
            lambda p: set_source(p, 'repo = "."', 'repo = "gone"'),
            3,
            "repository 'gone' does not exist",
        ),
        (
            lambda p: set_source(p, 'ref = "HEAD"', 'ref = "nope"'),
            3,
            "ref 'nope' does not name a commit",
        ),
    ],
)
def test_bad_config_or_source(
    ready: Path, prov: Prov, setup: Callable[[Path], object], code: int, message: str
) -> None:
    setup(ready)
    result = prov("snapshot", "--label", "x", "--key", "keys/alice.key")
    assert result.exit_code == code, result.output
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert written(ready) == []


@pytest.mark.parametrize(
    ("key", "password", "message"),
    [
        ("keys/nobody.key", None, "private key keys/nobody.key does not exist"),
        ("keys/alice.pub", None, "is not a PEM private key"),
        ("prov.toml", None, "is not a PEM private key"),
        ("keys/secret.key", None, "is encrypted"),
        ("keys/secret.key", "wrong passphrase", "wrong passphrase"),
    ],
)
def test_bad_signing_keys(
    ready: Path,
    prov: Prov,
    monkeypatch: pytest.MonkeyPatch,
    key: str,
    password: str | None,
    message: str,
) -> None:
    monkeypatch.setenv("PROV_KEY_PASSWORD", "correct horse")
    assert prov("keygen", "secret", "--encrypt").exit_code == 0
    if password:
        monkeypatch.setenv("PROV_KEY_PASSWORD", password)
    else:
        monkeypatch.delenv("PROV_KEY_PASSWORD")
    (ready / "keys" / "alice.pub").chmod(0o600)
    (ready / "prov.toml").chmod(0o600)
    result = prov("snapshot", "--label", "x", "--key", key)
    assert result.exit_code == 3, result.output
    assert message in result.stderr
    assert written(ready) == []


def test_an_encrypted_key_signs_with_its_passphrase(
    ready: Path, prov: Prov, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROV_KEY_PASSWORD", "correct horse")
    assert prov("keygen", "secret", "--encrypt").exit_code == 0
    assert b"ENCRYPTED PRIVATE KEY" in (ready / "keys" / "secret.key").read_bytes()
    assert prov("snapshot", "--label", "x", "--key", "keys/secret.key").exit_code == 0
    assert prov("verify", "attestations/x.intoto.jsonl", "--key", "keys/secret.pub").exit_code == 0


def test_private_keys_are_0600_and_loose_ones_are_refused(ready: Path, prov: Prov) -> None:
    key = ready / "keys" / "alice.key"
    assert key.stat().st_mode & 0o777 == 0o600
    key.chmod(0o644)
    result = prov("snapshot", "--label", "x", "--key", "keys/alice.key")
    assert result.exit_code == 3
    assert "chmod 600" in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"payload": "eyJf', "is not JSON"),
        (b"not json at all\n", "is not JSON"),
        (b"", "is empty"),
        (b'{"payload": "", "payloadType": "application/vnd.in-toto+json"}\n', "no signatures list"),
        (b"[1, 2]\n", "is not a JSON object"),
    ],
)
def test_truncated_or_non_json_envelopes(
    ready: Path, prov: Prov, content: bytes, message: str
) -> None:
    (ready / "bad.intoto.jsonl").write_bytes(content)
    result = prov("verify", "bad.intoto.jsonl", "--key", "keys/alice.pub")
    assert result.exit_code == 1, result.output
    assert message in result.stderr


def test_verify_needs_a_trusted_key_and_an_existing_file(ready: Path, prov: Prov) -> None:
    assert prov("verify", "missing.intoto.jsonl", "--key", "keys/alice.pub").exit_code == 3
    result = prov("verify", "missing.intoto.jsonl")
    assert result.exit_code == 2
    assert "no trust policy" in result.stderr


def test_snapshot_needs_a_signing_choice(ready: Path, prov: Prov) -> None:
    result = prov("snapshot", "--label", "x")
    assert result.exit_code == 2
    assert "--no-sign" in result.stderr


def test_verbose_shows_the_traceback(ready: Path) -> None:
    env = {**os.environ, "PROV_CONFIG": "missing.toml"}
    quiet = subprocess.run(
        [sys.executable, "-m", "provenance", "snapshot", "--no-sign"],
        cwd=ready,
        env=env,
        capture_output=True,
        text=True,
    )
    loud = subprocess.run(
        [sys.executable, "-m", "provenance", "-v", "snapshot", "--no-sign"],
        cwd=ready,
        env=env,
        capture_output=True,
        text=True,
    )
    assert quiet.returncode == loud.returncode == 2
    assert "Traceback" not in quiet.stderr
    assert "Traceback" in loud.stderr
