"""The Marin 535B-A23B run, as the demo's own fixture data for two milestones.

Written from the public facts (marin-facts.md), not copied from the run's files: a launcher
repository with the shape of `experiments/grug/moe_hero_ep/`, the W&B runs, the HF provenance
table and the data store's answers on 2026-08-23 (milestone 1) and 2026-09-15 (milestone 2).
Numbers that matter (steps, batch, parameters, phase switches, tokens) are the real ones; the
mixture weights and available tokens are deterministic stand-ins of the real shape.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Any

LAUNCHER = "experiments/grug/moe_hero_ep"
BATCH = 11_264  # 1,024 sequences x 11 racks
SEQ_LEN = 4_096
ACTIVE_PARAMS = 22_762_506_240
TOTAL_PARAMS = 535_477_106_688
TOKENS_PER_ACTIVE_PARAM = 791
STEPS = round(TOKENS_PER_ACTIVE_PARAM * ACTIVE_PARAMS / (BATCH * SEQ_LEN))  # 390,251
PHASE_BUDGETS = [15_000_000_000_000, 3_750_000_000_000]
MIX_SWITCH_STEP = 108_000  # PR #9162, 2026-09-14
CELLS = [f"c{cluster:02d}q{quality}" for cluster in range(40) for quality in range(5)]


def phase_1_start_step(total_steps: int, batch_size: int) -> int:
    """80% of the run, rounded down to a multiple of the mixture block (the launcher's rule)."""
    block = 49_152
    requested = max(1, int(total_steps * 0.8))
    multiple = block // math.gcd(block, batch_size)
    return max(multiple, (requested // multiple) * multiple)


PHASE_1_START = phase_1_start_step(STEPS, BATCH)  # 312,192


def _weights(seed: int, tilt: float = 0.0) -> dict[str, float]:
    rng = random.Random(seed)
    raw = {cell: rng.random() ** 3 * (1 + tilt * (int(cell[-1]) - 2)) for cell in CELLS}
    total = sum(raw.values())
    weights = {cell: round(value / total, 6) for cell, value in raw.items()}
    # Keep the sum exactly 1 at six decimals: put the rounding residue on the largest cell.
    largest = max(weights, key=weights.__getitem__)
    weights[largest] = round(weights[largest] + 1 - sum(weights.values()), 6)
    return weights


def available_tokens() -> dict[str, int]:
    rng = random.Random(2026_08_18)
    return {cell: rng.randrange(300_000_000, 230_000_000_000) for cell in CELLS}


def mixture(milestone: int) -> dict[str, Any]:
    """The data mixture JSON of the launcher: two phases, then a third from step 108,000."""
    phases: list[dict[str, Any]] = [
        {"name": "phase0", "start_step": 0, "weights": _weights(1)},
        {"name": "phase1", "start_step": PHASE_1_START, "weights": _weights(2, tilt=0.6)},
    ]
    if milestone >= 2:
        phases.insert(
            1, {"name": "phase0b", "start_step": MIX_SWITCH_STEP, "weights": _weights(3, tilt=0.3)}
        )
    return {
        "candidate": "quality_technical",
        "candidate_store_uri": "s3://marin-us-east-02a/marin/datakit/store_4d2e363d",
        "tokenizer": "marin-community/marin-tokenizer",
        "phase_budgets": PHASE_BUDGETS,
        "available_tokens": available_tokens(),
        "phases": phases,
    }


def launcher_files(milestone: int) -> dict[str, str]:
    """The launcher directory at each milestone's commit."""
    run_id = "hero-12d8b6f0-dee637" if milestone == 1 else "hero-mix-996f4891-step108k"
    files = {
        f"{LAUNCHER}/launch_scaling_ladder.py": (
            '"""Hero-shape scaling ladder: one recipe, five widths (prov demo fixture)."""\n'
            f"TOKENS_PER_ACTIVE_PARAM = {TOKENS_PER_ACTIVE_PARAM}\n"
            "HERO_EP_BATCH_SIZE = 1024  # sequences per rack\n"
            f"SEQ_LEN = {SEQ_LEN}\n"
            'LADDER_RACKS = {"d768": 1, "d1024": 2, "d1536": 6, "d2048": 11, "d6144": 11}\n'
            f"ACTIVE_PARAMS_D6144 = {ACTIVE_PARAMS}\n\n\n"
            "def num_steps(racks: int, active_params: int) -> int:\n"
            "    global_tokens_per_step = HERO_EP_BATCH_SIZE * racks * SEQ_LEN\n"
            "    tokens = TOKENS_PER_ACTIVE_PARAM * active_params\n"
            "    return max(1, round(tokens / global_tokens_per_step))\n"
        ),
        f"{LAUNCHER}/trigger_hero.sh": (
            "#!/usr/bin/env bash\nset -euo pipefail\n"
            f"RUN_ID={run_id}\n"
            'python -m experiments.grug.moe_hero_ep.launch_scaling_ladder --run-id "$RUN_ID" '
            "--size d6144 --run\n"
        ),
        f"{LAUNCHER}/harrier_mix_2026_08_18.json": json.dumps(mixture(milestone), indent=2) + "\n",
        f"{LAUNCHER}/harrier_mix_schedule.py": (
            f"PRETRAIN_TOKENS = {PHASE_BUDGETS[0]:_}\nCOOLDOWN_TOKENS = {PHASE_BUDGETS[1]:_}\n"
            "TOTAL_TOKENS = PRETRAIN_TOKENS + COOLDOWN_TOKENS  # 18.75T: the mixture's budget\n"
            + (f"MIX_SWITCH_STEP = {MIX_SWITCH_STEP:_}  # PR #9162\n" if milestone >= 2 else "")
        ),
        f"{LAUNCHER}/current_run.py": f'RUN_ID = "{run_id}"\n',
        "README.md": "# marin (prov demo fixture of the launcher's shape)\n",
    }
    return files


@dataclass(frozen=True)
class WandbRun:
    entity: str
    project: str
    run_id: str
    state: str
    created_at: str
    heartbeat_at: str
    last_step: int
    commit: str
    summary: dict[str, Any]

    @property
    def path(self) -> str:
        return f"{self.entity}/{self.project}/{self.run_id}"

    def config(self) -> dict[str, Any]:
        """The run config as the W&B API returns it: every entry wrapped in {"value": ...}."""
        plain = {
            "trainer": {
                "id": self.run_id,
                "seed": 0,
                "train_batch_size": BATCH,
                "num_train_steps": STEPS,
            },
            "model": {
                "hidden_dim": 6144,
                "num_layers": 48,
                "num_experts": 384,
                "num_experts_per_token": 8,
                "max_seq_len": SEQ_LEN,
            },
            "parameter_count": TOTAL_PARAMS,
            "active_parameter_count": ACTIVE_PARAMS,
            "git_commit": self.commit,
            "data": {"mixture": "harrier-mix-2026.08.18", "phase_1_start_step": PHASE_1_START},
        }
        wrapped: dict[str, Any] = {key: {"value": value} for key, value in plain.items()}
        wrapped["_wandb"] = {"value": {"cli_version": "0.21.1", "python_version": "3.12.8"}}
        return wrapped


TAGS = [
    "grug",
    "moe",
    "hero",
    "ep",
    "scaling-ladder",
    "shape-d6144",
    "racks-11",
    "gb200",
    "harrier-mix-2026.08.18",
]


def wandb_run(milestone: int, commit: str) -> WandbRun:
    if milestone == 1:
        return WandbRun(
            "marin-community",
            "marin_moe",
            "hero-12d8b6f0-dee637",
            "running",
            "2026-08-20T02:04:58",
            "2026-08-24T14:53:42",
            13_527,
            commit,
            {
                "_step": 13_527,
                "_runtime": 390_000.0,
                "_timestamp": 1_756_047_222.0,
                "num_devices": 704,
                "num_hosts": 176,
                "train/cross_entropy_loss": 1.321,
                "grad/norm/total": 0.205,
                "moe/drop_fraction": 0.0306,
                "throughput/mfu": 21.15,
            },
        )
    return WandbRun(
        "marin-community",
        "marin_moe",
        "hero-mix-996f4891-step108k",
        "running",
        "2026-09-15T03:12:40",
        "2026-09-15T21:40:05",
        109_214,
        commit,
        {
            "_step": 109_214,
            "_runtime": 66_000.0,
            "_timestamp": 1_757_972_405.0,
            "num_devices": 704,
            "num_hosts": 176,
            "train/cross_entropy_loss": 1.184,
            "grad/norm/total": 0.171,
            "moe/drop_fraction": 0.0288,
            "throughput/mfu": 21.4,
        },
    )


TOKEN_COUNTS_COMMIT = "3612ddc3350212e38ce8a50b99c3df7ea10b44a9"
TOKEN_COUNTS_CSV = (
    "marin_name,marin_tokens,category,synthetic,machine_translated,pdf,hf_repo,hf_subset,license,"
    "transform_tldr\n"
    "nemotron_cc/hq_actual,1120000000000,web,false,false,false,nvidia/Nemotron-CC,hq,odc-by,"
    "quality filtered crawl\n"
    "starcoder2/stack_v2_edu,385000000000,code,false,false,false,bigcode/the-stack-v2,edu,other,"
    "educational code\n"
    "finemath/finemath_3plus,34000000000,math,false,false,false,HuggingFaceTB/finemath,3plus,odc-by,"
    "math pages\n"
    "arxiv/markdown,28700000000,science,false,false,true,marin-community/ar5iv,markdown,cc-by,"
    "pdf to markdown\n"
)

ARTIFACT_RECORD = {
    "name": "datakit/store/harrier-all-sources-k40-q5-fuzzy-dedup-exempt16",
    "version": "2026.08.18",
    "uri": "s3://marin-us-east-02a/marin/datakit/store_4d2e363d",
    "lineage": ["store_0381a974", "store_81e7e39a", "store_4d2e363d"],
    "cells": 200,
    "available_tokens": sum(available_tokens().values()),
}

ACCESS_DENIED = (
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>'
    "<Message>Access Denied</Message><RequestId>tx00000a1b2c3d4e5f60-0068a8f1c2-1d2e3f-us-east-02a"
    "</RequestId><HostId>1d2e3f-us-east-02a-default</HostId></Error>"
)


WANDB_DEMO_KEY = "demo-wandb-key-not-a-secret-0000000000"
ISSUE_BODY = (
    "## [Hero Run] 535B-A23B on 18T tokens\n\n"
    "Launcher pinned at 12d8b6f09f96ad4f0277445765c1a00dbc81d5be, run "
    "marin-community/marin_moe/hero-12d8b6f0-dee637.\n\n"
    "### Job summary\n"
    "- model: 535.3B total parameters, 22.76B active (excluding embedding and output head)\n"
    "- batch_size 11,264 seqs (1024 x 11 racks), seq_len 4096, num_train_steps 390,139, "
    "total_tokens 18.0T, 791 tokens per active parameter\n"
    "- 176 tasks x 4 GB200 = 704 devices on 11 GB200 NVL72 racks\n"
)


def _storage_id(run_id: str) -> str:
    import base64

    return base64.b64encode(f"Run:v1:{run_id}:marin_moe:marin-community".encode()).decode()


def server_fixtures(milestone: int, launcher_commit: str) -> Any:
    """What the local server answers at a milestone: W&B, the Hub, the store, the tracker."""
    from provenance._testing.fixtures import Fixtures, HfCommit, HfFile, HfRepo, Route
    from provenance._testing.fixtures import WandbRun as WireRun

    run = wandb_run(milestone, launcher_commit)
    config = {key: entry["value"] for key, entry in run.config().items()}
    wire = WireRun(
        run.entity,
        run.project,
        run.run_id,
        {
            "id": _storage_id(run.run_id),
            "name": run.run_id,
            "displayName": run.run_id,
            "state": run.state,
            "group": "moe-hero-ep-scaling-ladder",
            "jobType": None,
            "commit": launcher_commit,
            "tags": TAGS,
            "createdAt": run.created_at,
            "heartbeatAt": run.heartbeat_at,
            "historyLineCount": run.last_step + 1,
            "historyKeys": {"lastStep": run.last_step, "keys": {}},
            "user": {"name": "ravwojdyla", "username": "ravwojdyla"},
            "config": config,
            "summaryMetrics": run.summary,
            "systemMetrics": {},
        },
    )
    token_counts = HfRepo(
        "dataset",
        "marin-community/token-counts",
        {"main": TOKEN_COUNTS_COMMIT},
        {
            TOKEN_COUNTS_COMMIT: HfCommit(
                TOKEN_COUNTS_COMMIT,
                "2026-08-18T21:07:11.000Z",
                [
                    HfFile(".gitattributes", b"*.csv filter=lfs diff=lfs merge=lfs -text\n"),
                    HfFile(
                        "README.md", b"# token-counts\n\nTokens per source of the Harrier mix.\n"
                    ),
                    HfFile("data/token_counts.csv", TOKEN_COUNTS_CSV.encode(), lfs=True),
                ],
            )
        },
    )
    s3 = [("x-amz-request-id", f"tx-demo-{milestone:04d}"), ("Server", "demo-object-store")]
    if milestone == 1:
        store_routes = [
            Route(
                "/marin/datakit/store_4d2e363d/.artifact.json",
                status=403,
                headers=[("Content-Type", "application/xml"), *s3],
                body=ACCESS_DENIED.encode(),
            ),
            Route(
                "/marin",
                status=403,
                headers=[("Content-Type", "application/xml"), *s3],
                body=ACCESS_DENIED.encode(),
            ),
        ]
    else:
        record = json.dumps(ARTIFACT_RECORD, indent=2).encode()
        listing = (
            '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>marin</Name>'
            "<Prefix>datakit/store_4d2e363d/</Prefix><KeyCount>2</KeyCount>"
            "<Contents><Key>datakit/store_4d2e363d/.artifact.json</Key>"
            f"<Size>{len(record)}</Size></Contents>"
            "<Contents><Key>datakit/store_4d2e363d/c00q0/part-00000.jsonl.zst</Key>"
            "<Size>2147483648</Size></Contents></ListBucketResult>"
        ).encode()
        store_routes = [
            Route(
                "/marin/datakit/store_4d2e363d/.artifact.json",
                headers=[("Content-Type", "application/json"), ("ETag", '"4d2e363d-1"'), *s3],
                body=record,
            ),
            Route("/marin", headers=[("Content-Type", "application/xml"), *s3], body=listing),
        ]
    issue = {
        "number": 8435,
        "title": "[Hero Run] 535B-A23B on 18T tokens",
        "state": "open",
        "comments": 41 if milestone == 1 else 67,
        "updated_at": "2026-08-23T18:02:11Z" if milestone == 1 else "2026-09-15T20:44:09Z",
        "body": ISSUE_BODY,
    }
    tracker = Route(
        "/repos/marin-community/marin/issues/8435",
        headers=[("Content-Type", "application/json; charset=utf-8")],
        body=json.dumps(issue, indent=2).encode(),
    )
    return Fixtures(
        wandb_api_key=WANDB_DEMO_KEY,
        wandb_runs=[wire],
        hf_repos=[token_counts],
        routes=[*store_routes, tracker],
    )
