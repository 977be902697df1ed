# Constructed for prov's Marin demo in the shape of marin-community/marin's file of this
# path (upstream Apache-2.0, Copyright The Marin Authors): the names and numbers follow
# the public record, the code around them is prov's own. See examples/marin/data/README.md.
"""Token budgets and the mixture switch, shared by the hero recipe and the cooldown search."""

PRETRAIN_TOKENS = 15_000_000_000_000
COOLDOWN_TOKENS = 3_750_000_000_000
TOTAL_TOKENS = PRETRAIN_TOKENS + COOLDOWN_TOKENS
MIXTURE_SWITCH_FRACTION = 108_000 / 390_251
MAX_COMPONENT_EPOCHS = 8.0
