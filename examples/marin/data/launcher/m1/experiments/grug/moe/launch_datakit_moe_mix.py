# Constructed for prov's Marin demo in the shape of marin-community/marin's file of this
# path (upstream Apache-2.0, Copyright The Marin Authors): the names and numbers follow
# the public record, the code around them is prov's own. See examples/marin/data/README.md.
"""Datakit mixtures for grug MoE runs: the phase switch rule shared by every launcher."""

from __future__ import annotations

import math

# Large enough that the smallest nonzero weight still gets a sequence per block.
_MIXTURE_BLOCK_SIZE = 49_152
_PHASE_1_START_FRACTION = 0.8


def _phase_1_start_step(total_steps: int, batch_size: int) -> int:
    """80% of the run, rounded down to a step where a mixture block ends."""
    requested = max(1, int(total_steps * _PHASE_1_START_FRACTION))
    step_multiple = _MIXTURE_BLOCK_SIZE // math.gcd(_MIXTURE_BLOCK_SIZE, batch_size)
    return max(step_multiple, (requested // step_multiple) * step_multiple)
