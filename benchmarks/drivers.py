"""The prov side (and the Python baselines) of each case, one process per timed run.

``python -m benchmarks.drivers NAME ARGS...``. Drivers that race other Python code print
``{"seconds": ...}`` for their work phase only; the others are timed from outside.
"""

from __future__ import annotations

import base64
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

DRIVERS: dict[str, Callable[..., None]] = {}


def driver(function: Callable[..., None]) -> Callable[..., None]:
    DRIVERS[function.__name__.replace("_", "-")] = function
    return function


def report(seconds: float, **extra: object) -> None:
    print(json.dumps({"seconds": seconds, **extra}))


@driver
def put_file(store: str, path: str) -> None:
    from provenance.store.objects import Store

    written = Store(store).init().put_file(Path(path))
    print(written.digest)


@driver
def hash_file(path: str) -> None:
    from provenance.digest import blake3_path

    print(blake3_path(path)[0])


@driver
def put_paths(store: str, listing: str) -> None:
    """Store every file named in ``listing`` (one path a line, relative to the cwd)."""
    from provenance.store.objects import Store

    paths = [Path(line) for line in Path(listing).read_text().splitlines() if line]
    written = Store(store).init().put_files(paths)
    print(len(written))


def _envelopes(path: str) -> list[bytes]:
    return [line for line in Path(path).read_bytes().splitlines() if line.strip()]


@driver
def verify_envelopes(path: str, public_key: str) -> None:
    """prov's DSSE verification of every envelope: parse, PAE, signature, threshold."""
    from provenance.attest import dsse, keys

    key = keys.load_verifier(Path(public_key))
    lines = _envelopes(path)
    start = time.perf_counter()
    for line in lines:
        dsse.verify(dsse.parse(line), [key], 1)
    report(time.perf_counter() - start, verified=len(lines))


@driver
def bare_verify(path: str, public_key: str) -> None:
    """The baseline: cryptography's ed25519 verify over the same PAE bytes, prepared up front."""
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    key = load_pem_public_key(Path(public_key).read_bytes())
    items = []
    for line in _envelopes(path):
        document = json.loads(line)
        payload = base64.b64decode(document["payload"])
        kind = document["payloadType"].encode()
        pae = b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)
        items.append((base64.b64decode(document["signatures"][0]["sig"]), pae))
    verify = key.verify  # type: ignore[union-attr]
    start = time.perf_counter()
    for signature, message in items:
        verify(signature, message)
    report(time.perf_counter() - start, verified=len(items))


def _canonical_run(encode: Callable[[object], bytes], path: str) -> None:
    import hashlib

    document = json.loads(Path(path).read_bytes())
    encode({})  # imports done (orjson, checks made once per process) before the clock starts
    start = time.perf_counter()
    data = encode(document)
    report(time.perf_counter() - start, sha256=hashlib.sha256(data).hexdigest())


@driver
def canonical(path: str) -> None:
    from provenance._internal import canonical

    _canonical_run(canonical.dumps, path)


@driver
def rfc8785(path: str) -> None:
    import rfc8785

    _canonical_run(rfc8785.dumps, path)


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in DRIVERS:
        sys.exit(f"usage: python -m benchmarks.drivers {{{','.join(sorted(DRIVERS))}}} ARGS...")
    DRIVERS[argv[0]](*argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
