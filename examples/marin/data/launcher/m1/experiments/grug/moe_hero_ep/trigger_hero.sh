#!/usr/bin/env bash
set -euo pipefail

RUN_ID=hero-12d8b6f0-dee637

uv run iris job run --no-wait --priority production --job-name "${RUN_ID}-coord" \
  -e WANDB_PROJECT marin_moe \
  -- python -m experiments.grug.moe_hero_ep.launch_scaling_ladder \
    --run-id "$RUN_ID" --size d6144 --run
