# Constructed for prov's Marin demo in the shape of marin-community/marin's file of this
# path (upstream Apache-2.0, Copyright The Marin Authors): the names and numbers follow
# the public record, the code around them is prov's own. See examples/marin/data/README.md.
"""The hero recipe: batch per rack, nodes per rack, precision."""

DEFAULT_WANDB_PROJECT = "marin_moe"
HERO_EP_BATCH_SIZE = 1024
HERO_EP_NODES = 16
HERO_GPUS_PER_NODE = 4
HERO_EP_EXPERT_AXIS_SIZE = HERO_EP_NODES * HERO_GPUS_PER_NODE
HERO_MIXED_PRECISION = "params=bfloat16,compute=bfloat16,output=bfloat16"
