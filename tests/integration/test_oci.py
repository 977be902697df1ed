"""The oci collector, cross-checks, `prov push` and `prov verify oci://` against real registries.

Registries are Debian's docker-registry (CNCF distribution 2.8) started on 127.0.0.1 by the
fixtures in oci_support.py; images are pushed by the tests through the registry API.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from oci_support import USERS, Pusher, ReferrersFront, Registry, running, sha256

from provenance.digest import Digest
from provenance.model import Capture, Snapshot
from provenance.store.objects import Store
from provenance.verify.resolve import load_attestation
from tests.conftest import GitRepo

REVISION = "org.opencontainers.image.revision"
SOURCE = "org.opencontainers.image.source"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with running(tmp_path_factory.mktemp("registry")) as started:
        yield started


@pytest.fixture(scope="module")
def auth_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with running(tmp_path_factory.mktemp("auth-registry"), auth=True) as started:
        yield started


@pytest.fixture(scope="module")
def basic_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with running(tmp_path_factory.mktemp("basic-registry"), basic=True) as started:
        yield started


@pytest.fixture(scope="module")
def front(registry: Registry) -> Iterator[ReferrersFront]:
    started = ReferrersFront(registry)
    yield started
    started.stop()


@pytest.fixture
def pusher(registry: Registry) -> Iterator[Pusher]:
    client = Pusher(registry)
    yield client
    client.close()


@pytest.fixture
def auth_pusher(auth_registry: Registry) -> Iterator[Pusher]:
    client = Pusher(auth_registry)
    yield client
    client.close()


@pytest.fixture
def front_pusher(registry: Registry, front: ReferrersFront) -> Iterator[Pusher]:
    client = Pusher(registry, front.url)
    yield client
    client.close()


@pytest.fixture(autouse=True)
def docker_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty docker config folder: never the machine's own logins."""
    folder = tmp_path / "docker-config"
    folder.mkdir()
    monkeypatch.setenv("DOCKER_CONFIG", str(folder))
    return folder


def login(docker_config: Path, host: str, user: str, password: str) -> None:
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    (docker_config / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))


def repo_name() -> str:
    return f"team/trainer-{uuid.uuid4().hex[:8]}"


def write_config(project: Path, sources: list[dict[str, Any]]) -> None:
    lines = ["[defaults]", "retries = 0", "timeout = 10", ""]
    for source in sources:
        lines.append("[[sources]]")
        for key, value in source.items():
            lines.append(f"{key} = {json.dumps(value)}")
        lines.append("")
    (project / "prov.toml").write_text("\n".join(lines))


def oci_source(name: str, host: str, image: str, **options: Any) -> dict[str, Any]:
    return {"name": name, "kind": "oci", "image": f"{host}/{image}", "plain_http": True, **options}


Snap = Callable[..., tuple[Result, Snapshot]]


@pytest.fixture
def snap(project: Path, prov: Callable[..., Result]) -> Snap:
    """Take a signed snapshot of prov.toml in the project; return the CLI result and snapshot."""
    prov("keygen", "k")

    def take(label: str, *extra: str) -> tuple[Result, Snapshot]:
        result = prov("snapshot", "--key", "keys/k.key", "--label", label, *extra)
        path = project / "attestations" / f"{label}.intoto.jsonl"
        assert path.is_file(), result.output
        return result, load_attestation(path).snapshot

    return take


def blob(project: Path, capture: Capture, name: str) -> bytes:
    ref = next(b for b in capture.blobs if b.name == name)
    return Store(project / ".prov").read(Digest.parse(ref.digest))


# -- acceptance 1: a tag resolves to the sha256 of the manifest bytes received ----------------


def test_tag_resolves_to_the_sha256_of_the_manifest_bytes(
    project: Path, snap: Snap, registry: Registry, pusher: Pusher
) -> None:
    repository = repo_name()
    labels = {REVISION: "1" * 40, SOURCE: "https://github.com/marin-community/marin"}
    image = pusher.image(repository, "v1", labels)
    write_config(project, [oci_source("trainer", registry.host, f"{repository}:v1")])

    result, snapshot = snap("s1")

    assert result.exit_code == 0, result.output
    capture = snapshot.capture("trainer")
    assert capture.status == "ok"
    assert capture.data["digest"] == image.digest == hashlib_digest(image.manifest)
    assert capture.data["registry_digest"] == image.digest
    assert capture.data["media_type"] == "application/vnd.oci.image.manifest.v1+json"
    # The bytes kept in the store are the bytes the digest is over, not a re-serialisation.
    assert blob(project, capture, "manifest") == image.manifest
    assert blob(project, capture, "config") == image.config
    described = capture.data["image"]
    assert described["config"]["digest"] == sha256(image.config)
    assert [(layer["digest"], layer["size"]) for layer in described["layers"]] == image.layers
    assert capture.data["labels"] == labels
    assert capture.data["revision"] == "1" * 40
    assert capture.data["platform"] == "linux/amd64"
    assert capture.establishes == ("observed", "provider-asserted")


