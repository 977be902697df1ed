"""The HTTP collector over many slow endpoints: ``prov snapshot`` of 200 sources on a local
server that answers each after 100 ms, against the ideal 200 x 100 ms / concurrency.

The server (``provenance._testing.server.LocalServer``, a thread of this process) sleeps before
every answer, so the run is bound by waiting: what is measured is how well prov overlaps the
waits (its thread pool, one client per source, connection set-up) plus its fixed costs (start-up,
the store, signing).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from benchmarks.harness import Context, Measurement, Plan, Row, Side, case, run_process

ENDPOINTS = 200
DELAY = 0.1
CONCURRENCY = 8  # prov.toml's [defaults] concurrency when unset


@case("http-sources", rounds=5)
def http_sources(context: Context) -> Plan:
    from provenance._testing.fixtures import Fixtures, Route
    from provenance._testing.server import LocalServer
    from provenance.config import DefaultsSection

    concurrency = DefaultsSection().concurrency
    work = context.work / "http"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    routes = [
        Route(
            f"/endpoint/{index}",
            headers=[("Content-Type", "application/json"), ("ETag", f'"{index:08x}"')],
            body=b'{"index": %d, "status": "ok"}\n' % index,
            delay=DELAY,
        )
        for index in range(ENDPOINTS)
    ]
    server = LocalServer(Fixtures(routes=routes)).start()
    context.cleanups.append(server.stop)
    from provenance.attest import keys

    key, _ = keys.generate(work, "bench")
    config = work / "prov.toml"
    # No [defaults]: prov's default concurrency is what is measured.
    config.write_text(
        "".join(
            f'[[sources]]\nname = "endpoint-{index:03d}"\nkind = "http"\n'
            f'url = "{server.url}/endpoint/{index}"\n\n'
            for index in range(ENDPOINTS)
        )
    )
    store, out = work / "store", work / "out"
    out.mkdir()
    prov = str(Path(sys.executable).with_name("prov"))
    runs = 0

    def snapshot() -> Measurement:
        nonlocal runs
        runs += 1
        target = out / f"run{runs}.intoto.jsonl"
        argv = [prov, "snapshot", "-c", str(config), "--store", str(store), "--key", str(key)]
        return run_process([*argv, "--label", f"run{runs}", "-o", str(target)], cwd=work)

    ideal = ENDPOINTS * DELAY / concurrency

    def fresh_store() -> None:
        shutil.rmtree(store, ignore_errors=True)

    return Plan(
        sides=[
            Side("prov snapshot", snapshot, prepare=fresh_store),
            Side("ideal", lambda: Measurement(ideal, None)),
        ],
        rows=[
            Row(
                f"collect {ENDPOINTS} HTTP endpoints that each answer in "
                f"{DELAY * 1000:.0f} ms (local server)",
                "prov snapshot",
                "ideal",
                "time",
                1.5,
                note=f"ideal = {ENDPOINTS} x {DELAY * 1000:.0f} ms / {concurrency} (prov's default "
                f"concurrency); prov snapshot end to end (start-up, store, signing included), "
                "into an empty store each round",
            )
        ],
    )
