"""Keys: private keys are written 0600 whatever the umask, never reach a log, an output, the
store or an attestation; loose permissions are refused with a hint; passphrases work."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from provenance.attest import keys
from tests.conftest import GitRepo, run_git
from tests.reliability import figures
from tests.reliability.evidence import run_cli

PASSPHRASE = "correct horse battery staple 8"


def prov(cwd: Path, *args: str, password: str | None = None) -> subprocess.CompletedProcess[str]:
    """``prov -v ...`` as its own process: verbose logging on, exactly as a user would see."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROV_")}
    if password is not None:
        env[keys.PASSWORD_ENV] = password
    return subprocess.run(
        [sys.executable, "-m", "provenance", "-v", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def secrets_of(key_file: Path, password: str | None) -> list[bytes]:
    """Every spelling of a private key that must never leave its file."""
    data = key_file.read_bytes()
    private = serialization.load_pem_private_key(data, password.encode() if password else None)
    raw = private.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    body = [line for line in data.splitlines() if line and not line.startswith(b"-----")]
    spellings = [raw, raw.hex().encode(), base64.b64encode(raw), *body]
    if password:
        spellings.append(password.encode())
    return spellings


def leaks(haystack: bytes, secrets: list[bytes]) -> list[bytes]:
    return [secret for secret in secrets if secret in haystack]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    repo = GitRepo(tmp_path / "project")
    repo.write("train.py", "STEPS = 390_251\n")
    repo.commit()
    yield repo.path


@pytest.mark.parametrize("algorithm", ["ed25519", "ecdsa-p256"])
@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_private_keys_are_0600_whatever_the_umask(
    tmp_path: Path, algorithm: str, umask: int
) -> None:
    old = os.umask(umask)
    try:
        private, public = keys.generate(tmp_path, "k", algorithm)  # type: ignore[arg-type]
    finally:
        os.umask(old)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert stat.S_IMODE(public.stat().st_mode) == 0o644 & ~umask
    assert (tmp_path / ".gitignore").read_text() == "*.key\n"
    figures.count("keys", "checks passed")


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660, 0o620, 0o602, 0o666, 0o777])
def test_a_key_file_with_loose_permissions_is_refused_with_a_hint(project: Path, mode: int) -> None:
    assert prov(project, "init", "--keygen", "alice").returncode == 0
    key = project / "keys" / "alice.key"
    key.chmod(mode)
    result = prov(project, "snapshot", "--label", "m1", "--key", "keys/alice.key")
    assert result.returncode == 3, result.stderr
    assert f"(mode {mode:04o})" in result.stderr
    assert "hint: run `chmod 600 keys/alice.key`" in result.stderr
    assert not (project / "attestations" / "m1.intoto.jsonl").exists()
    key.chmod(0o600)
    assert prov(project, "snapshot", "--label", "m1", "--key", "keys/alice.key").returncode == 0
    figures.count("keys", "checks passed")


def test_a_symlink_to_a_loose_key_is_refused(project: Path) -> None:
    assert prov(project, "init", "--keygen", "alice").returncode == 0
    (project / "keys" / "alice.key").chmod(0o644)
    (project / "link.key").symlink_to(project / "keys" / "alice.key")
    link = os.lstat(project / "link.key")
    assert stat.S_ISLNK(link.st_mode)  # the link itself is 0777: the target's mode is what counts
    result = prov(project, "snapshot", "--label", "m1", "--key", "link.key")
    assert result.returncode == 3 and "chmod 600" in result.stderr
    figures.count("keys", "checks passed")


