# Constructed for prov's Marin demo in the shape of marin-community/marin's file of this
# path (upstream Apache-2.0, Copyright The Marin Authors): the names and numbers follow
# the public record, the code around them is prov's own. See examples/marin/data/README.md.
"""Harrier data mixture on the 2026.08.18 store: two phases, 15T then 3.75T tokens.

The phase weights and per-cell token counts are read from harrier_mix_2026_08_18.json.
"""

from __future__ import annotations

import json
from pathlib import Path

from marin.execution.lazy import ArtifactStep

from experiments.grug.moe.launch_datakit_moe_mix import _phase_1_start_step, _two_phase_data_config

PRETRAIN_TOKENS = 15_000_000_000_000
COOLDOWN_TOKENS = 3_750_000_000_000
TOTAL_TOKENS = PRETRAIN_TOKENS + COOLDOWN_TOKENS
HARRIER_MIX_2026_08_18_TAG = "harrier-mix-2026.08.18"
SIMULATED_EPOCHING_MAX_FLOPS = 1e23

HARRIER_MIX_2026_08_18_STORE = ArtifactStep.adopt(
    "datakit/store/harrier-all-sources-k40-q5-fuzzy-dedup-exempt16",
    "2026.08.18",
    source="s3://marin-us-east-02a/marin/datakit/store_4d2e363d",
)


def _load_spec() -> dict:
    raw = json.loads(Path(__file__).with_name("harrier_mix_2026_08_18.json").read_text())
    return {"budgets": raw["phase_budgets"], "weights": (raw["phase0_weights"], raw["phase1_weights"])}


_SPEC = _load_spec()


def harrier_mix_2026_08_18_data_config(*, total_steps: int, batch_size: int):
    """Phase 0 until the cooldown step, then phase 1."""
    return _two_phase_data_config(
        phase_weights=_SPEC["weights"],
        phase_1_start=_phase_1_start_step(total_steps, batch_size),
        target_budget=TOTAL_TOKENS,
    )
