"""The GitHub Action and workflow (linted offline), and release uploads against a local API."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from provenance._testing.github import LocalGitHub
from provenance.errors import ReleaseError
from provenance.publish.release import GitHubReleases, asset_for, upload_assets

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml")) + sorted(
    (ROOT / "examples" / "workflows").glob("*.yml")
)
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is not installed: `pip install -e '.[dev]'`")
    return str(path)


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_workflows_pass_actionlint() -> None:
    assert WORKFLOWS
    # actionlint also reads action.yml through `uses: ./`, and runs shellcheck on `run:` blocks.
    result = _run(_tool("actionlint"), "-shellcheck", _tool("shellcheck"), *map(str, WORKFLOWS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_action_and_workflows_match_the_github_schemas() -> None:
    checker = _tool("check-jsonschema")
    action = _run(checker, "--builtin-schema", "vendor.github-actions", str(ACTION))
    assert action.returncode == 0, action.stdout + action.stderr
    flows = _run(checker, "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS))
    assert flows.returncode == 0, flows.stdout + flows.stderr


def _steps(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from document.get("runs", {}).get("steps", [])
    for job in document.get("jobs", {}).values():
        yield from job.get("steps", [])


def _documents() -> list[tuple[Path, dict[str, Any]]]:
    return [(path, yaml.safe_load(path.read_text())) for path in [ACTION, *WORKFLOWS]]


def test_action_scripts_pass_shellcheck() -> None:
    scripts = [s["run"] for s in _steps(yaml.safe_load(ACTION.read_text())) if "run" in s]
    assert len(scripts) >= 4
    for script in scripts:
        result = subprocess.run(
            [_tool("shellcheck"), "--shell=bash", "-"], input=script, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stdout


def test_inputs_reach_scripts_only_through_env() -> None:
    for path, document in _documents():
        for step in _steps(document):
            assert "${{" not in step.get("run", ""), f"{path}: {step.get('name')} interpolates"


def test_actions_are_pinned_by_sha_and_permissions_default_to_none() -> None:
    for path, document in _documents():
        for step in _steps(document):
            uses = step.get("uses")
            if uses and not uses.startswith("./"):
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), f"{path}: {uses}"
    for path in WORKFLOWS:
        document = yaml.safe_load(path.read_text())
        assert document["permissions"] == {}, path
        for job in document["jobs"].values():
            assert "permissions" in job, f"{path}: every job says what it needs"
    workflow = yaml.safe_load((ROOT / ".github/workflows/provenance.yml").read_text())
    assert any(s.get("uses") == "./" for s in _steps(workflow))


def test_action_inputs() -> None:
    action = yaml.safe_load(ACTION.read_text())
    assert {"config", "label", "signing", "release-tag", "upload"} <= set(action["inputs"])
    assert action["runs"]["using"] == "composite"


# -- release uploads ----------------------------------------------------------------------------


@pytest.fixture
def github() -> Iterator[LocalGitHub]:
    with LocalGitHub() as server:
        yield server


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    made = {
        "v1.0.intoto.jsonl": b'{"payload":"e30=","payloadType":"x","signatures":[]}\n',
        "v1.0.sigstore.json": b'{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}\n',
        "v1.0.evidence.tar": b"tar bytes",
        "v1.0.intoto.jsonl.tsr": b"\x30\x03\x02\x01\x00",
    }
    for name, data in made.items():
        (tmp_path / name).write_bytes(data)
    return [tmp_path / name for name in made]


def _client(github: LocalGitHub) -> GitHubReleases:
    env = {"GITHUB_API_URL": github.url, "GITHUB_TOKEN": github.token}
    return GitHubReleases.from_env(github.repository, env)


def test_upload_names_and_content_types(github: LocalGitHub, files: list[Path]) -> None:
    release = github.add_release("v1.0")
    done = upload_assets(_client(github), "v1.0", files)
    stored = {a.name: a for a in release.assets}
    assert sorted(stored) == [
        "v1.0.evidence.tar",
        "v1.0.intoto.jsonl",
        "v1.0.intoto.jsonl.tsr",
        "v1.0.sigstore.intoto.jsonl",
    ]
    assert [a.name for a in release.assets if a.name.endswith(".intoto.jsonl")] == [
        "v1.0.intoto.jsonl",
        "v1.0.sigstore.intoto.jsonl",
    ]
    assert stored["v1.0.intoto.jsonl"].content_type == "application/x-ndjson"
    assert stored["v1.0.sigstore.intoto.jsonl"].content_type == "application/x-ndjson"
    assert stored["v1.0.evidence.tar"].content_type == "application/x-tar"
    assert stored["v1.0.intoto.jsonl.tsr"].content_type == "application/timestamp-reply"
    assert stored["v1.0.evidence.tar"].data == b"tar bytes"
    assert {d.action for d in done} == {"uploaded"}
    uploads = [r for r in github.requests if r[0] == "POST"]
    assert len(uploads) == 4 and all(r[1].startswith("/uploads/") for r in uploads)
    assert all(r[2]["Authorization"] == "Bearer ghs_test" for r in github.requests)


def test_rerun_replaces_by_default(github: LocalGitHub, files: list[Path]) -> None:
    release = github.add_release("v1.0")
    for n in range(3):  # more assets than one page of the listing
        github.add_asset(release, f"other-{n}.txt", b"keep", "text/plain")
    github.add_asset(release, "v1.0.evidence.tar", b"old pack", "application/x-tar")
    done = upload_assets(_client(github), "v1.0", [files[2]])
    assert [(d.name, d.action) for d in done] == [("v1.0.evidence.tar", "replaced")]
    packs = [a for a in release.assets if a.name == "v1.0.evidence.tar"]
    assert [a.data for a in packs] == [b"tar bytes"]
    assert len(release.assets) == 4
    assert [r[0] for r in github.requests if "/assets/" in r[1]] == ["DELETE"]


def test_rerun_can_skip_or_fail(github: LocalGitHub, files: list[Path]) -> None:
    release = github.add_release("v1.0")
    github.add_asset(release, "v1.0.evidence.tar", b"old pack", "application/x-tar")
    done = upload_assets(_client(github), "v1.0", [files[2]], "skip")
    assert [(d.name, d.action) for d in done] == [("v1.0.evidence.tar", "skipped")]
    assert [a.data for a in release.assets] == [b"old pack"]
    with pytest.raises(ReleaseError, match="already has an asset"):
        upload_assets(_client(github), "v1.0", [files[2]], "fail")
    assert not [r for r in github.requests if r[0] in ("POST", "DELETE")]


def test_missing_release_and_bad_token(github: LocalGitHub, files: list[Path]) -> None:
    with pytest.raises(ReleaseError, match="no release for tag 'v9'"):
        upload_assets(_client(github), "v9", files)
    github.add_release("v1.0")
    bad = GitHubReleases.from_env(
        github.repository, {"GITHUB_API_URL": github.url, "GITHUB_TOKEN": "wrong"}
    )
    with pytest.raises(ReleaseError, match="HTTP 401") as caught:
        upload_assets(bad, "v1.0", files)
    assert "wrong" not in caught.value.diagnostics()


def test_release_upload_command(
    github: LocalGitHub,
    files: list[Path],
    prov: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    github.add_release("v1.0")
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_TOKEN", github.token)
    monkeypatch.setenv("GITHUB_REPOSITORY", github.repository)
    result = prov("release-upload", "--tag", "v1.0", str(files[0]), str(files[2]))
    assert result.exit_code == 0, result.output
    assert "uploaded: v1.0.intoto.jsonl" in result.output
    assert github.token not in result.output
    again = prov("release-upload", "--tag", "v1.0", "--on-existing", "skip", str(files[0]))
    assert "skipped: v1.0.intoto.jsonl" in again.output


def test_previous_release_pack(
    github: LocalGitHub,
    tmp_path: Path,
    prov: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = github.add_release("v0.9")
    github.add_asset(old, "v0.9.evidence.tar", b"previous pack", "application/x-tar")
    github.add_release("v1.0-draft", draft=True)
    github.add_release("v1.0")
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    monkeypatch.setenv("GITHUB_TOKEN", github.token)
    result = prov(
        "release-previous", "--tag", "v1.0", "--repository", github.repository,
        "-o", str(tmp_path / "prev"),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert Path(result.output.strip()).read_bytes() == b"previous pack"
    first = prov(
        "release-previous", "--tag", "v0.9", "--repository", github.repository,
        "-o", str(tmp_path / "none"),
    )  # fmt: skip
    assert first.exit_code == 1


def test_asset_names_stay_plain(tmp_path: Path) -> None:
    assert asset_for(Path("m1.sigstore.json")).name == "m1.sigstore.intoto.jsonl"
    with pytest.raises(Exception, match="cannot be a release asset name"):
        asset_for(Path(".hidden"))


# -- the action's scripts, run the way the runner runs them ------------------------------------

_EXPR = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


def _evaluate(text: str, context: dict[str, str]) -> str:
    """The few expression forms action.yml uses in `env:`: names and `a || b`."""

    def one(match: re.Match[str]) -> str:
        for alternative in match.group(1).split("||"):
            value = context.get(alternative.strip(), "")
            if value:
                return value
        return ""

    return _EXPR.sub(one, text)


def _run_steps(
    context: dict[str, str], base_env: dict[str, str], cwd: Path, tmp_path: Path, mode: str
) -> list[str]:
    """Run the action's scripts of one mode in order, as the runner would; their names."""
    action = yaml.safe_load(ACTION.read_text())
    ran = []
    for step in action["runs"]["steps"]:
        if "run" not in step or step["name"] == "Install prov":
            continue  # setup-python and pip install: this venv already has prov
        if ("inputs.mode == 'witness'" in step.get("if", "")) != (mode == "witness"):
            continue  # the other mode's steps
        if "inputs.site == 'true'" in step.get("if", "") and context.get("inputs.site") != "true":
            continue  # the site is built only when asked
        if "steps.witness.outputs.statement != ''" in step.get("if", "") and not context.get(
            "steps.witness.outputs.statement"
        ):
            continue
        output = tmp_path / f"output-{mode}-{len(ran)}"
        output.write_text("")
        env = {k: _evaluate(str(v), context) for k, v in step.get("env", {}).items()}
        result = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=cwd,
            env={**base_env, **env, "GITHUB_OUTPUT": str(output)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, f"{step['name']}: {result.stdout}{result.stderr}"
        for line in output.read_text().splitlines():
            key, _, value = line.partition("=")
            context[f"steps.{step.get('id')}.outputs.{key}"] = value
        ran.append(step["name"])
    return ran


def _runner_env(github: LocalGitHub, runner_temp: Path, summary: Path) -> dict[str, str]:
    """The environment a runner gives the action's scripts (no PROV_ or GITHUB_ leaking in)."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PROV_", "GITHUB_"))},
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_API_URL": github.url,
        "GITHUB_REPOSITORY": github.repository,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_WORKFLOW_REF": (
            f"{github.repository}/.github/workflows/provenance.yml@refs/tags/v1.0"
        ),
    }


def test_action_scripts_end_to_end(
    github: LocalGitHub, project: Path, make_repo, tmp_path: Path, prov: Callable[..., Result]
) -> None:  # type: ignore[no-untyped-def]
    """Snapshot (key mode), pack, summary and upload, step by step with the runner's env."""
    repo = make_repo("code")
    repo.write("train.py", "steps = 390251\n")
    repo.commit()
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    assert prov("keygen", "ci").exit_code == 0
    github.add_release("v1.0")
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    summary = tmp_path / "summary.md"
    context = {
        "inputs.config": "prov.toml",
        "inputs.label": "",
        "inputs.signing": "key",
        "inputs.private-key": (project / "keys/ci.key").read_text(),
        "inputs.public-key": "keys/ci.pub",
        "inputs.release-tag": "v1.0",
        "inputs.upload": "attestation,pack",
        "inputs.on-existing": "replace",
        "inputs.github-token": github.token,
        "github.action_path": str(ROOT),
    }
    base_env = _runner_env(github, runner_temp, summary)
    ran = _run_steps(context, base_env, project, tmp_path, "snapshot")
    assert ran == ["Snapshot and sign", "Evidence pack", "Job summary", "Attach to the release"]
    assert not (runner_temp / "prov" / "signing.key").exists()  # the private key is removed
    assert "verified: v1.0" in summary.read_text()
    assert "No earlier release has an evidence pack" in summary.read_text()
    names = sorted(a.name for a in github.releases[0].assets)
    assert names == ["v1.0.evidence.tar", "v1.0.intoto.jsonl"]
    uploaded_pack = next(a for a in github.releases[0].assets if a.name.endswith(".tar"))
    (tmp_path / "v1.0.evidence.tar").write_bytes(uploaded_pack.data)
    downloaded = str(tmp_path / "v1.0.evidence.tar")
    assert prov("verify", downloaded, "--key", "keys/ci.pub").exit_code == 0
    assert prov("verify", downloaded).exit_code == 2  # the pack's own key is not trusted


def test_action_witness_mode_end_to_end(
    github: LocalGitHub, project: Path, make_repo, tmp_path: Path, prov: Callable[..., Result]
) -> None:  # type: ignore[no-untyped-def]
    """mode: witness fetches another release's attestation, re-captures, signs and attaches."""
    repo = make_repo("code")
    repo.write("train.py", "steps = 390251\n")
    repo.commit()
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    for name in ("publisher", "witness"):
        assert prov("keygen", name).exit_code == 0
    assert prov("snapshot", "--label", "v1.0", "--key", "keys/publisher.key").exit_code == 0
    release = github.add_release("v1.0")
    attestation = (project / "attestations" / "v1.0.intoto.jsonl").read_bytes()
    github.add_asset(release, "v1.0.intoto.jsonl", attestation, "application/x-ndjson")
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    summary = tmp_path / "summary.md"
    context = {
        "inputs.mode": "witness",
        "inputs.attestation-repository": github.repository,
        "inputs.attestation-tag": "v1.0",
        "inputs.attestation-asset": "",
        "inputs.operator": "acme-audit",
        "inputs.region": "us-east-1",
        "inputs.private-key": (project / "keys/witness.key").read_text(),
        "inputs.release-tag": "v1.0",
        "inputs.on-existing": "replace",
        "inputs.github-token": github.token,
    }
    base_env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PROV_", "GITHUB_"))},
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_API_URL": github.url,
        "GITHUB_REPOSITORY": github.repository,
    }
    ran = _run_steps(context, base_env, project, tmp_path, "witness")
    assert ran == ["Witness another release's attestation", "Attach the witness statement"]
    assert not (runner_temp / "prov-witness" / "witness.key").exists()
    assert context["steps.witness.outputs.drift"] == "false"
    assert "witnessed" in summary.read_text() and "acme-audit, us-east-1" in summary.read_text()
    [statement] = [a for a in release.assets if ".witness." in a.name]
    (tmp_path / "v1.0.intoto.jsonl").write_bytes(attestation)
    (tmp_path / statement.name).write_bytes(statement.data)
    result = prov(
        "verify", str(tmp_path / "v1.0.intoto.jsonl"), "--key", "keys/publisher.pub",
        "--key", "keys/witness.pub", "--require-witnesses", "1", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    [capture] = json.loads(result.stdout)["observers"]["captures"]
    assert capture["witnesses"] == 1 and capture["observers"][1]["operator"] == "acme-audit"


def test_action_site_end_to_end(
    github: LocalGitHub, project: Path, make_repo, tmp_path: Path, prov: Callable[..., Result]
) -> None:  # type: ignore[no-untyped-def]
    """site: true, at the second release: both releases' packs on one verified site."""
    from tests import site_checks

    repo = make_repo("code")
    (project / "prov.toml").write_text(
        f'[[sources]]\nname = "launcher"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    (project / "claims.toml").write_text(
        '[[claims]]\nname = "the launcher is a git capture"\nclaimed = "git"\n'
        "derived = \"captures['launcher'].kind\"\n"
    )
    assert prov("keygen", "ci").exit_code == 0
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    summary = tmp_path / "summary.md"
    base_env = _runner_env(github, runner_temp, summary)
    for number, tag in enumerate(("v0.9", "v1.0")):
        repo.write("train.py", f"steps = {390139 + 112 * number}\n")
        repo.commit()
        github.add_release(tag)
        context = {
            "inputs.config": "prov.toml",
            "inputs.signing": "key",
            "inputs.private-key": (project / "keys/ci.key").read_text(),
            "inputs.public-key": "keys/ci.pub",
            "inputs.release-tag": tag,
            "inputs.upload": "attestation,pack",
            "inputs.on-existing": "replace",
            "inputs.github-token": github.token,
            "inputs.site": "true" if tag == "v1.0" else "false",
            "inputs.site-claims": "claims.toml",
            "inputs.site-title": "",
            "inputs.site-history": "",
        }
        (tmp_path / tag).mkdir()
        ran = _run_steps(context, base_env, project, tmp_path / tag, "snapshot")
    assert ran[-1] == "Provenance site"
    site = Path(context["steps.site.outputs.site"])
    document = site_checks.check_downloads(site)
    assert [(m["label"], m["verification"]["verified"]) for m in document["milestones"]] == [
        ("v0.9", True),
        ("v1.0", True),
    ]
    assert document["title"] == github.repository
    assert [m["claims"]["holds"] for m in document["milestones"]] == [1, 1]
    (interval,) = document["intervals"]
    assert interval["sources_changed"] == 1
    site_checks.check_links(site)
    assert "### Provenance site" in summary.read_text() and "v1.0: verified" in summary.read_text()
