"""A git capture of a large repository (cold), and a re-snapshot after 1% of its files changed.

Round 0 (the warm-up) snapshots the base commit; round k checks out update k, which changed 1%
of the files of update k-1. In every round the cold side snapshots into an empty store, the
re-snapshot side into the store that holds the previous rounds, the baseline lists the tree and
hashes the same checked-out files (``git ls-tree -r`` + ``git ls-files | xargs b3sum``), and the
floor streams every blob into one file with one fsync.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks import inputs
from benchmarks.harness import Context, Measurement, Plan, Row, Side, case, run_process, shell


def _prov() -> str:
    return str(Path(sys.executable).with_name("prov"))


@case("git-capture", rounds=3)
def git_capture(context: Context) -> Plan:
    sizes = context.sizes
    work = context.work / "git"
    rounds = max(context.rounds, 3)
    repo = inputs.git_repo(
        context.work / f"repo-{sizes.repo_files}", sizes.repo_files, rounds, sizes.changed_fraction
    )
    context.set_aside(work)
    work.mkdir(parents=True)
    from provenance.attest import keys

    key, _ = keys.generate(work, "bench")
    config = work / "prov.toml"
    config.write_text(
        f'[[sources]]\nname = "monorepo"\nkind = "git"\nrepo = "{repo.path}"\nref = "HEAD"\n'
    )
    cold, warm, out = work / "cold-store", work / "warm-store", work / "out"
    env = {k: v for k, v in inputs.git_env().items() if not k.startswith("PROV_")}

    runs = 0

    def snapshot(store: Path, name: str) -> Side.Run:
        """One ``prov snapshot``; each run takes a new label (a store never reuses one)."""

        def run() -> Measurement:
            nonlocal runs
            runs += 1
            label = f"{name}-{runs}"
            argv = [
                _prov(), "snapshot", "-c", str(config), "--store", str(store), "--key", str(key),
                "--label", label, "-o", str(out / f"{label}.intoto.jsonl"),
            ]  # fmt: skip
            return run_process(argv, cwd=work, env=env)

        return run

    def before_round(index: int) -> None:
        ref = "main" if index == 0 else f"update{index}"
        subprocess.run(["git", "checkout", "-q", "-f", ref], cwd=repo.path, env=env, check=True)

    def fresh_cold() -> None:
        context.set_aside(cold)

    floor = work / "floor.pack"

    def fresh_floor() -> None:
        floor.unlink(missing_ok=True)

    def statement_size() -> Measurement:
        """The attestation (one DSSE envelope around the statement) of the latest snapshot of
        the full tree, whichever side wrote it last; the re-snapshot side writes one in the
        warm-up round, so one is there from round 1."""
        latest = max(out.glob("*.intoto.jsonl"), key=lambda p: p.stat().st_mtime_ns)
        return Measurement(latest.stat().st_size, None)

    out.mkdir()
    changed = f"{sizes.changed_fraction:.0%}"
    return Plan(
        sides=[
            # The warm-up round is the re-snapshot side's first snapshot (its store must hold the
            # base commit), which reads every blob into the page cache for the cold side too.
            Side(
                "prov snapshot, empty store",
                snapshot(cold, "cold"),
                prepare=fresh_cold,
                warm=False,
            ),
            Side(
                "ls-tree + ls-files | b3sum",
                shell(
                    "git ls-tree -r HEAD > /dev/null && "
                    "git ls-files -z | xargs -0 b3sum > /dev/null",
                    cwd=repo.path,
                    env=env,
                ),
            ),
            Side("prov re-snapshot", snapshot(warm, "warm")),
            Side(
                "cat-file --batch | dd conv=fsync; b3sum",
                shell(
                    "git ls-tree -r --object-only HEAD | git cat-file --batch | "
                    f"dd of={floor} bs=4M iflag=fullblock conv=fsync status=none && "
                    f"b3sum {floor} > /dev/null",
                    cwd=repo.path,
                    env=env,
                ),
                prepare=fresh_floor,
            ),
            Side("statement", statement_size),
            Side("64 KiB", lambda: Measurement(64 << 10, None)),
        ],
        rows=[
            Row(
                f"git capture of a {sizes.repo_files:,}-file repository (cold, signed)",
                "prov snapshot, empty store",
                "ls-tree + ls-files | b3sum",
                "time",
                1.5,
                floor="cat-file --batch | dd conv=fsync; b3sum",
                floor_of="one sequential pack and one fsync",
                note="prov snapshot end to end (start-up, signing included): every blob read "
                "out of git, hashed, appended to one pack, fsynced once with its index, the "
                "file list written as a Merkle manifest; the floor streams the same blobs out "
                "of one git cat-file into one file with one fsync and hashes it once",
            ),
            Row(
                f"statement of a {sizes.repo_files:,}-file git capture",
                "statement",
                "64 KiB",
                "time",
                1.0,
                unit="bytes",
                note="the attestation file: the DSSE envelope (base64) around the statement, "
                "which carries the manifest's Merkle root, counts and bytes, not the file list",
            ),
            Row(
                f"re-snapshot after {changed} of those files changed",
                "prov re-snapshot",
                "prov snapshot, empty store",
                "time",
                0.2,
                note=f"{repo.changed:,} files changed per round; unchanged blobs come from the "
                "store's git-oid cache",
            ),
        ],
        before_round=before_round,
    )
