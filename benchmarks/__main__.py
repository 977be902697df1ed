"""``python -m benchmarks``: run the cases, print the table, write it to benchmarks/results/.

Sizes default to the issue's (1 GiB file, 100,000-file repository, 100,000 blobs, 10,000
envelopes, 5 MB config); each can be changed by a flag or a ``PROV_BENCH_*`` variable, e.g.
``PROV_BENCH_SCALE=0.1 make bench`` for a quick run at a tenth of every size.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.cases import __all__ as _registered  # noqa: F401 (registers the cases)
from benchmarks.harness import REGISTRY, ROOT, Context, Result, Sizes, run_case, table

RESULTS = ROOT / "benchmarks" / "results"


def _env(name: str, default: float) -> float:
    return float(os.environ.get(f"PROV_BENCH_{name}", default))


def _version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
    except FileNotFoundError:
        return "missing"
    return out.strip().splitlines()[0] if out.strip() else "?"


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} cores ({model}), load average {load}; {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()}; "
        f"{_version(['git', '--version'])}; {_version(['b3sum', '--version'])}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--cases",
        default=os.environ.get("PROV_BENCH_CASES", ""),
        help=f"comma-separated subset of: {', '.join(REGISTRY)}",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=int(_env("ROUNDS", 5)),
        help="timed rounds per case (heavy cases use 3 at most... at least)",
    )
    scale = _env("SCALE", 1.0)
    defaults = Sizes()
    parser.add_argument(
        "--big-file-mib",
        type=float,
        default=_env("BIG_FILE_MIB", defaults.big_file / 2**20 * scale),
    )
    parser.add_argument(
        "--repo-files", type=int, default=int(_env("REPO_FILES", defaults.repo_files * scale))
    )
    parser.add_argument(
        "--small-blobs", type=int, default=int(_env("SMALL_BLOBS", defaults.small_blobs * scale))
    )
    parser.add_argument(
        "--envelopes", type=int, default=int(_env("ENVELOPES", defaults.envelopes * scale))
    )
    parser.add_argument(
        "--config-mb", type=float, default=_env("CONFIG_MB", defaults.config_bytes / 1e6 * scale)
    )
    parser.add_argument(
        "--diff-objects",
        type=int,
        default=int(_env("DIFF_OBJECTS", defaults.diff_objects * scale)),
    )
    parser.add_argument(
        "--listing-objects",
        type=int,
        default=int(_env("LISTING_OBJECTS", defaults.listing_objects * scale)),
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(os.environ.get("PROV_BENCH_WORK", RESULTS / "work")),
        help="where generated inputs live (reused between runs)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=Path(os.environ.get("PROV_BENCH_RESULTS", RESULTS)),
        help="where the table is written (latest.md and a timestamped copy)",
    )
    parser.add_argument("--keep-work", action="store_true", help="keep the inputs afterwards")
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-run log on stderr")
    args = parser.parse_args(argv)

    sizes = Sizes(
        big_file=int(args.big_file_mib * 2**20),
        repo_files=args.repo_files,
        small_blobs=min(args.small_blobs, args.repo_files),
        envelopes=args.envelopes,
        config_bytes=int(args.config_mb * 1e6),
        diff_objects=args.diff_objects,
        listing_objects=args.listing_objects,
    )
    keys = [k.strip() for k in args.cases.split(",") if k.strip()] or list(REGISTRY)
    unknown = [k for k in keys if k not in REGISTRY]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
    if shutil.which("b3sum") is None:
        parser.error("b3sum is not installed (apt-get install b3sum); `make bench` installs it")

    args.work.mkdir(parents=True, exist_ok=True)
    stale = args.work / ".trash"
    if stale.exists():  # an interrupted run's: gone before anything is timed
        subprocess.run(["rm", "-rf", str(stale)], check=False)
        subprocess.run(["sync", "-f", str(args.work)], check=False)
    # prov as a wheel installs it: with bytecode. An editable install writes none when
    # PYTHONDONTWRITEBYTECODE is set, and every prov process would compile its modules again.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "provenance")], check=True)
    context = Context(args.work.resolve(), sizes, args.rounds)

    def log(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    started = time.monotonic()
    results: list[Result] = []
    for key in keys:
        log(f"== {key}")
        case_start = time.monotonic()
        try:
            results.extend(run_case(REGISTRY[key], context, log))
        except Exception as e:  # one broken case must not hide the others' numbers
            log(f"   {key} failed: {e}")
            from benchmarks.harness import Row

            results.append(
                Result(
                    Row(key, "-", "-", "time", None),
                    [],
                    [],
                    [],
                    None,
                    None,
                    [],
                    error=str(e).splitlines()[0][:200],
                )
            )
        log(f"   ({time.monotonic() - case_start:.0f} s)")
    elapsed = time.monotonic() - started

    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    header = (
        f"prov benchmarks, {stamp}, {elapsed / 60:.1f} min\n\nMachine: {machine()}\n\n"
        f"Sizes: {json.dumps(sizes.__dict__)}; medians of interleaved rounds after a warm-up."
    )
    text = table(results, header)
    print(text)
    args.results.mkdir(parents=True, exist_ok=True)
    for name in (f"results-{stamp.replace(':', '')}.md", "latest.md"):
        (args.results / name).write_text(text)
    leftovers = [context.trash]
    if not args.keep_work:
        leftovers += [context.work / name for name in ("git", "store-write", "hash-file", "http")]
    subprocess.run(["rm", "-rf", *map(str, leftovers)], check=False)
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
