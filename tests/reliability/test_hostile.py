"""Hostile servers: every way a server can hold or flood a capture ends in bounded time and memory.

Each case is a real ``prov snapshot`` process (one steady source, one hostile) against the real
server of provenance/testing/server.py on 127.0.0.1. For each: the process ends within the
source's configured time (``timeout`` per attempt, 2 s here) plus start-up, its peak RSS (the
kernel's VmHWM, see peak.py) stays under ``RSS_BOUND``, the hostile source is recorded as a
failed capture of the expected type (or as ``ok`` where docs/captures.md says so: a body cut at
the cap is ``ok`` with ``truncated``), the snapshot is written (exit 4 when a source failed)
and its attestation verifies. The child runs under RLIMIT_AS, so a regression that inflates a
gzip bomb fails the test with a MemoryError instead of filling the machine.
"""

from __future__ import annotations

import base64
import json
import os
import resource
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import blake3
import pytest

from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.server import LocalServer
from tests.reliability import figures
from tests.reliability.evidence import Evidence, run_cli

ROOT = Path(__file__).resolve().parents[2]  # the worktree: `-m tests.reliability.peak` runs from it

TIMEOUT = 2.0  # seconds per attempt, the sources' configured `timeout`
DEADLINE_SLACK = 1.0  # the capture's own elapsed time may exceed its timeout by this much
STARTUP_SLACK = 25.0  # interpreter, imports, signing, on a shared 2-core machine
HARD_KILL = 90.0  # a case still running by then did not end on its own
RSS_BOUND = 128 << 20  # bytes of peak resident memory for any case (prov itself: ~90 MiB)
ADDRESS_SPACE = 3 << 30  # RLIMIT_AS of the child: a runaway inflate dies, the machine does not
MAX_BODY = 4 << 20  # max_body_bytes of the hostile sources
PUBLIC_ADDRESS = "93.184.215.14"  # a global address; the proxy below answers for it, no packet
# leaves the machine

MIB = 1 << 20
_ZEROS = bytes(MIB)


# -- a gzip bomb, made in milliseconds -----------------------------------------------------------


def _crc32_of_zeros(mebibytes: int) -> int:
    """zlib.crc32 of ``mebibytes`` MiB of zeros, without hashing them.

    crc32(1 MiB of zeros, c) is affine in c over GF(2); composing it with itself by squaring
    gives the n-fold map in log n steps.
    """

    def apply(columns: list[int], constant: int, value: int) -> int:
        out, bit = constant, 0
        while value:
            if value & 1:
                out ^= columns[bit]
            value >>= 1
            bit += 1
        return out

    constant = zlib.crc32(_ZEROS, 0)
    columns = [zlib.crc32(_ZEROS, 1 << i) ^ constant for i in range(32)]
    result_columns, result_constant = [1 << i for i in range(32)], 0
    while mebibytes:
        if mebibytes & 1:
            result_columns = [apply(columns, 0, v) for v in result_columns]
            result_constant = apply(columns, constant, result_constant)
        columns, constant = (
            [apply(columns, 0, v) for v in columns],
            apply(columns, constant, constant),
        )
        mebibytes >>= 1
    return result_constant


def gzip_bomb(inflated: int) -> bytes:
    """A valid gzip member of ``inflated`` zero bytes (whole MiB): ~1 KB of wire per MiB.

    A fully flushed deflate block restarts with an empty history, so one compressed MiB of
    zeros repeated is a valid stream; a final empty block and the gzip trailer close it.
    """
    count, rest = divmod(inflated, MIB)
    assert rest == 0
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = compressor.compress(_ZEROS) + compressor.flush(zlib.Z_FULL_FLUSH)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", _crc32_of_zeros(count), inflated & 0xFFFFFFFF)
    return header + piece * count + b"\x03\x00" + trailer


def test_the_gzip_bomb_is_valid_gzip() -> None:
    import gzip

    assert gzip.decompress(gzip_bomb(9 * MIB)) == bytes(9 * MIB)
    assert len(gzip_bomb(4096 * MIB)) < 5 * MIB


# -- the cases -----------------------------------------------------------------------------------

BOMB_4G = gzip_bomb(4096 * MIB)  # 4 GiB inflated, about 4.2 MB on the wire
BOMB_900M = gzip_bomb(900 * MIB)  # under the 1 MiB the http collector parses as JSON


@dataclass(frozen=True)
class Hostile:
    id: str
    routes: tuple[Route, ...]
    path: str
    status: str  # "failed" or "ok", as docs/captures.md documents the outcome
    error: str | None = None  # the capture's error.type
    options: dict[str, Any] = field(default_factory=dict)
    proxy: bool = False  # reach the hostile URL through the local server as an HTTP proxy
    url: str | None = None  # the URL, when not the local server's own
    check: Callable[[dict[str, Any], Path], None] | None = None
    kind: str = "http"  # "oci": the source is an image on the server (as a registry)