@pytest.mark.parametrize("algorithm", ["ed25519", "ecdsa-p256"])
def test_passphrase_encrypted_keys_sign_and_never_leak(project: Path, algorithm: str) -> None:
    keygen = ("keygen", "alice", "--algorithm", algorithm, "--encrypt")
    runs = [prov(project, "init"), prov(project, *keygen, password=PASSPHRASE)]
    key = project / "keys" / "alice.key"
    assert b"ENCRYPTED PRIVATE KEY" in key.read_bytes()
    secrets = secrets_of(key, PASSPHRASE)
    good = prov(
        project, "snapshot", "--label", "m1", "--key", "keys/alice.key", password=PASSPHRASE
    )
    assert good.returncode == 0, good.stderr
    runs.append(good)
    refusals = {
        "wrong passphrase": prov(
            project, "snapshot", "--label", "x", "--key", "keys/alice.key", password="wrong"
        ),
        "is encrypted": prov(project, "snapshot", "--label", "x", "--key", "keys/alice.key"),
        "not a PEM public key": prov(
            project, "verify", "attestations/m1.intoto.jsonl", "--key", "keys/alice.key"
        ),
    }
    for message, result in refusals.items():
        assert result.returncode == 3 and message in result.stderr, result.stderr
    runs += refusals.values()
    verified = prov(project, "verify", "attestations/m1.intoto.jsonl", "--key", "keys/alice.pub")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    runs.append(verified)
    runs.append(prov(project, "show", "m1", "--format", "json"))
    runs.append(prov(project, "log"))
    runs.append(prov(project, "fsck"))
    for result in runs:
        assert leaks((result.stdout + result.stderr).encode(), secrets) == [], result.args
    for path in project.rglob("*"):
        if path.is_file() and path != key and ".git" not in path.parts:
            assert leaks(path.read_bytes(), secrets) == [], path
    figures.count("keys", "checks passed")


def test_an_unencrypted_key_refuses_a_passphrase(project: Path) -> None:
    assert prov(project, "init", "--keygen", "alice").returncode == 0
    result = prov(project, "snapshot", "--label", "m1", "--key", "keys/alice.key", password="x")
    assert result.returncode == 3
    assert "is not encrypted, but a passphrase was given" in result.stderr
    figures.count("keys", "checks passed")


def test_the_passphrase_prompt_asks_twice_and_encrypts(tmp_path: Path) -> None:
    env = {keys.PASSWORD_ENV: None}
    no_answer = run_cli("keygen", "bob", "--dir", str(tmp_path), "--encrypt", env=env)
    assert no_answer[0] != 0  # no input at all: the prompt aborts, nothing is written
    assert not (tmp_path / "bob.key").exists()
    from click.testing import CliRunner

    from provenance.cli import cli

    result = CliRunner().invoke(
        cli,
        ["keygen", "bob", "--dir", str(tmp_path), "--encrypt"],
        input=f"{PASSPHRASE}\n{PASSPHRASE}\n",
        env=env,
    )
    assert result.exit_code == 0, result.output
    assert PASSPHRASE not in result.output  # hidden input is not echoed
    keys.load_signer(tmp_path / "bob.key", PASSPHRASE)
    figures.count("keys", "checks passed")


def test_a_committed_keys_folder_keeps_the_private_key_out_of_the_capture(project: Path) -> None:
    """`prov init --keygen` then `git add -A`: the .gitignore keeps alice.key out of git, so
    the next snapshot neither lists it nor stores its bytes."""
    assert prov(project, "init", "--keygen", "alice").returncode == 0
    run_git(project, "add", "-A")
    run_git(project, "commit", "-q", "-m", "prov set-up")
    tracked = run_git(project, "ls-files").splitlines()
    assert "keys/alice.pub" in tracked and "keys/alice.key" not in tracked
    result = prov(project, "snapshot", "--label", "m1", "--key", "keys/alice.key")
    assert result.returncode == 0, result.stderr
    secrets = secrets_of(project / "keys" / "alice.key", None)
    for path in (project / ".prov").rglob("*"):
        if path.is_file():
            assert leaks(path.read_bytes(), secrets) == [], path
    envelope = json.loads((project / "attestations" / "m1.intoto.jsonl").read_bytes())
    statement = base64.b64decode(envelope["payload"])
    assert b"keys/alice.pub" in statement and b"keys/alice.key" not in statement
    figures.count("keys", "checks passed")