def hashlib_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_multi_platform_index_records_every_platform(
    project: Path, snap: Snap, registry: Registry, pusher: Pusher
) -> None:
    repository = repo_name()
    amd = pusher.image(repository, None, {REVISION: "a" * 40}, architecture="amd64")
    arm = pusher.image(repository, None, {REVISION: "b" * 40}, architecture="arm64")
    index = pusher.index(repository, "multi", {"linux/amd64": amd, "linux/arm64": arm})
    write_config(
        project,
        [
            oci_source("default", registry.host, f"{repository}:multi"),
            oci_source("arm", registry.host, f"{repository}:multi", platform="linux/arm64"),
            oci_source("pinned", registry.host, f"{repository}@{index.digest}"),
        ],
    )

    result, snapshot = snap("s1")

    assert result.exit_code == 0, result.output
    for name in ("default", "arm", "pinned"):
        data = snapshot.capture(name).data
        assert data["digest"] == index.digest
        assert data["media_type"] == "application/vnd.oci.image.index.v1+json"
        assert [(p["platform"], p["digest"]) for p in data["platforms"]] == [
            ("linux/amd64", amd.digest),
            ("linux/arm64", arm.digest),
        ]
    default, arm_capture = snapshot.capture("default"), snapshot.capture("arm")
    assert default.data["platform"] == "linux/amd64"
    assert default.data["image"]["digest"] == amd.digest
    assert default.data["revision"] == "a" * 40
    assert arm_capture.data["image"]["digest"] == arm.digest
    assert arm_capture.data["revision"] == "b" * 40
    assert blob(project, default, "manifest") == index.manifest
    assert blob(project, default, "image-manifest") == amd.manifest
    assert snapshot.capture("pinned").data["tag"] is None


def test_unknown_platform_is_a_failed_capture_naming_the_platforms(
    project: Path, snap: Snap, registry: Registry, pusher: Pusher
) -> None:
    repository = repo_name()
    amd = pusher.image(repository, None, {}, architecture="amd64")
    pusher.index(repository, "multi", {"linux/amd64": amd})
    write_config(
        project, [oci_source("s390", registry.host, f"{repository}:multi", platform="linux/s390x")]
    )

    result, snapshot = snap("s1")

    assert result.exit_code == 4
    capture = snapshot.capture("s390")
    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "platform-not-found"
    assert capture.error.detail["platforms"] == ["linux/amd64"]


# -- acceptance 2: moving the tag changes the digest and the labels ---------------------------


def test_moving_the_tag_changes_digest_and_labels(
    project: Path, snap: Snap, registry: Registry, pusher: Pusher, prov: Callable[..., Result]
) -> None:
    repository = repo_name()
    first = pusher.image(repository, "latest", {REVISION: "1" * 40, "stage": "pretrain"})
    write_config(project, [oci_source("trainer", registry.host, f"{repository}:latest")])
    _, before = snap("before")
    second = pusher.image(repository, "latest", {REVISION: "2" * 40, "stage": "cooldown"})
    _, after = snap("after")

    old, new = before.capture("trainer").data, after.capture("trainer").data
    assert (old["digest"], new["digest"]) == (first.digest, second.digest)
    assert old["labels"] == {REVISION: "1" * 40, "stage": "pretrain"}
    assert new["labels"] == {REVISION: "2" * 40, "stage": "cooldown"}
    assert old["image"]["layers"] != new["image"]["layers"]
    assert before.capture("trainer").digest != after.capture("trainer").digest
    # Everything else about the request is the same: only the observation moved.
    assert before.capture("trainer").request == after.capture("trainer").request

    shown = prov("diff", "before", "after")
    assert shown.exit_code == 1, shown.output
    assert f"{first.digest} -> {second.digest}" in shown.stdout
    assert "pretrain" in shown.stdout and "cooldown" in shown.stdout


