"""Write many small blobs to the store, against ``git hash-object -w --stdin-paths``; then the
size of that store against the bytes themselves, and ``prov fsck`` of it against ``b3sum``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks import inputs
from benchmarks.harness import (
    Context,
    Measurement,
    Plan,
    Row,
    Side,
    case,
    driver,
    run_process,
    shell,
)


def disk_usage(folder: Path) -> int:
    """Bytes the files under ``folder`` take on disk (allocated blocks, as ``du`` counts)."""
    return sum(p.lstat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


@case("store-write", rounds=3)
def store_write(context: Context) -> Plan:
    sizes = context.sizes
    count = sizes.small_blobs
    repo = inputs.git_repo(
        context.work / f"repo-{sizes.repo_files}",
        sizes.repo_files,
        max(context.rounds, 3),
        sizes.changed_fraction,
    )
    if count > len(repo.files):
        raise ValueError(f"small_blobs ({count}) exceeds repo_files ({len(repo.files)})")
    work = context.work / "store-write"
    context.set_aside(work)
    work.mkdir(parents=True)
    listing = work / "paths.txt"
    listing.write_text("".join(f"{path}\n" for path in repo.files[:count]))
    store, git_dir, floor = work / "store", work / "objects.git", work / "floor.bin"
    env = inputs.git_env()
    prov = str(Path(sys.executable).with_name("prov"))

    def fresh_store() -> None:
        context.set_aside(store)

    def fresh_git() -> None:
        context.set_aside(git_dir)
        subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True, env=env)

    def fresh_floor() -> None:
        floor.unlink(missing_ok=True)

    put_paths = driver("put-paths", store, listing, cwd=repo.path)

    def warm_up() -> None:
        """Read the inputs; write the store once, so that the rows measuring it (its size, its
        fsck) have one in every round whichever side runs first."""
        for path in repo.files[:count]:
            (repo.path / path).read_bytes()
        fresh_store()
        put_paths()

    total = sum((repo.path / path).stat().st_size for path in repo.files[:count])
    checks: list[str] = []

    def store_size() -> Measurement:
        size = disk_usage(store)
        checks[:] = [f"the store held {size:,} bytes on disk for {total:,} bytes of blobs"]
        return Measurement(size, None)

    return Plan(
        sides=[
            Side(
                "prov Store.put_files",
                put_paths,
                prepare=fresh_store,
            ),
            Side(
                "git hash-object -w",
                shell(
                    f"GIT_DIR={git_dir} git hash-object -w --stdin-paths < {listing} > /dev/null",
                    cwd=repo.path,
                    env=env,
                ),
                prepare=fresh_git,
            ),
            Side(
                "cat | dd conv=fsync",
                shell(
                    f"xargs cat < {listing} | dd of={floor} bs=4M iflag=fullblock conv=fsync "
                    "status=none",
                    cwd=repo.path,
                    env=env,
                ),
                prepare=fresh_floor,
            ),
            Side("store on disk", store_size),
            Side("the bytes themselves", lambda: Measurement(total, None)),
            Side("prov fsck", lambda: run_process([prov, "fsck", "--store", str(store)])),
            Side(
                "b3sum",
                shell(f"xargs b3sum < {listing} > /dev/null", cwd=repo.path, env=env),
            ),
        ],
        rows=[
            Row(
                f"write {count:,} small blobs to the store",
                "prov Store.put_files",
                "git hash-object -w",
                "speed",
                3.0,
                floor="cat | dd conv=fsync",
                floor_of="one sequential file and one fsync",
                note=f"{total / count / 1024:.1f} KiB average; warm-up: inputs read; prov "
                "appends them to one pack and fsyncs it once (plus its index and folder); git "
                "writes a loose file per object and does not fsync; the floor writes the same "
                "bytes to one file with one fsync",
            ),
            Row(
                "store size for those blobs",
                "store on disk",
                "the bytes themselves",
                "time",
                1.1,
                unit="bytes",
                note="allocated blocks of every file under the store (packs, indexes, lock)",
            ),
            Row(
                "fsck of that store",
                "prov fsck",
                "b3sum",
                "speed",
                0.7,
                note="prov fsck re-hashes each object of the pack in order (start-up included); "
                "b3sum hashes the same bytes as files",
            ),
        ],
        warm_up=warm_up,
        checks=checks,
    )
