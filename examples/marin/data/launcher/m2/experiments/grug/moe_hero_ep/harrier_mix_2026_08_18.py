# Constructed for prov's Marin demo in the shape of marin-community/marin's file of this
# path (upstream Apache-2.0, Copyright The Marin Authors): the names and numbers follow
# the public record, the code around them is prov's own. See examples/marin/data/README.md.
"""Harrier, then the selected September mixture, on the 2026.08.18 store: three phases.

Training starts on the Harrier weights, switches to the mixture of issue #9126 at
108000/390251 of training (PR #9162), and cools down from the usual phase-1 step. The weights of
each phase are ``phases[i].weights`` in harrier_mix_2026_08_18.json.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from marin.execution.lazy import ArtifactStep

from experiments.grug.moe.launch_datakit_moe_mix import _MIXTURE_BLOCK_SIZE, _phase_1_start_step

PRETRAIN_TOKENS = 15_000_000_000_000
COOLDOWN_TOKENS = 3_750_000_000_000
TOTAL_TOKENS = PRETRAIN_TOKENS + COOLDOWN_TOKENS
HARRIER_MIX_2026_08_18_TAG = "harrier-mix-2026.08.18-to-996f4891"
SIMULATED_EPOCHING_MAX_FLOPS = 1e23

HARRIER_MIX_2026_08_18_STORE = ArtifactStep.adopt(
    "datakit/store/harrier-all-sources-k40-q5-fuzzy-dedup-exempt16",
    "2026.08.18",
    source="s3://marin-us-east-02a/marin/datakit/store_4d2e363d",
)


def _load_spec() -> list[dict[str, float]]:
    raw = json.loads(Path(__file__).with_name("harrier_mix_2026_08_18.json").read_text())
    return [phase["weights"] for phase in raw["phases"]]


_SPEC = _load_spec()
# The same relative switch on every rung: the 390,251-step hero switches after step 108,000.
_MIXTURE_SWITCH_FRACTION = 108_000 / 390_251


def harrier_mix_2026_08_18_data_config(*, total_steps: int, batch_size: int):
    """Both switches land on a mixture block boundary."""
    step_multiple = _MIXTURE_BLOCK_SIZE // math.gcd(_MIXTURE_BLOCK_SIZE, batch_size)
    switch_step = math.ceil(total_steps * _MIXTURE_SWITCH_FRACTION / step_multiple) * step_multiple
    cooldown_step = _phase_1_start_step(total_steps, batch_size)
    return sorted(zip((0, switch_step, cooldown_step), _SPEC))
