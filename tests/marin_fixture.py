"""Marin-shaped milestones for the diff, claims and notes tests (facts: marin-facts.md).

M1 (2026-08-24): launcher at commit 12d8b6f0 with a two-phase mixture switching at 312,192; W&B
run hero-12d8b6f0-dee637 at step 13,527; the store's .artifact.json answering 403 AccessDenied.
M2 (2026-09-20): commit 0cb3167f, a three-phase mixture switching at 108,000 and 312,192; run
hero-mix-996f4891-step108k; the store answering 200 with the artifact record.

The git captures come from the real git collector run over real repositories holding the files in
tests/fixtures/marin/launcher-*; only the commit id is replaced by Marin's (a test repository
cannot have that sha). The W&B, HF and HTTP captures are built in the shapes of docs/captures.md.
Every blob is in a real store; both snapshots are signed with a real key and indexed in the store
as `prov snapshot` would.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provenance.attest import keys
from provenance.attest import statement as statements
from provenance.attest.signing import DsseAttester
from provenance.capture.base import CollectContext
from provenance.capture.git import GitCollector, GitOptions
from provenance.model import BlobRef, Capture, CaptureError, Snapshot
from provenance.store.objects import SnapshotEntry, Store

FIXTURES = Path(__file__).parent / "fixtures" / "marin"
LAUNCHER_DIR = "experiments/grug/moe_hero_ep"
MIX_PATH = f"{LAUNCHER_DIR}/harrier_mix_2026_08_18.json"
M1_COMMIT = "12d8b6f09f96ad4f0277445765c1a00dbc81d5be"
M2_COMMIT = "0cb3167f39f17eece3c75c67c0e1a6ade26686a4"
M1_RUN = "hero-12d8b6f0-dee637"
M2_RUN = "hero-mix-996f4891-step108k"
ARTIFACT_URL = "https://marin-us-east-02a.cwobject.com/marin/datakit/store_4d2e363d/.artifact.json"
REMOTE = "https://github.com/marin-community/marin"
TAGS = ["grug", "moe", "hero", "ep", "scaling-ladder", "shape-d6144", "racks-11", "gb200"]

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


def launcher_capture(
    store: Store, work: Path, milestone: str, commit: str, started: str
) -> Capture:
    """The real git collector over a real repository holding the milestone's launcher files."""
    repo = work / f"launcher-{milestone}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    source = FIXTURES / f"launcher-{milestone}"
    for path in sorted(source.rglob("*")):
        if path.is_file():
            target = repo / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"launcher at {milestone}")
    options = GitOptions(
        name="launcher", kind="git", repo=str(repo), ref="HEAD", paths=[LAUNCHER_DIR]
    )
    capture = GitCollector(options, CollectContext(store=store, base_dir=work)).collect()
    data = {
        **capture.data,
        "commit": commit,
        "remote_url": REMOTE,
        "ref_kind": "sha",
        "dirty": None,
    }
    request = {"repo": REMOTE, "ref": commit, "paths": [LAUNCHER_DIR]}
    return seal(
        capture,
        data=data,
        request=request,
        started=started,
        ended=started,
        establishes=["observed", "provider-asserted"],
    )