# -- acceptance 3: the revision label against the git capture ---------------------------------


def test_revision_label_is_cross_checked_against_the_git_commit(
    project: Path,
    snap: Snap,
    registry: Registry,
    pusher: Pusher,
    make_repo: Callable[[str], GitRepo],
    prov: Callable[..., Result],
) -> None:
    repo = make_repo("launcher")
    repo.write("train.py", "steps = 390_251\n")
    commit = repo.commit("launcher")
    repository = repo_name()
    pusher.image(repository, "good", {REVISION: commit})
    pusher.image(repository, "short", {REVISION: commit[:12]})
    pusher.image(repository, "bad", {REVISION: "0" * 40})
    pusher.image(repository, "tagged", {REVISION: "v1.0"})
    write_config(
        project,
        [
            {"name": "launcher", "kind": "git", "repo": str(repo.path)},
            oci_source("good", registry.host, f"{repository}:good"),
            oci_source("short", registry.host, f"{repository}:short"),
            oci_source("bad", registry.host, f"{repository}:bad", git_source="launcher"),
            oci_source("tagged", registry.host, f"{repository}:tagged"),
        ],
    )

    result, snapshot = snap("s1")

    assert result.exit_code == 0, result.output
    checks = snapshot.cross_checks
    assert checks["good/revision"].result == "match"
    assert checks["good/revision"].matches is True
    assert checks["good/revision"].against == "launcher"
    assert checks["short/revision"].result == "match"
    assert checks["bad/revision"].result == "mismatch"
    assert checks["bad/revision"].matches is False
    assert checks["bad/revision"].values["commit"] == commit
    assert checks["bad/revision"].values["revision"] == "0" * 40
    assert checks["tagged/revision"].result == "undetermined"
    assert checks["tagged/revision"].matches is None
    assert "warning: cross-check bad/revision" in result.stderr

    shown = prov("show", "s1")
    assert shown.exit_code == 0, shown.output
    assert "cross-checks:" in shown.output
    assert "bad/revision: MISMATCH" in shown.output
    assert "good/revision: MATCH" in shown.output
    as_json = json.loads(prov("show", "s1", "--format", "json").stdout)
    assert as_json["snapshot"]["cross_checks"]["bad/revision"]["matches"] is False

    (project / "claims.toml").write_text(
        '[[claims]]\nname = "the image was built from the launcher commit"\nclaimed = true\n'
        'source = "release notes"\nderived = "cross_checks[\'good/revision\'].matches"\n\n'
        '[[claims]]\nname = "the bad image too"\nclaimed = true\nsource = "release notes"\n'
        "derived = \"cross_checks['bad/revision'].matches\"\n"
    )
    checked = prov("check", "--claims", "claims.toml", "s1", "--format", "json")
    assert checked.exit_code == 1, checked.output
    statuses = {c["name"]: c["status"] for c in json.loads(checked.stdout)["results"]}
    assert statuses == {
        "the image was built from the launcher commit": "pass",
        "the bad image too": "fail",
    }


def test_snapshots_without_cross_checks_keep_their_shape(
    project: Path, snap: Snap, make_repo: Callable[[str], GitRepo]
) -> None:
    repo = make_repo("launcher")
    repo.write("a.txt", "a\n")
    repo.commit()
    write_config(project, [{"name": "launcher", "kind": "git", "repo": str(repo.path)}])

    _, snapshot = snap("s1")

    assert snapshot.cross_checks == {}
    assert "cross_checks" not in snapshot.model_dump(mode="json")


# -- acceptance 4: prov push, and prov verify oci:// ------------------------------------------


def tamper(attestation: Path, target: Path) -> None:
    """The same envelope and signature around a payload with one changed value."""
    envelope = json.loads(attestation.read_text())
    payload = base64.b64decode(envelope["payload"])
    envelope["payload"] = base64.b64encode(payload.replace(b'"label":"', b'"label":"x', 1)).decode()
    target.write_text(json.dumps(envelope) + "\n")