def _stored_wire_bytes(wire: bytes) -> Callable[[dict[str, Any], Path], None]:
    """The store keeps the compressed bytes as they came, never an inflated copy."""

    def check(capture: dict[str, Any], store: Path) -> None:
        data = capture["data"]
        assert data["body"]["size"] == len(wire) and data["body"]["complete"], data["body"]
        assert data["json"] is None
        body = next(b for b in capture["blobs"] if b["name"] == "body")
        assert body["digest"] == f"blake3:{blake3.blake3(wire).hexdigest()}"
        largest = max(p.stat().st_size for p in (store / "objects").rglob("*") if p.is_file())
        assert largest == len(wire)

    return check


def _kept_partial(sent: int, *, exact: bool) -> Callable[[dict[str, Any], Path], None]:
    """What arrived before the break is kept: all of it after a clean close (a reset may drop
    what the kernel had not handed over yet)."""

    def check(capture: dict[str, Any], store: Path) -> None:
        body = capture["data"]["body"]
        assert body["complete"] is False and body["truncated"] is False, body
        assert body["size"] == sent if exact else 0 < body["size"] <= sent, body

    return check


def _deadline(capture: dict[str, Any], store: Path) -> None:
    assert capture["error"]["detail"]["phase"] == "deadline", capture["error"]


def _deadline_kept_bytes(capture: dict[str, Any], store: Path) -> None:
    _deadline(capture, store)
    body = capture["data"]["body"]
    assert body["complete"] is False and body["size"] >= 1, body  # the trickled bytes are kept


def _hops(count: int) -> Callable[[dict[str, Any], Path], None]:
    def check(capture: dict[str, Any], store: Path) -> None:
        assert len(capture["data"]["redirects"]) == count, capture["data"]["redirects"]

    return check


def _headers_kept(count: int) -> Callable[[dict[str, Any], Path], None]:
    def check(capture: dict[str, Any], store: Path) -> None:
        names = [k for k, _ in capture["data"]["headers"] if k.startswith("X-Flood-")]
        assert len(names) == count

    return check


def _not_parsed(capture: dict[str, Any], store: Path) -> None:
    assert capture["data"]["json"] is None and capture["data"]["body"]["complete"]


def _truncated_at_cap(capture: dict[str, Any], store: Path) -> None:
    body = capture["data"]["body"]
    assert body["truncated"] is True and body["size"] == MAX_BODY, body


def _oci(name: str, route: Route, error: str, **kwargs: Any) -> Hostile:
    """A registry whose manifest endpoint misbehaves (the OCI collector's own client)."""
    path = f"/v2/hostile/{name}/manifests/v1"
    image = f"127.0.0.1:{{port}}/hostile/{name}:v1"
    return Hostile(
        f"oci-{name}",
        (replace(route, path=path),),
        path,
        "failed",
        error,
        options={"image": image, "plain_http": True},
        kind="oci",
        **kwargs,
    )


OCI_MANIFEST = [("Content-Type", "application/vnd.oci.image.manifest.v1+json")]

