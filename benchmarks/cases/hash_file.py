"""Hash a 1 GiB file into the store, against b3sum; and the hash alone, against b3sum."""

from __future__ import annotations

from benchmarks import inputs
from benchmarks.harness import (
    PYTHON,
    Context,
    MiB,
    Plan,
    Row,
    Side,
    case,
    driver,
    run_process,
    shell,
)

_WHOLE_FILE = """
import mmap, sys, blake3
with open(sys.argv[1], "rb") as handle:
    view = mmap.mmap(handle.fileno(), 0, prot=mmap.PROT_READ)
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    hasher.update(view)
print(hasher.hexdigest())
"""


@case("hash-file")
def hash_file(context: Context) -> Plan:
    work = context.work / "hash-file"
    work.mkdir(parents=True, exist_ok=True)
    big = inputs.big_file(context.work / "big.bin", context.sizes.big_file)
    store = work / "store"
    copy = work / "copy.bin"

    def fresh_store() -> None:
        context.set_aside(store)

    def no_copy() -> None:
        context.set_aside(copy)

    expected = run_process(["b3sum", "--no-names", str(big)]).output.strip()
    sides = [
        Side("prov put_file (store)", driver("put-file", store, big), prepare=fresh_store),
        Side("b3sum", shell(f"b3sum --no-names {big} > /dev/null")),
        Side("prov blake3_path", driver("hash-file", big)),
        Side(
            "python: blake3 of a whole-file map",
            lambda: run_process([PYTHON, "-c", _WHOLE_FILE, str(big)]),
        ),
        Side(
            "dd copy + fsync",
            shell(f"dd if={big} of={copy} bs=4M conv=fsync status=none"),
            prepare=no_copy,
        ),
    ]
    size = f"{context.sizes.big_file / MiB:.0f} MiB"
    got = sides[0].run().output.strip().removeprefix("blake3:")
    hashed = sides[2].run().output.strip().removeprefix("blake3:")
    fresh_store()
    if not (got == hashed == expected):
        raise RuntimeError(f"digests differ: store {got}, blake3_path {hashed}, b3sum {expected}")
    return Plan(
        sides=sides,
        rows=[
            Row(
                f"hash a {size} file into the store",
                "prov put_file (store)",
                "b3sum",
                "speed",
                0.9,
                rss_cap=64 * MiB,
                floor="dd copy + fsync",
                note="the store must copy the bytes and fsync them; b3sum only reads",
            ),
            Row(
                f"blake3 of a {size} file (no store write)",
                "prov blake3_path",
                "b3sum",
                "speed",
                0.9,
                rss_cap=64 * MiB,
                floor="python: blake3 of a whole-file map",
                floor_of="a Python process",
                note="what verify --store and fsck use; the floor is the least a Python process "
                "does: start the interpreter, map the whole file (no RSS cap) and hash it with "
                "the same blake3 binding on every core",
            ),
        ],
        checks=["prov, prov's store and b3sum gave the same blake3"],
    )