def push_and_verify(
    project: Path,
    snap: Snap,
    prov: Callable[..., Result],
    host: str,
    repository: str,
) -> tuple[Result, Result, Result]:
    write_config(project, [oci_source("trainer", host, f"{repository}:v1")])
    result, _ = snap("release")
    assert result.exit_code == 0, result.output
    attestation = project / "attestations" / "release.intoto.jsonl"
    pushed = prov("push", str(attestation), f"oci://{host}/{repository}:v1", "--plain-http")
    assert pushed.exit_code == 0, pushed.output
    verified = prov(
        "verify", f"oci://{host}/{repository}:v1", "--key", "keys/k.pub", "--plain-http"
    )
    tampered = project / "tampered.intoto.jsonl"
    tamper(attestation, tampered)
    again = prov("push", str(tampered), f"oci://{host}/{repository}:v1", "--plain-http")
    assert again.exit_code == 0, again.output
    both = prov("verify", f"oci://{host}/{repository}:v1", "--key", "keys/k.pub", "--plain-http")
    return pushed, verified, both


def test_push_and_verify_through_the_referrers_tag_scheme(
    project: Path, snap: Snap, prov: Callable[..., Result], registry: Registry, pusher: Pusher
) -> None:
    # distribution 2.8 has no referrers API: this is the fallback the spec defines for it.
    repository = repo_name()
    image = pusher.image(repository, "v1", {REVISION: "1" * 40})

    pushed, verified, both = push_and_verify(project, snap, prov, registry.host, repository)

    assert "referrers tag sha256-" in pushed.output
    assert pusher.get(repository, f"referrers/{image.digest}").status_code == 404
    listed = pusher.get(repository, f"manifests/sha256-{image.digest.removeprefix('sha256:')}")
    assert listed.status_code == 200
    referrers = listed.json()["manifests"]
    assert len(referrers) == 2  # the genuine attestation and the tampered one
    assert {r["artifactType"] for r in referrers} == {"application/vnd.in-toto+json"}
    assert verified.exit_code == 0, verified.output
    assert "1 attestation(s) found through the referrers tag scheme" in verified.output
    assert "verified: release" in verified.output
    assert "the snapshot captured this image: source trainer" in verified.output
    assert both.exit_code == 1, both.output
    assert "2 attestation(s) found" in both.output
    assert "verified: release" in both.output
    assert "[FAIL] 2. signatures" in both.output
    assert "1 of 2 attestation(s)" in both.output


def test_push_and_verify_through_the_referrers_api(
    project: Path,
    snap: Snap,
    prov: Callable[..., Result],
    front: ReferrersFront,
    front_pusher: Pusher,
) -> None:
    repository = repo_name()
    pusher = front_pusher
    image = pusher.image(repository, "v1", {REVISION: "1" * 40})

    pushed, verified, both = push_and_verify(project, snap, prov, front.host, repository)

    assert "listed by the registry's referrers API" in pushed.output
    listed = pusher.get(repository, f"referrers/{image.digest}")
    assert listed.status_code == 200
    assert [m["artifactType"] for m in listed.json()["manifests"]] == [
        "application/vnd.in-toto+json"
    ] * 2
    # No fallback tag was written: the registry indexes referrers itself.
    tag = f"manifests/sha256-{image.digest.removeprefix('sha256:')}"
    assert pusher.get(repository, tag).status_code == 404
    assert verified.exit_code == 0, verified.output
    assert "found through the referrers API" in verified.output
    assert both.exit_code == 1
    assert "[FAIL] 2. signatures" in both.output
    report = json.loads(
        prov(
            "verify",
            f"oci://{front.host}/{repository}:v1",
            "--key",
            "keys/k.pub",
            "--plain-http",
            "--format",
            "json",
        ).stdout
    )
    assert report["verified"] is False
    assert report["subject"] == image.digest
    assert [a["verified"] for a in report["attestations"]] == [True, False]
    # Trust is the auditor's here too: no trust option, no verification (issue 13).
    for bare in ((), ("--trust-pack",)):
        refused = prov("verify", f"oci://{front.host}/{repository}:v1", *bare, "--plain-http")
        assert refused.exit_code == 2 and "no trust policy" in refused.output


def test_verify_an_image_without_attestations_fails(
    project: Path, prov: Callable[..., Result], registry: Registry, pusher: Pusher
) -> None:
    repository = repo_name()
    pusher.image(repository, "v1", {})
    prov("keygen", "k")

    result = prov(
        "verify", f"oci://{registry.host}/{repository}:v1", "--key", "keys/k.pub", "--plain-http"
    )

    assert result.exit_code == 1
    assert "no attestation is attached" in result.output