CASES: tuple[Hostile, ...] = (
    Hostile(
        "reset-mid-body",
        (Route("/reset", size=8 * MIB, reset_after=300_000),),
        "/reset",
        "failed",
        "reset",
        check=_kept_partial(300_000, exact=False),
    ),
    Hostile(
        "truncated-chunked",
        (Route("/chunked", chunked=True, size=2 * MIB, close_after=700_000),),
        "/chunked",
        "failed",
        "reset",
        check=_kept_partial(700_000, exact=True),
    ),
    Hostile(
        "truncated-content-length",
        (Route("/cut", size=2 * MIB, close_after=700_000),),
        "/cut",
        "failed",
        "reset",
        check=_kept_partial(700_000, exact=True),
    ),
    Hostile(
        "trickle-body",
        (Route("/trickle-body", trickle=0.5),),
        "/trickle-body",
        "failed",
        "timeout",
        check=_deadline_kept_bytes,
    ),
    Hostile(
        "trickle-headers",
        (Route("/trickle-headers", trickle=0.5, trickle_from="headers"),),
        "/trickle-headers",
        "failed",
        "timeout",
        check=_deadline,
    ),
    Hostile(
        "trickle-redirect-body",
        (Route("/trickle-hop", status=302, redirect="/steady", trickle=0.5),),
        "/trickle-hop",
        "failed",
        "timeout",
    ),
    Hostile("silent", (Route("/silent", delay=60),), "/silent", "failed", "timeout"),
    Hostile(
        "redirect-loop",
        (Route("/loop", status=302, redirect="/loop"),),
        "/loop",
        "failed",
        "too-many-redirects",
        check=_hops(11),
    ),
    Hostile(
        "redirect-to-file",
        (Route("/to-file", status=302, redirect="file:///etc/passwd"),),
        "/to-file",
        "failed",
        "redirect-refused",
    ),
    Hostile(
        "redirect-to-ftp",
        (Route("/to-ftp", status=301, redirect="ftp://127.0.0.1/pub/weights.bin"),),
        "/to-ftp",
        "failed",
        "redirect-refused",
    ),
    Hostile(
        "redirect-to-private",
        (Route("/to-private", status=302, redirect="http://127.0.0.1:{port}/steady"),),
        "/to-private",
        "failed",
        "redirect-refused",
        options={"allow_private": False},
        proxy=True,
        url=f"http://{PUBLIC_ADDRESS}/to-private",
        check=_hops(1),
    ),
    Hostile(
        "redirect-to-private-metadata",
        (Route("/to-metadata", status=307, redirect="http://169.254.169.254/latest/meta-data/"),),
        "/to-metadata",
        "failed",
        "redirect-refused",
        options={"allow_private": False},
        proxy=True,
        url=f"http://{PUBLIC_ADDRESS}/to-metadata",
    ),
    Hostile(
        "gzip-bomb-4GiB-error",
        (
            Route(
                "/bomb",
                status=403,
                body=BOMB_4G,
                headers=[("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
            ),
        ),
        "/bomb",
        "ok",
        options={"max_body_bytes": 16 * MIB},  # the whole wire body is kept
        check=_stored_wire_bytes(BOMB_4G),
    ),
    Hostile(
        "gzip-bomb-900MiB-json",
        (
            Route(
                "/bomb-json",
                body=BOMB_900M,
                headers=[("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
            ),
        ),
        "/bomb-json",
        "ok",
        check=_stored_wire_bytes(BOMB_900M),
    ),
    Hostile(
        "json-nesting-bomb",
        (
            Route(
                "/deep-json",
                body=b"[" * 500_000 + b"]" * 500_000,
                headers=[("Content-Type", "application/json")],
            ),
        ),
        "/deep-json",
        "ok",
        check=_not_parsed,
    ),
    Hostile(
        "endless-body",
        (Route("/endless", size=1 << 40),),
        "/endless",
        "ok",
        check=_truncated_at_cap,
    ),
    Hostile(
        "header-flood-2000",
        (Route("/flood", headers=[(f"X-Flood-{n}", "v") for n in range(2000)]),),
        "/flood",
        "ok",
        check=_headers_kept(2000),
    ),
    Hostile(
        "header-flood-20000",
        (Route("/flood-more", headers=[(f"X-Flood-{n}", "v") for n in range(20_000)]),),
        "/flood-more",
        "failed",
        "protocol",
    ),
    _oci("trickle-headers", Route("", trickle=0.5, trickle_from="headers"), "timeout"),
    _oci("trickle-body", Route("", trickle=0.5, headers=OCI_MANIFEST), "timeout"),
    _oci(
        "deep-json",
        Route("", body=b"[" * 500_000 + b"]" * 500_000, headers=OCI_MANIFEST),
        "decode",
    ),
    _oci(
        "gzip-bomb",
        Route("", body=BOMB_900M, headers=[*OCI_MANIFEST, ("Content-Encoding", "gzip")]),
        "body-too-large",
    ),
    Hostile(
        "huge-header",
        (Route("/huge-header", headers=[("X-Huge", "a" * (8 * MIB))]),),
        "/huge-header",
        "failed",
        "protocol",
    ),
)


# -- running them ------------------------------------------------------------------------------


@dataclass
class Run:
    case: Hostile
    root: Path
    code: int
    wall: float
    peak_rss: int
    stdout: str
    stderr: str
    killed: bool

    @property
    def attestation(self) -> Path:
        return self.root / "attestations" / "hostile.intoto.jsonl"

    def capture(self, source: str) -> dict[str, Any]:
        envelope = json.loads(self.attestation.read_bytes())
        statement = json.loads(base64.b64decode(envelope["payload"]))
        captures = statement["predicate"]["captures"]
        found: dict[str, Any] = next(c for c in captures if c["source"] == source)
        return found


def _config(case: Hostile, server: LocalServer) -> str:
    if case.kind == "http":
        url = (case.url or server.url + case.path).replace("{port}", str(server.port))
        options = {"url": url, "max_body_bytes": MAX_BODY, **case.options}
    else:
        options = {k: v.replace("{port}", str(server.port)) if isinstance(v, str) else v
                   for k, v in case.options.items()}  # fmt: skip
    extra = "".join(f"{k} = {json.dumps(v)}\n" for k, v in options.items())
    return (
        '[store]\npath = ".prov"\n\n'
        f"[defaults]\ntimeout = {TIMEOUT}\nretries = 0\nconcurrency = 2\n\n"
        f'[[sources]]\nname = "steady"\nkind = "http"\nurl = "{server.url}/steady"\n\n'
        f'[[sources]]\nname = "hostile"\nkind = "{case.kind}"\n{extra}'
    )


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _run(case: Hostile, root: Path, server: LocalServer, key: Path) -> Run:
    root.mkdir(parents=True)
    (root / "prov.toml").write_text(_config(case, server))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PROV_") and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    if case.proxy:
        env["HTTP_PROXY"] = server.url
    peak = root / "peak-rss"
    command = [
        sys.executable, "-m", "tests.reliability.peak", str(peak),
        "snapshot", "-c", str(root / "prov.toml"), "--label", "hostile", "--key", str(key),
    ]  # fmt: skip
    out, err = root / "stdout", root / "stderr"
    started = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=stdout, stderr=stderr, preexec_fn=_limits
        )
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        process.kill()

    timer = threading.Timer(HARD_KILL, kill)
    timer.start()
    try:
        process.wait()
    finally:
        timer.cancel()
    return Run(
        case,
        root,
        process.returncode,
        time.monotonic() - started,
        int(peak.read_text()) if peak.exists() else 0,
        out.read_text(errors="replace"),
        err.read_text(errors="replace"),
        killed.is_set(),
    )


@pytest.fixture(scope="module")
def hostile_server() -> Iterator[LocalServer]:
    routes = [Route("/steady", body=b"steady\n", headers=[("Content-Type", "text/plain")])]
    for case in CASES:
        routes += case.routes
    server = LocalServer(Fixtures(routes=routes)).start()
    # A redirect's Location may name the server's own port; it is known only now.
    for route in server.fixtures.routes:
        if route.redirect and "{port}" in route.redirect:
            route.redirect = route.redirect.replace("{port}", str(server.port))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def runs(
    hostile_server: LocalServer, evidence: Evidence, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Run]:
    """Every case at once, four at a time: most of them spend their time waiting."""
    base = tmp_path_factory.mktemp("hostile")
    key = evidence.keys / "alice.key"
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            case.id: pool.submit(_run, case, base / case.id, hostile_server, key) for case in CASES
        }
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_hostile_server_is_bounded_and_recorded(
    case: Hostile, runs: dict[str, Run], evidence: Evidence
) -> None:
    run = runs[case.id]
    figures.count("hostile", "cases")
    problems = []
    where = f"{case.id}: exit {run.code}, {run.wall:.1f}s, {run.peak_rss >> 20} MiB\n{run.stderr}"
    assert not run.killed, f"{case.id} did not end within {HARD_KILL:g}s\n{where}"
    assert "Traceback" not in run.stderr, where
    assert run.code == (4 if case.status == "failed" else 0), where
    capture = run.capture("hostile")
    assert run.capture("steady")["status"] == "ok"
    assert capture["status"] == case.status, capture
    if case.error is not None:
        assert capture["error"]["type"] == case.error, capture["error"]
    if case.check is not None:
        case.check(capture, run.root / ".prov")
    elapsed = sum(a["elapsed_ms"] for a in capture["attempts"]) / 1000
    if elapsed > TIMEOUT + DEADLINE_SLACK:
        problems.append(f"the capture took {elapsed:.1f}s, over its {TIMEOUT:g}s timeout")
    if run.wall > TIMEOUT + DEADLINE_SLACK + STARTUP_SLACK:
        problems.append(f"the process took {run.wall:.1f}s")
    if run.peak_rss > RSS_BOUND:
        problems.append(f"peak RSS {run.peak_rss >> 20} MiB over {RSS_BOUND >> 20} MiB")
    code, _, err, unexpected = run_cli(
        "verify", str(run.attestation), "--key", evidence.pub("alice")
    )
    assert code == 0 and unexpected is None, err
    figures.peak("hostile", "slowest capture ms", round(elapsed * 1000))
    figures.peak("hostile", "largest peak RSS MiB", run.peak_rss >> 20)
    if problems:
        figures.count("hostile", "wrongly unbounded")
        figures.note("hostile", f"{case.id}: " + "; ".join(problems))
    else:
        figures.count("hostile", "bounded")
    assert not problems, f"{case.id}: {problems}\n{where}"
