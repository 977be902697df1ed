"""Marin milestones for the diff, claims and notes tests, from the demo's data (one source).

M1 (2026-08-24): the launcher at commit 12d8b6f0 (the two-phase mixture); the W&B run
hero-12d8b6f0-dee637 at step 13,527; the store's .artifact.json answering 403 AccessDenied.
M2 (2026-09-20): commit 0cb3167f (the three-phase mixture switching at 108,000);
run hero-mix-996f4891-step108k; the store answering 200 with the artifact record.

All data comes from examples/marin/data (examples/marin/fixtures.py reads it; see its README).
Every capture is made by the real collector: git over a real repository holding the milestone's
launcher files (only the commit id is then replaced by Marin's: a test repository cannot have
that sha), W&B, the Hub and HTTP against the real wire-format server on 127.0.0.1. Every blob is
in a real store; both snapshots are signed with a real key and indexed as `prov snapshot` would.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from provenance._testing.server import LocalServer
from provenance.attest import keys
from provenance.attest import statement as statements
from provenance.attest.signing import DsseAttester
from provenance.capture.base import CollectContext, validate_source
from provenance.capture.git import GitCollector, GitOptions
from provenance.config import SourceSpec
from provenance.model import BlobRef, Capture, CaptureError, Snapshot
from provenance.store.objects import SnapshotEntry, Store

ROOT = Path(__file__).resolve().parents[1]


def _load_fixtures() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "marin_demo_fixtures", ROOT / "examples" / "marin" / "fixtures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fixtures = _load_fixtures()
"""examples/marin/fixtures.py: the demo's data, shared."""

CLAIMS = ROOT / "tests" / "fixtures" / "marin-claims.toml"
LAUNCHER_DIR: str = fixtures.LAUNCHER_DIR
MIX_PATH: str = fixtures.MIX_PATH
M1_COMMIT: str = fixtures.COMMITS[1]
M2_COMMIT: str = fixtures.COMMITS[2]
M1_RUN: str = fixtures.RUNS[1]
M2_RUN: str = fixtures.RUNS[2]
ARTIFACT_PATH = "/marin/datakit/store_4d2e363d/.artifact.json"
TOKEN_COUNTS_COMMIT = "3612ddc3350212e38ce8a50b99c3df7ea10b44a9"
REMOTE = "https://github.com/marin-community/marin"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.org",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.org",
    "GIT_AUTHOR_DATE": "2026-08-21T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-08-21T00:00:00Z",
}


@dataclass
class Marin:
    root: Path
    store: Store
    key: Path
    pub: Path
    m1: Path
    m2: Path
    s1: Snapshot
    s2: Snapshot


def seal(capture: Capture, **changes: Any) -> Capture:
    """A capture with fields replaced and its content digest recomputed."""
    fields = {**capture.model_dump(mode="json"), **changes}
    blobs = [b if isinstance(b, dict) else b.model_dump(mode="json") for b in fields["blobs"]]
    fields["digest"] = Capture.content_digest(
        fields["kind"], fields["request"], fields["data"], blobs, fields["error"]
    )
    return Capture.model_validate(fields)


def make_capture(
    store: Store,
    source: str,
    kind: str,
    request: dict[str, Any],
    data: dict[str, Any],
    blobs: list[tuple[str, bytes, str | None]],
    *,
    started: str,
    establishes: tuple[str, ...] = ("observed",),
) -> Capture:
    """A capture built by hand, for the few cases no collector would record."""
    refs = []
    for name, content, media_type in blobs:
        written = store.put_bytes(content)
        refs.append(
            BlobRef(name=name, digest=str(written.digest), size=written.size, media_type=media_type)
        )
    blob_json = [r.model_dump(mode="json") for r in refs]
    return Capture(
        source=source,
        kind=kind,
        tool_version="0.1.0",
        started=started,
        ended=started,
        request=request,
        status="ok",
        establishes=establishes,  # type: ignore[arg-type]
        data=data,
        blobs=tuple(refs),
        error=None,
        digest=Capture.content_digest(kind, request, data, blob_json, None),
    )


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    out = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def _number(milestone: str) -> int:
    return 1 if milestone == "m1" else 2


def collect(store: Store, work: Path, table: dict[str, Any], env: dict[str, str]) -> Capture:
    """Run one source's real collector, as `prov snapshot` would."""
    spec = SourceSpec(str(table["name"]), str(table["kind"]), table, work / "prov.toml", 1)
    cls, options = validate_source(spec)
    work.mkdir(parents=True, exist_ok=True)
    context = CollectContext(store=store, base_dir=work, env=env, timeout=10.0, retries=1)
    capture = cls(options, context).collect()
    assert capture.status == "ok", capture.error
    return capture