# -- acceptance 5: an auth-requiring registry ------------------------------------------------


def test_without_credentials_the_401_is_recorded_and_the_snapshot_completes(
    project: Path, snap: Snap, auth_registry: Registry, auth_pusher: Pusher
) -> None:
    repository = repo_name()
    auth_pusher.image(repository, "v1", {REVISION: "1" * 40})
    write_config(project, [oci_source("private", auth_registry.host, f"{repository}:v1")])

    result, snapshot = snap("s1")

    assert result.exit_code == 4, result.output  # partial: written, with the failure as evidence
    capture = snapshot.capture("private")
    assert capture.status == "failed"
    assert capture.data["http_status"] == 401
    assert capture.data["credentials_used"] is False
    assert capture.error is not None
    assert capture.error.type == "http-status"
    detail = capture.error.detail
    assert detail["status"] == 401
    assert detail["challenge"]["scheme"] == "Bearer"  # the token flow ran, and was refused
    assert detail["challenge"]["realm"] == auth_registry.token.realm  # type: ignore[union-attr]
    assert detail["errors"][0]["code"] == "UNAUTHORIZED"
    assert capture.blobs == ()


def test_with_docker_credentials_the_bearer_flow_succeeds_and_nothing_secret_is_kept(
    project: Path,
    snap: Snap,
    prov: Callable[..., Result],
    auth_registry: Registry,
    auth_pusher: Pusher,
    docker_config: Path,
) -> None:
    repository = repo_name()
    image = auth_pusher.image(repository, "v1", {REVISION: "1" * 40})
    login(docker_config, auth_registry.host, "alice", USERS["alice"])
    write_config(project, [oci_source("private", auth_registry.host, f"{repository}:v1")])

    result, snapshot = snap("s1")

    assert result.exit_code == 0, result.output
    capture = snapshot.capture("private")
    assert capture.data["digest"] == image.digest
    assert capture.data["credentials_used"] is True
    token = auth_registry.token
    assert token is not None
    assert any(r["user"] == "alice" and r["granted"] for r in token.requests)
    # Push and verify through the same token flow (push scope), on the tag fallback.
    attestation = project / "attestations" / "s1.intoto.jsonl"
    target = f"oci://{auth_registry.host}/{repository}:v1"
    assert prov("push", str(attestation), target, "--plain-http").exit_code == 0
    verified = prov("verify", target, "--key", "keys/k.pub", "--plain-http")
    assert verified.exit_code == 0, verified.output
    secret = USERS["alice"].encode()
    basic = base64.b64encode(b"alice:" + secret)
    for path in [*(project / ".prov").rglob("*"), *(project / "attestations").rglob("*")]:
        if path.is_file():
            content = path.read_bytes()
            assert secret not in content and basic not in content, path
    assert secret.decode() not in result.output + verified.output


def test_an_identity_token_is_exchanged_for_a_registry_token(
    project: Path, snap: Snap, auth_registry: Registry, auth_pusher: Pusher, docker_config: Path
) -> None:
    repository = repo_name()
    image = auth_pusher.image(repository, "v1", {})
    (docker_config / "config.json").write_text(
        json.dumps({"auths": {auth_registry.host: {"identitytoken": "refresh-alice"}}})
    )
    write_config(project, [oci_source("private", auth_registry.host, f"{repository}:v1")])

    result, snapshot = snap("s1")

    assert result.exit_code == 0, result.output
    assert snapshot.capture("private").data["digest"] == image.digest


def test_wrong_password_is_recorded_as_the_token_servers_401(
    project: Path, snap: Snap, auth_registry: Registry, auth_pusher: Pusher, docker_config: Path
) -> None:
    repository = repo_name()
    auth_pusher.image(repository, "v1", {})
    login(docker_config, auth_registry.host, "alice", "wrong")
    write_config(project, [oci_source("private", auth_registry.host, f"{repository}:v1")])

    result, snapshot = snap("s1")

    assert result.exit_code == 4
    error = snapshot.capture("private").error
    assert error is not None
    assert error.detail["stage"] == "token"
    assert error.detail["status"] == 401
    assert "wrong" not in json.dumps(snapshot.model_dump(mode="json"))


