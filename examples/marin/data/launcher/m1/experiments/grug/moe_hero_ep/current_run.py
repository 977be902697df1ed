# Constructed for prov's Marin demo in the shape of marin-community/marin's file of this
# path (upstream Apache-2.0, Copyright The Marin Authors): the names and numbers follow
# the public record, the code around them is prov's own. See examples/marin/data/README.md.
"""The current production hero run: updated at each handoff or rollback."""

CURRENT_HERO_RUN_ID = "hero-12d8b6f0-dee637"
