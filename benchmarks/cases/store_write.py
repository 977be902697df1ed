"""Write many small blobs to the store, against ``git hash-object -w --stdin-paths``."""

from __future__ import annotations

import subprocess

from benchmarks import inputs
from benchmarks.harness import Context, Plan, Row, Side, case, driver, shell


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
    store, git_dir = work / "store", work / "objects.git"
    env = inputs.git_env()

    def fresh_store() -> None:
        context.set_aside(store)

    def fresh_git() -> None:
        context.set_aside(git_dir)
        subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True, env=env)

    def warm_up() -> None:
        for path in repo.files[:count]:
            (repo.path / path).read_bytes()

    total = sum((repo.path / path).stat().st_size for path in repo.files[:count])
    return Plan(
        sides=[
            Side(
                "prov Store.put_files",
                driver("put-paths", store, listing, cwd=repo.path),
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
        ],
        rows=[
            Row(
                f"write {count:,} small blobs to the store",
                "prov Store.put_files",
                "git hash-object -w",
                "speed",
                1.0,
                note=f"{total / count / 1024:.1f} KiB average; warm-up: inputs read; prov "
                "fsyncs every object, git does not fsync loose objects by default",
            )
        ],
        warm_up=warm_up,
    )