def wandb_data(milestone: str) -> dict[str, Any]:
    first = milestone == "m1"
    run_id = M1_RUN if first else M2_RUN
    storage = base64.b64encode(f"Run:v1:{run_id}:marin_moe:marin-community".encode()).decode()
    return {
        "run_path": f"marin-community/marin_moe/{run_id}",
        "origin": "api",
        "run": {
            "id": run_id,
            "storage_id": storage,
            "display_name": run_id,
            "state": "running",
            "group": "moe-hero-ep-scaling-ladder",
            "job_type": None,
            "tags": [*TAGS, "harrier-mix-2026.08.18" if first else "harrier-mix-996f4891"],
            "created_at": "2026-08-20T02:04:58" if first else "2026-09-15T09:12:31",
            "heartbeat_at": "2026-08-24T14:53:42" if first else "2026-09-20T11:58:07",
            "last_step": 13527 if first else 119874,
            "history_line_count": 13528 if first else 11875,
            "commit": M1_COMMIT if first else M2_COMMIT,
            "user": "ravwojdyla",
        },
        "config": {
            "git_commit": M1_COMMIT if first else M2_COMMIT,
            "trainer": {
                "id": run_id,
                "seed": 0,
                "train_batch_size": 11264,
                "num_train_steps": 390251,
            },
            "model": {
                "hidden_dim": 6144,
                "num_layers": 48,
                "num_experts": 384,
                "num_experts_per_token": 8,
                "max_seq_len": 4096,
            },
            "parameter_count": 535477106688,
            "active_parameter_count": 22762506240,
            "data": {
                "mixture": "harrier_mix_2026_08_18" if first else "best_mixture_996f489106c7b922",
                "phase_switch_steps": [312192] if first else [108000, 312192],
            },
        },
        "config_internal": {
            "_wandb": {"cli_version": "0.21.1" if first else "0.21.3", "python_version": "3.12.7"}
        },
        "summary": {
            "_step": 13527 if first else 119874,
            "_runtime": 390000.0 if first else 418211.5,
            "_timestamp": 1756047222.0 if first else 1758369487.0,
            "train/cross_entropy_loss": 1.321 if first else 1.187,
            "grad/norm/total": 0.205 if first else 0.171,
            "moe/drop_fraction": 0.0306 if first else 0.0291,
            "throughput/mfu": 21.15 if first else 22.4,
            "num_devices": 704,
        },
        "system_metrics": {},
    }


def wandb_capture(store: Store, milestone: str, started: str) -> Capture:
    data = wandb_data(milestone)
    run = data["run"]
    # The API's own shape: config and summary as JSON strings, config entries wrapped in "value".
    response = {
        "data": {
            "project": {
                "run": {
                    "id": run["storage_id"],
                    "name": run["id"],
                    "displayName": run["display_name"],
                    "state": run["state"],
                    "tags": run["tags"],
                    "group": run["group"],
                    "createdAt": run["created_at"],
                    "heartbeatAt": run["heartbeat_at"],
                    "commit": run["commit"],
                    "config": json.dumps(
                        {k: {"value": v} for k, v in data["config"].items()}
                        | {"_wandb": {"value": data["config_internal"]["_wandb"]}}
                    ),
                    "summaryMetrics": json.dumps(data["summary"]),
                    "systemMetrics": "{}",
                    "historyLineCount": run["history_line_count"],
                    "historyKeys": {"lastStep": run["last_step"]},
                    "user": {"username": run["user"]},
                }
            }
        }
    }
    request = {
        "run": data["run_path"],
        "base_url": "https://api.wandb.ai",
        "volatile": ["summary.throughput/*"],
    }
    body = json.dumps(response, indent=1).encode()
    return make_capture(
        store,
        "hero-run",
        "wandb",
        request,
        data,
        [("graphql-response.json", body, "application/json")],
        started=started,
    )