def launcher_capture(
    store: Store, work: Path, milestone: str, commit: str, started: str
) -> Capture:
    """The real git collector over a real repository holding the milestone's launcher files."""
    repo = work / f"launcher-{milestone}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for relative, content in fixtures.launcher_files(_number(milestone)).items():
        target = repo / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"launcher at {milestone}")
    paths = [LAUNCHER_DIR, fixtures.RULE_PATH]
    options = GitOptions(name="launcher", kind="git", repo=str(repo), ref="HEAD", paths=paths)
    capture = GitCollector(options, CollectContext(store=store, base_dir=work)).collect()
    data = {
        **capture.data,
        "commit": commit,
        "remote_url": REMOTE,
        "ref_kind": "sha",
        "dirty": None,
    }
    request = {"repo": REMOTE, "ref": commit, "paths": paths}
    return seal(
        capture,
        data=data,
        request=request,
        started=started,
        ended=started,
        establishes=["observed", "provider-asserted"],
    )


def _at(capture: Capture, started: str) -> Capture:
    return seal(capture, started=started, ended=started)


def wandb_capture(store: Store, milestone: str, started: str, server: LocalServer) -> Capture:
    run = f"marin-community/marin_moe/{fixtures.RUNS[_number(milestone)]}"
    table = {"name": "hero-run", "kind": "wandb", "run": run, "volatile": ["summary.throughput/*"]}
    env = {"WANDB_BASE_URL": server.url, "WANDB_API_KEY": fixtures.wandb_api_key()}
    return _at(collect(store, store.root.parent / "work", table, env), started)


def artifact_capture(store: Store, started: str, server: LocalServer) -> Capture:
    table = {"name": "harrier-store-artifact", "kind": "http", "url": server.url + ARTIFACT_PATH}
    return _at(collect(store, store.root.parent / "work", table, {}), started)


def token_counts_capture(store: Store, started: str, server: LocalServer) -> Capture:
    table = {
        "name": "token-counts",
        "kind": "huggingface",
        "repo": "marin-community/token-counts",
        "repo_type": "dataset",
        "revision": TOKEN_COUNTS_COMMIT,
        "files": ["data/token_counts.csv"],
        "endpoint": server.url,
    }
    return _at(collect(store, store.root.parent / "work", table, {}), started)


def serve(milestone: str) -> LocalServer:
    """The local server answering as the sources did at a milestone (start it with ``with``)."""
    return LocalServer(fixtures.server_fixtures(_number(milestone)))


def publish(store: Store, snapshot: Snapshot, key: Path, target: Path) -> Path:
    """Sign and index a snapshot the way `prov snapshot` does."""
    signer = keys.load_signer(key)
    document = DsseAttester([signer]).attest(statements.build(snapshot))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(document)
    written = store.put_bytes(document)
    store.add_snapshot(
        SnapshotEntry(
            sha256=snapshot.sha256().hex,
            label=snapshot.label,
            created=snapshot.created,
            attestation=str(written.digest),
            path=str(target),
            signers=[signer.keyid],
            sources=[c.source for c in snapshot.captures],
            failed=[c.source for c in snapshot.captures if c.status == "failed"],
        )
    )
    return target


def milestone(store: Store, work: Path, name: str, server: LocalServer) -> Snapshot:
    first = name == "m1"
    created = "2026-08-24T15:00:00.000000Z" if first else "2026-09-20T12:00:00.000000Z"
    server.fixtures = fixtures.server_fixtures(_number(name))
    captures = [
        launcher_capture(store, work, name, M1_COMMIT if first else M2_COMMIT, created),
        wandb_capture(store, name, created, server),
        artifact_capture(store, created, server),
        token_counts_capture(store, created, server),
    ]
    return Snapshot(
        label=name, created=created, captures=tuple(sorted(captures, key=lambda c: c.source))
    )


def build(root: Path) -> Marin:
    root.mkdir(parents=True, exist_ok=True)
    store = Store(root / ".prov").init()
    key, pub = keys.generate(root, "auditor")
    # One server for both milestones, its answers swapped: the same URLs at both, as on the
    # internet, so a diff shows what the sources said, not where the test server listened.
    with serve("m1") as server:
        s1 = milestone(store, root / "work", "m1", server)
        s2 = milestone(store, root / "work", "m2", server)
    m1 = publish(store, s1, key, root / "attestations" / "m1.intoto.jsonl")
    m2 = publish(store, s2, key, root / "attestations" / "m2.intoto.jsonl")
    return Marin(root, store, key, pub, m1, m2, s1, s2)


def failed_capture(capture: Capture, error_type: str = "timeout") -> Capture:
    """The same source, failed (for partial-snapshot cases)."""
    error = CaptureError(type=error_type, message="the read timed out after 30s")
    return seal(capture, status="failed", data={}, blobs=[], error=error.model_dump(mode="json"))