def test_basic_auth_registry_401_then_docker_credentials(
    project: Path, snap: Snap, basic_registry: Registry, docker_config: Path
) -> None:
    repository = repo_name()
    pusher = Pusher(basic_registry)
    try:
        image = pusher.image(repository, "v1", {})
    finally:
        pusher.close()
    write_config(project, [oci_source("private", basic_registry.host, f"{repository}:v1")])
    result, anonymous = snap("anonymous")
    assert result.exit_code == 4
    error = anonymous.capture("private").error
    assert error is not None and error.detail["status"] == 401
    assert error.detail["challenge"] == {"scheme": "Basic", "realm": "prov-test"}

    login(docker_config, basic_registry.host, "alice", USERS["alice"])
    result, logged_in = snap("logged-in")

    assert result.exit_code == 0, result.output
    assert logged_in.capture("private").data["digest"] == image.digest


def test_push_without_credentials_fails_with_the_401(
    project: Path, prov: Callable[..., Result], auth_registry: Registry, auth_pusher: Pusher
) -> None:
    repository = repo_name()
    auth_pusher.image(repository, "v1", {})
    attestation = project / "a.intoto.jsonl"
    attestation.write_text('{"payload":"","payloadType":"x","signatures":[]}\n')

    result = prov(
        "push", str(attestation), f"oci://{auth_registry.host}/{repository}:v1", "--plain-http"
    )

    assert result.exit_code == 3
    assert "401" in result.output


# -- evidence of a lying or absent registry ---------------------------------------------------


def test_a_manifest_whose_bytes_do_not_match_its_digest_fails_the_capture(
    project: Path, snap: Snap, registry: Registry, pusher: Pusher
) -> None:
    repository = repo_name()
    image = pusher.image(repository, "v1", {})
    corrupting = ReferrersFront(registry, corrupt=True)
    try:
        write_config(
            project,
            [
                oci_source("by-tag", corrupting.host, f"{repository}:v1"),
                oci_source("by-digest", corrupting.host, f"{repository}@{image.digest}"),
            ],
        )
        result, snapshot = snap("s1")
    finally:
        corrupting.stop()

    assert result.exit_code == 4
    for name in ("by-tag", "by-digest"):
        capture = snapshot.capture(name)
        assert capture.status == "failed"
        assert capture.error is not None and capture.error.type == "digest-mismatch"
        assert image.digest in (capture.error.detail["expected"], capture.error.detail["actual"])


def test_missing_tag_and_unreachable_registry_are_evidence(
    project: Path, snap: Snap, registry: Registry
) -> None:
    from oci_support import free_port

    write_config(
        project,
        [
            oci_source("missing", registry.host, f"{repo_name()}:nope"),
            oci_source("down", f"127.0.0.1:{free_port()}", "team/x:v1"),
        ],
    )

    result, snapshot = snap("s1")

    assert result.exit_code == 4
    missing = snapshot.capture("missing")
    assert missing.error is not None and missing.data["http_status"] == 404
    assert missing.error.detail["errors"][0]["code"] in {"MANIFEST_UNKNOWN", "NAME_UNKNOWN"}
    down = snapshot.capture("down")
    assert down.error is not None and down.error.type == "connect"
    assert len(down.attempts) == 1  # retries = 0 in the test config


def test_a_referrer_that_names_another_image_is_not_accepted(
    project: Path, snap: Snap, prov: Callable[..., Result], registry: Registry, pusher: Pusher
) -> None:
    # Someone lists, in this image's referrers tag, an attestation made for another image.
    repository = repo_name()
    image = pusher.image(repository, "v1", {})
    other = pusher.image(repository, "other", {})
    write_config(project, [oci_source("other", registry.host, f"{repository}:other")])
    result, _ = snap("other")
    assert result.exit_code == 0, result.output
    attestation = project / "attestations" / "other.intoto.jsonl"
    target = f"oci://{registry.host}/{repository}:other"
    assert prov("push", str(attestation), target, "--plain-http").exit_code == 0
    other_tag = f"sha256-{other.digest.removeprefix('sha256:')}"
    listed = pusher.get(repository, f"manifests/{other_tag}").content
    pusher.manifest(
        repository,
        f"sha256-{image.digest.removeprefix('sha256:')}",
        listed,
        "application/vnd.oci.image.index.v1+json",
    )

    result = prov(
        "verify", f"oci://{registry.host}/{repository}:v1", "--key", "keys/k.pub", "--plain-http"
    )

    assert result.exit_code == 1
    assert f"its subject is not {image.digest}" in result.output
