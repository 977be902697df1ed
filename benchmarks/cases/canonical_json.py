"""Canonical JSON of a W&B config, against the rfc8785 package; outputs must be identical."""

from __future__ import annotations

import json

from benchmarks import inputs
from benchmarks.harness import Context, MiB, Plan, Row, Side, case, driver


@case("canonical-json")
def canonical_json(context: Context) -> Plan:
    path = context.work / f"wandb-config-{context.sizes.config_bytes}.json"
    if not path.is_file():
        path.write_text(json.dumps(inputs.wandb_config(context.sizes.config_bytes)))
    prov = driver("canonical", path, reported=True)
    reference = driver("rfc8785", path, reported=True)
    ours = json.loads(prov().output.splitlines()[-1])["sha256"]
    theirs = json.loads(reference().output.splitlines()[-1])["sha256"]
    if ours != theirs:
        raise RuntimeError(f"canonical JSON differs from rfc8785: {ours} != {theirs}")
    size = f"{path.stat().st_size / MiB:.1f} MiB"
    return Plan(
        sides=[Side("prov canonical.dumps", prov), Side("rfc8785.dumps", reference)],
        rows=[
            Row(
                f"canonical JSON of a {size} W&B config",
                "prov canonical.dumps",
                "rfc8785.dumps",
                "speed",
                5.0,
            )
        ],
        checks=["byte-identical output (same sha256)"],
    )
