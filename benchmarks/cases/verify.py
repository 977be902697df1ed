"""Verify local-key DSSE envelopes, against a bare ed25519 verify loop over the same PAE bytes."""

from __future__ import annotations

import json

from benchmarks.harness import Context, Plan, Row, Side, case, driver


def _envelopes(context: Context) -> tuple[str, str]:
    from provenance.attest import dsse, keys, statement

    count = context.sizes.envelopes
    folder = context.work / f"envelopes-{count}"
    path, public = folder / "envelopes.jsonl", folder / "bench.pub"
    if path.is_file():
        return str(path), str(public)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("bench.*"):
        stale.unlink()
    private_path, public_path = keys.generate(folder, "bench")
    signer = keys.load_signer(private_path)
    lines = []
    for index in range(count):
        body = {
            "_type": statement.STATEMENT_TYPE,
            "subject": [
                {"name": f"prov-snapshot:step-{index}", "digest": {"sha256": f"{index:064x}"}}
            ],
            "predicateType": "https://prov.dev/snapshot/v1",
            "predicate": {"label": f"step-{index}", "captures": [], "note": "x" * 256},
        }
        payload = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        lines.append(dsse.sign(statement.PAYLOAD_TYPE, payload, [signer]).to_json())
    path.write_bytes(b"\n".join(lines) + b"\n")
    return str(path), str(public_path)


@case("verify")
def verify(context: Context) -> Plan:
    path, public = _envelopes(context)
    count = context.sizes.envelopes
    return Plan(
        sides=[
            Side("prov dsse parse+verify", driver("verify-envelopes", path, public, reported=True)),
            Side("cryptography verify loop", driver("bare-verify", path, public, reported=True)),
        ],
        rows=[
            Row(
                f"verify {count:,} local-key envelopes",
                "prov dsse parse+verify",
                "cryptography verify loop",
                "speed",
                0.8,
                note="prov parses each envelope line too; the baseline gets PAE bytes ready-made",
            )
        ],
    )
