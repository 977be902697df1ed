# Constructed for prov's Marin demo in the shape of marin-community/marin's file of this
# path (upstream Apache-2.0, Copyright The Marin Authors): the names and numbers follow
# the public record, the code around them is prov's own. See examples/marin/data/README.md.
"""Hero-shape scaling ladder: one recipe, five widths, 791 tokens per active parameter.

    size   racks  batch    steps
    d768     1     1024    11420
    d1024    2     2048    15276
    d1536    6     6144    15128
    d2048   11    11264    20072
    d6144   11    11264   390251
"""

from __future__ import annotations

from datetime import timedelta

from experiments.grug.moe_hero_ep.hero_recipe import HERO_EP_BATCH_SIZE

LADDER_RACKS: dict[str, int] = {"d768": 1, "d1024": 2, "d1536": 6, "d2048": 11, "d6144": 11}
TOKENS_PER_ACTIVE_PARAM = 791
SEQ_LEN = 4096
RESUME_SAVE_INTERVAL = timedelta(hours=1)


def num_train_steps(size: str, active_params: int) -> int:
    """Steps that give TOKENS_PER_ACTIVE_PARAM tokens per active parameter."""
    batch_size = HERO_EP_BATCH_SIZE * LADDER_RACKS[size]
    return max(1, round(TOKENS_PER_ACTIVE_PARAM * active_params / (batch_size * SEQ_LEN)))
