"""Hostile input ends in bounded work (issue 13, class 8), through the real command line.

* a 10 KB evidence pack whose member is a 1 GiB sparse file: refused before anything is
  written (it used to be expanded into the temporary folder, then fail);
* a pack of 80,000 members of one name: refused in seconds (the duplicate check was quadratic,
  108 s);
* a FIFO where a store object should be: ``prov fsck`` reports it, never waits on it.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from provenance.store.objects import Store
from tests.reliability import figures
from tests.reliability.evidence import Evidence, run_cli

ROOT = Path(__file__).resolve().parents[2]
LIMIT_S = 20.0  # a shared 2-core machine; the bounded cases take well under a second


def _manifest(ev: Evidence, members: list[dict[str, object]]) -> bytes:
    statement = ev.statement("m1")
    document = {
        "schema": "https://prov.dev/evidence-pack/v1",
        "created": "2026-08-21T00:00:00.000000Z",
        "tool": "prov test",
        "label": "m1",
        "snapshot_sha256": statement["subject"][0]["digest"]["sha256"],
        "kind": "dsse",
        "attestation": "attestation/m1.intoto.jsonl",
        "policy": {"threshold": 1},
        "members": members,
    }
    return json.dumps(document).encode()


def _timed(*args: str) -> tuple[int, str, float]:
    started = time.monotonic()
    code, out, err, unexpected = run_cli(*args)
    assert unexpected is None, unexpected
    return code, out + err, time.monotonic() - started


def test_a_sparse_member_is_refused_before_anything_is_written(
    evidence: Evidence, tmp_path: Path
) -> None:
    if subprocess.run(["tar", "--version"], capture_output=True).returncode != 0:
        pytest.skip("a sparse member needs GNU tar: apt-get install tar")
    folder = tmp_path / "content"
    (folder / "blobs").mkdir(parents=True)
    name = "blobs/" + "ab" * 32
    with open(folder / name, "wb") as handle:
        handle.truncate(1 << 30)  # 1 GiB of hole
    member = {"name": name, "role": "blob", "sha256": "00" * 32, "size": 1 << 30}
    (folder / "manifest.json").write_bytes(_manifest(evidence, [member]))
    pack = tmp_path / "m1.evidence.tar"
    subprocess.run(
        [
            "tar",
            "--sparse",
            "--format=gnu",
            "-C",
            str(folder),
            "-cf",
            str(pack),
            "manifest.json",
            name,
        ],
        check=True,
    )
    assert pack.stat().st_size < 64 << 10
    code, output, seconds = _timed("verify", str(pack), "--key", evidence.pub("alice"))
    figures.count("hostile:inputs", "cases", 1)
    figures.peak("hostile:inputs", "slowest ms", int(seconds * 1000))
    assert code == 1 and "is a sparse file" in output, output
    assert seconds < LIMIT_S
    figures.count("hostile:inputs", "bounded", 1)


def test_many_duplicate_members_are_refused_in_bounded_time(
    evidence: Evidence, tmp_path: Path
) -> None:
    pack = tmp_path / "m1.evidence.tar"
    with tarfile.open(pack, "w", format=tarfile.USTAR_FORMAT) as tar:
        for _ in range(80_000):
            info = tarfile.TarInfo("keys/dup.pub")
            tar.addfile(info, io.BytesIO(b""))
    code, output, seconds = _timed("verify", str(pack), "--key", evidence.pub("alice"))
    figures.count("hostile:inputs", "cases", 1)
    figures.peak("hostile:inputs", "slowest ms", int(seconds * 1000))
    assert code == 1 and "members appear twice: keys/dup.pub" in output, output
    assert seconds < LIMIT_S, seconds
    figures.count("hostile:inputs", "bounded", 1)


def test_a_fifo_in_the_store_is_reported_not_waited_on(tmp_path: Path) -> None:
    store = Store(tmp_path / "store").init()
    written = store.put_bytes(b"an object a FIFO replaces " * 64)
    path = store.object_path(written.digest)
    os.chmod(path.parent, 0o755)
    path.unlink()
    os.mkfifo(path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROV_")}
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "provenance", "fsck", "--store", str(store.root)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    seconds = time.monotonic() - started
    figures.count("hostile:inputs", "cases", 1)
    figures.peak("hostile:inputs", "slowest ms", int(seconds * 1000))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"CORRUPT: objects/{written.digest.hex[:2]}/{written.digest.hex[2:]}" in result.stdout
    figures.count("hostile:inputs", "bounded", 1)