def artifact_capture(store: Store, milestone: str, started: str) -> Capture:
    if milestone == "m1":
        body = (FIXTURES / "http" / "artifact-403.xml").read_bytes()
        data: dict[str, Any] = {
            "status": 403,
            "reason": "Forbidden",
            "headers": [
                ["date", "Sat, 23 Aug 2026 09:14:02 GMT"],
                ["content-type", "application/xml"],
                ["content-length", str(len(body))],
                ["x-amz-request-id", "tx0000044b5a1c2d3e4f506-0068a9b1c2-1e2f3a-us-east-02a"],
                ["server", "CoreWeave Object Storage"],
            ],
            "body": {"size": len(body), "truncated": False, "media_type": "application/xml"},
            "elapsed_ms": 88.4,
            "error_body": {
                "code": "AccessDenied",
                "message": "Access Denied",
                "request_id": "tx0000044b5a1c2d3e4f506-0068a9b1c2-1e2f3a-us-east-02a",
                "host_id": "1e2f3a-us-east-02a-default",
            },
            "json": None,
        }
        media = "application/xml"
    else:
        body = (FIXTURES / "http" / "artifact-200.json").read_bytes()
        data = {
            "status": 200,
            "reason": "OK",
            "headers": [
                ["date", "Sun, 20 Sep 2026 11:59:40 GMT"],
                ["content-type", "application/json"],
                ["content-length", str(len(body))],
                ["etag", '"9b2cf535f27731c974343645a3985328"'],
                ["last-modified", "Tue, 18 Aug 2026 21:40:11 GMT"],
                ["x-amz-request-id", "tx00000a97c3e1f2b4d5c60-0068cea7dc-1e2f3a-us-east-02a"],
                ["server", "CoreWeave Object Storage"],
            ],
            "body": {"size": len(body), "truncated": False, "media_type": "application/json"},
            "elapsed_ms": 61.9,
            "error_body": None,
            "json": json.loads(body),
        }
        media = "application/json"
    data = {
        "method": "GET",
        "url": ARTIFACT_URL,
        "final_url": ARTIFACT_URL,
        "redirects": [],
        "http_version": "HTTP/1.1",
        "server_ip": "203.0.113.7" if milestone == "m1" else "203.0.113.9",
        "tls": {
            "version": "TLSv1.3",
            "cipher": "TLS_AES_256_GCM_SHA384",
            "peer_cert_sha256": "ab" * 32,
        },
        **data,
    }
    request = {"method": "GET", "url": ARTIFACT_URL}
    return make_capture(
        store,
        "harrier-store-artifact",
        "http",
        request,
        data,
        [("body", body, media)],
        started=started,
        establishes=("observed", "tls-bound"),
    )


def token_counts_capture(store: Store, started: str) -> Capture:
    csv = (FIXTURES / "hf" / "token_counts.csv").read_bytes()
    commit = "3612ddc3350212e38ce8a50b99c3df7ea10b44a9"
    data = {
        "repo_id": "marin-community/token-counts",
        "repo_type": "dataset",
        "revision": commit,
        "commit": commit,
        "last_modified": "2026-08-18T20:02:11.000Z",
        "files": [
            {"path": ".gitattributes", "size": 2307, "oid": "a6344aac" * 5, "lfs_sha256": None},
            {
                "path": "data/token_counts.csv",
                "size": len(csv),
                "oid": "5f1e0c2d" * 5,
                "lfs_sha256": None,
            },
        ],
        "fetched": [
            {
                "path": "data/token_counts.csv",
                "size": len(csv),
                "etag": '"5f1e0c2d"',
                "x_repo_commit": commit,
            }
        ],
    }
    request = {"repo": "marin-community/token-counts", "repo_type": "dataset", "revision": commit}
    return make_capture(
        store,
        "token-counts",
        "huggingface",
        request,
        data,
        [("data/token_counts.csv", csv, "text/csv")],
        started=started,
        establishes=("observed", "provider-asserted"),
    )


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


def milestone(store: Store, work: Path, name: str) -> Snapshot:
    first = name == "m1"
    created = "2026-08-24T15:00:00.000000Z" if first else "2026-09-20T12:00:00.000000Z"
    captures = [
        launcher_capture(store, work, name, M1_COMMIT if first else M2_COMMIT, created),
        wandb_capture(store, name, created),
        artifact_capture(store, name, created),
        token_counts_capture(store, created),
    ]
    return Snapshot(
        label=name, created=created, captures=tuple(sorted(captures, key=lambda c: c.source))
    )


def build(root: Path) -> Marin:
    root.mkdir(parents=True, exist_ok=True)
    store = Store(root / ".prov").init()
    key, pub = keys.generate(root, "auditor")
    s1 = milestone(store, root / "work", "m1")
    s2 = milestone(store, root / "work", "m2")
    m1 = publish(store, s1, key, root / "attestations" / "m1.intoto.jsonl")
    m2 = publish(store, s2, key, root / "attestations" / "m2.intoto.jsonl")
    return Marin(root, store, key, pub, m1, m2, s1, s2)


def failed_capture(capture: Capture, error_type: str = "timeout") -> Capture:
    """The same source, failed (for partial-snapshot cases)."""
    error = CaptureError(type=error_type, message="the read timed out after 30s")
    return seal(capture, status="failed", data={}, blobs=[], error=error.model_dump(mode="json"))
