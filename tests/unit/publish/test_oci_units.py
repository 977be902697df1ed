"""Image references, auth challenges, docker credentials and cross-check selection."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from provenance._internal.oci import credentials
from provenance._internal.oci.client import parse_challenge
from provenance._internal.oci.reference import parse
from provenance.capture import crosscheck
from provenance.errors import UsageError
from provenance.model import Capture

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("text", "registry", "repository", "tag", "digest"),
    [
        ("ubuntu", "docker.io", "library/ubuntu", "latest", None),
        ("marin/trainer:v1", "docker.io", "marin/trainer", "v1", None),
        ("ghcr.io/marin-community/trainer:2026-08-21", "ghcr.io", "marin-community/trainer",
         "2026-08-21", None),
        (f"oci://127.0.0.1:5000/team/x@{DIGEST}", "127.0.0.1:5000", "team/x", None, DIGEST),
        (f"localhost/a/b/c:t@{DIGEST}", "localhost", "a/b/c", "t", DIGEST),
        ("[::1]:5000/x:y", "[::1]:5000", "x", "y", None),
    ],
)  # fmt: skip
def test_references_parse_as_docker_does(
    text: str, registry: str, repository: str, tag: str | None, digest: str | None
) -> None:
    reference = parse(text)
    assert (reference.registry, reference.repository) == (registry, repository)
    assert (reference.tag, reference.digest) == (tag, digest)
    assert reference.reference == (digest or tag)


def test_loopback_and_api_host() -> None:
    assert parse("127.0.0.1:5000/x").is_loopback
    assert parse("localhost:5000/x").is_loopback
    assert parse("[::1]:5000/x").is_loopback
    assert not parse("ghcr.io/x").is_loopback
    assert not parse("127.0.0.1.example.org/x").is_loopback
    assert parse("ubuntu").api_host == "registry-1.docker.io"


@pytest.mark.parametrize(
    "text",
    ["Upper/Case:v1", "ghcr.io/x@sha256:abc", "ghcr.io/x:bad tag", "https://ghcr.io/x", "", "a//b"],
)
def test_invalid_references_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="invalid image reference"):
        parse(text)


def test_challenges_parse_with_quotes_and_commas() -> None:
    challenge = parse_challenge(
        'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",'
        'scope="repository:library/ubuntu:pull,push",error="insufficient_scope"'
    )
    assert challenge is not None
    assert challenge.scheme == "Bearer"
    assert challenge.params == {
        "realm": "https://auth.docker.io/token",
        "service": "registry.docker.io",
        "scope": "repository:library/ubuntu:pull,push",
        "error": "insufficient_scope",
    }
    basic = parse_challenge('basic realm="Registry Realm"')
    assert basic is not None and basic.scheme == "Basic"


# -- docker credentials ----------------------------------------------------------------------


def write_docker_config(folder: Path, document: dict[str, Any]) -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(document))
    return {"DOCKER_CONFIG": str(folder), "PATH": "/usr/bin:/bin"}


def test_credentials_from_auths(tmp_path: Path) -> None:
    auth = base64.b64encode(b"alice:s3cret:with:colons").decode()
    env = write_docker_config(
        tmp_path,
        {
            "auths": {
                "registry.example.org": {"auth": auth},
                "https://other.example.org": {"username": "bob", "password": "pw"},
                "tokens.example.org": {"identitytoken": "refresh-xyz"},
            }
        },
    )
    found = credentials.lookup("registry.example.org", env)
    assert found is not None
    assert (found.username, found.secret) == ("alice", "s3cret:with:colons")
    assert "s3cret" not in repr(found)
    other = credentials.lookup("other.example.org", env)
    assert other is not None and other.username == "bob"
    token = credentials.lookup("tokens.example.org", env)
    assert token is not None and token.identity_token and token.secret == "refresh-xyz"
    assert credentials.lookup("unknown.example.org", env) is None


def test_docker_hub_uses_its_legacy_key(tmp_path: Path) -> None:
    auth = base64.b64encode(b"hubuser:pw").decode()
    env = write_docker_config(tmp_path, {"auths": {"https://index.docker.io/v1/": {"auth": auth}}})
    found = credentials.lookup("docker.io", env)
    assert found is not None and found.username == "hubuser"


def test_credential_helpers_are_asked(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helper = bin_dir / "docker-credential-fake"
    helper.write_text(
        "#!/bin/sh\n"
        "read server\n"
        'if [ "$1" = get ] && [ "$server" = helper.example.org ]; then\n'
        '  echo \'{"ServerURL":"helper.example.org","Username":"carol","Secret":"from-helper"}\'\n'
        "else\n  echo 'credentials not found in native keychain'; exit 1\nfi\n"
    )
    helper.chmod(0o755)
    env = write_docker_config(tmp_path / "cfg", {"credHelpers": {"helper.example.org": "fake"}})
    env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    found = credentials.lookup("helper.example.org", env)
    assert found is not None
    assert (found.username, found.secret, found.origin) == (
        "carol",
        "from-helper",
        "docker-credential-fake",
    )
    store_env = write_docker_config(tmp_path / "store", {"credsStore": "fake"})
    store_env["PATH"] = env["PATH"]
    assert credentials.lookup("elsewhere.example.org", store_env) is None  # helper said no
    missing = write_docker_config(tmp_path / "missing", {"credsStore": "absent"})
    assert credentials.lookup("x.example.org", missing) is None


def test_a_corrupt_docker_config_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(UsageError, match="docker credentials file"):
        credentials.lookup("x.example.org", {"DOCKER_CONFIG": str(tmp_path)})


# -- configuration ---------------------------------------------------------------------------


def test_plain_http_to_a_remote_registry_is_refused_at_its_line(
    project: Path, prov: Callable[..., Result]
) -> None:
    (project / "prov.toml").write_text(
        '[[sources]]\nname = "img"\nkind = "oci"\nimage = "ghcr.io/x/y:v1"\nplain_http = true\n'
    )
    result = prov("snapshot", "--no-sign")
    assert result.exit_code == 2
    assert "prov.toml:1" in result.output and "plain_http" in result.output


def test_an_invalid_image_is_refused_at_its_line(
    project: Path, prov: Callable[..., Result]
) -> None:
    (project / "prov.toml").write_text(
        '[[sources]]\nname = "img"\nkind = "oci"\n\nimage = "Bad/Name"\n'
    )
    result = prov("snapshot", "--no-sign")
    assert result.exit_code == 2
    assert "prov.toml:5" in result.output and "invalid image reference" in result.output


# -- cross-check selection -------------------------------------------------------------------


def capture(source: str, kind: str, data: dict[str, Any], request: dict[str, Any]) -> Capture:
    return Capture(
        source=source,
        kind=kind,
        tool_version="0",
        started="2026-08-21T00:00:00Z",
        ended="2026-08-21T00:00:01Z",
        request=request,
        status="ok",
        data=data,
        digest=Capture.content_digest(kind, request, data, [], None),
    )


def test_the_git_capture_is_chosen_by_the_image_source_label() -> None:
    marin = capture(
        "marin",
        "git",
        {"commit": "a" * 40, "remote_url": "git@github.com:Marin-Community/marin.git"},
        {},
    )
    levanter = capture(
        "levanter",
        "git",
        {"commit": "b" * 40, "remote_url": "https://github.com/stanford-crfm/levanter"},
        {},
    )
    image = capture(
        "img",
        "oci",
        {
            "revision": "b" * 12,
            "source": "https://github.com/stanford-crfm/levanter/",
            "digest": DIGEST,
        },
        {},
    )
    stray = capture("stray", "oci", {"revision": "c" * 40, "source": None}, {})

    checks = crosscheck.run([marin, levanter, image, stray])

    assert checks["img/revision"].against == "levanter"
    assert checks["img/revision"].result == "match"
    assert checks["stray/revision"].result == "undetermined"
    assert "set git_source" in checks["stray/revision"].detail
    named = capture("named", "oci", {"revision": "a" * 40}, {"git_source": "nope"})
    assert crosscheck.run([marin, named])["named/revision"].result == "undetermined"
    assert crosscheck.run([image]) == {}  # no git capture, nothing to compare


def test_normalise_remote() -> None:
    same = {
        crosscheck.normalise_remote(url)
        for url in (
            "https://github.com/Org/Repo.git",
            "git@github.com:org/repo",
            "ssh://git@github.com/org/repo/",
            "https://[REDACTED]@github.com/org/repo",
        )
    }
    assert same == {"github.com/org/repo"}


# -- import hygiene --------------------------------------------------------------------------


def test_prov_help_does_not_import_httpx() -> None:
    code = (
        "import sys\n"
        "from provenance.cli import cli\n"
        "try:\n    cli(['--help'], prog_name='prov')\nexcept SystemExit:\n    pass\n"
        "print('HEAVY', sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'httpx', 'sigstore', 'huggingface_hub'} or m.startswith('provenance._internal.oci')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "push" in out  # the command is listed
    assert out.strip().endswith("HEAVY []")
