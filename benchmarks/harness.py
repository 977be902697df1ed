"""The benchmark harness: cases, sides, interleaved runs, medians, one table.

A *case* builds its inputs and returns *sides* (prov, the baseline, sometimes a floor that shows
what the machine itself allows) and the *rows* of the table that compare them. The runner warms
every side up, then runs them interleaved (A B A B, the order reversed on every other round, so
the CPU's two speeds and the page cache hit both alike) and reports medians.

Every timed run is a subprocess: its peak RSS comes from ``os.wait4`` (the kernel's rusage of
that child and the children it waited for). Python-versus-Python sides report the time of their
work phase themselves (the last stdout line, JSON ``{"seconds": ...}``), so interpreter start-up
is not counted on either side; a side racing a native tool is timed from outside, start-up
included, like the tool.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
MiB = 1 << 20
TIME = shutil.which("time", path="/usr/bin:/bin")  # GNU time, for peak RSS (see run_process)


@dataclass
class Measurement:
    seconds: float
    rss: int | None  # bytes
    output: str = ""


class BenchError(RuntimeError):
    pass


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: Path | None = None,
    reported: bool = False,
    timeout: float = 900,
    ok: tuple[int, ...] = (0,),
) -> Measurement:
    """Run one command; wall time (or its own report) and the peak RSS of its process tree.

    The peak RSS comes from GNU time (``%M``: wait4's rusage of the command and its children).
    It cannot come from our own wait4: a child spawned from this process starts from a copy of
    our memory, and Linux carries that size into the child's ru_maxrss across exec.
    """
    usage_file = None
    if TIME is not None:
        handle, usage_file = tempfile.mkstemp(prefix="prov-bench-rss-")
        os.close(handle)
        argv = [TIME, "-f", "%M", "-o", usage_file, *argv]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin_handle = stdin.open("rb") if stdin else subprocess.DEVNULL
        try:
            start = time.perf_counter()
            process = subprocess.Popen(
                list(argv), cwd=cwd, env=env, stdin=stdin_handle, stdout=out, stderr=err
            )
            killer = threading.Timer(timeout, process.kill)
            killer.start()
            try:
                _, status, _ = os.wait4(process.pid, 0)
            finally:
                killer.cancel()
            elapsed = time.perf_counter() - start
            process.returncode = os.waitstatus_to_exitcode(status)
        finally:
            if stdin is not None and not isinstance(stdin_handle, int):
                stdin_handle.close()
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        if process.returncode not in ok:
            stderr = err.read().decode("utf-8", "replace")
            raise BenchError(
                f"`{shlex.join(argv)}` exited {process.returncode}: {stderr.strip()[-2000:]}"
            )
    peak = None
    if usage_file is not None:
        text = Path(usage_file).read_text().split()
        os.unlink(usage_file)
        peak = int(text[-1]) * 1024 if text and text[-1].isdigit() else None
    if reported:
        lines = [line for line in stdout.splitlines() if line.startswith("{")]
        if not lines:
            raise BenchError(f"`{shlex.join(argv)}` did not report its time")
        elapsed = float(json.loads(lines[-1])["seconds"])
    return Measurement(elapsed, peak, stdout)


def driver(*args: str | Path, reported: bool = False, cwd: Path | None = None) -> Side.Run:
    """A run of ``python -m benchmarks.drivers ARGS`` (prov's library, in its own process)."""
    argv = [PYTHON, "-m", "benchmarks.drivers", *map(str, args)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return lambda: run_process(argv, cwd=cwd, env=env, reported=reported)


def shell(command: str, *, cwd: Path | None = None, env: dict[str, str] | None = None) -> Side.Run:
    return lambda: run_process(["sh", "-c", command], cwd=cwd, env=env)


@dataclass
class Side:
    Run = Callable[[], Measurement]

    name: str
    run: Run
    prepare: Callable[[], None] | None = None  # untimed, before every run (fresh state)
    # Where one run costs half a minute: run in the warm-up or not, and in how many timed rounds
    # (None: every round). The table says n= for each row, from prov's side.
    warm: bool = True
    rounds: int | None = None


@dataclass
class Row:
    """One line of the table: prov's side against a baseline, with the target to meet.

    ``kind`` says how the target reads: ``speed`` wants prov's rate >= target x the baseline's
    (baseline time / prov time), ``time`` wants prov's time <= target x the baseline's.
    ``floor`` names a side that does only the part of the work the machine cannot go below; when
    even the floor misses the target, the row says the target is beyond this machine.
    """

    title: str
    prov: str
    baseline: str
    kind: Literal["speed", "time"]
    target: float | None  # None: no target on the ratio (the row is for its RSS, or its rate)
    rss_cap: int | None = None
    floor: str | None = None
    floor_of: str = "this machine"  # what the floor stands for: "missed: beyond <floor_of>"
    note: str = ""
    per: tuple[int, str] | None = None  # (count, unit): also show prov's rate, e.g. objects/s
    # What a side's measurement is: seconds, or bytes (a size row: the store on disk, a
    # statement). "speed" and "time" then read as "smaller is better" either way.
    unit: Literal["seconds", "bytes"] = "seconds"


@dataclass
class Plan:
    sides: list[Side]
    rows: list[Row]
    before_round: Callable[[int], None] | None = None  # round 0 is the warm-up
    # Replaces the warm-up round where one full round costs minutes (it must still bring the
    # inputs into the page cache right before timing).
    warm_up: Callable[[], None] | None = None
    checks: list[str] = field(default_factory=list)  # what the case verified (same output...)


@dataclass(frozen=True)
class Sizes:
    big_file: int = 1 << 30
    repo_files: int = 100_000
    changed_fraction: float = 0.01
    small_blobs: int = 100_000
    envelopes: int = 10_000
    config_bytes: int = 5_000_000
    diff_objects: int = 1_000_000
    listing_objects: int = 1_000_000


@dataclass
class Context:
    work: Path
    sizes: Sizes
    rounds: int
    # Run after the case, even when it fails (a server thread to stop, a big tree to delete).
    cleanups: list[Callable[[], None]] = field(default_factory=list)

    @property
    def trash(self) -> Path:
        return self.work / ".trash"

    def set_aside(self, path: Path) -> None:
        """Move a previous run's output out of the way with one rename.

        Deleting 100,000 files on a disk mounted with ``discard`` keeps the journal busy long
        after ``rm`` returns; the next timed run that syncs would pay for it. What is set aside
        is deleted after the last case (``python -m benchmarks``).
        """
        if path.exists() or path.is_symlink():
            self.trash.mkdir(exist_ok=True)
            path.rename(self.trash / f"{path.name}-{uuid.uuid4().hex[:12]}")


CaseSetup = Callable[[Context], Plan]


@dataclass
class Case:
    key: str
    setup: CaseSetup
    rounds: int | None = None  # overrides the default number of timed rounds


REGISTRY: dict[str, Case] = {}


def case(key: str, *, rounds: int | None = None) -> Callable[[CaseSetup], CaseSetup]:
    """Register a case: ``@case("name")`` on a function that builds its inputs and sides."""

    def register(setup: CaseSetup) -> CaseSetup:
        REGISTRY[key] = Case(key, setup, rounds)
        return setup

    return register


@dataclass
class Result:
    row: Row
    prov: list[float]
    baseline: list[float]
    floor: list[float]
    prov_rss: int | None
    baseline_rss: int | None
    checks: list[str]
    error: str | None = None

    @property
    def prov_median(self) -> float:
        return statistics.median(self.prov)

    @property
    def baseline_median(self) -> float:
        return statistics.median(self.baseline)

    def ratio_of(self, seconds: float) -> float:
        base = self.baseline_median
        return base / seconds if self.row.kind == "speed" else seconds / base

    @property
    def ratio(self) -> float:
        return self.ratio_of(self.prov_median)

    def meets(self, ratio: float) -> bool:
        target = self.row.target
        if target is None:
            return True
        return ratio >= target if self.row.kind == "speed" else ratio <= target

    @property
    def rss_ok(self) -> bool:
        cap = self.row.rss_cap
        return cap is None or (self.prov_rss is not None and self.prov_rss <= cap)

    @property
    def verdict(self) -> str:
        if self.error:
            return f"ERROR: {self.error}"
        parts = []
        if self.meets(self.ratio) and self.rss_ok:
            return "met"
        if not self.meets(self.ratio):
            if self.floor:
                floor = self.ratio_of(statistics.median(self.floor))
                if not self.meets(floor):
                    parts.append(
                        f"missed: beyond {self.row.floor_of} ({self.row.floor} alone: {floor:.2f}x)"
                    )
                else:
                    parts.append(f"missed ({self.row.floor} alone: {floor:.2f}x)")
            else:
                parts.append("missed")
        if not self.rss_ok:
            parts.append("RSS over the cap")
        return "; ".join(parts)


def run_case(case: Case, context: Context, log: Callable[[str], None]) -> list[Result]:
    try:
        return _run_case(case, context, log)
    finally:
        while context.cleanups:
            context.cleanups.pop()()


def _run_case(case: Case, context: Context, log: Callable[[str], None]) -> list[Result]:
    plan = case.setup(context)
    sides = {side.name: side for side in plan.sides}
    times: dict[str, list[float]] = {name: [] for name in sides}
    rss: dict[str, int] = {}
    rounds = case.rounds or context.rounds
    for round_index in range(rounds + 1):  # round 0 warms everything up and is not counted
        if round_index == 0 and plan.warm_up:
            plan.warm_up()
            log("    warm-up  (inputs read into the page cache)")
            continue
        if plan.before_round:
            plan.before_round(round_index)
        order = plan.sides if round_index % 2 == 0 else list(reversed(plan.sides))
        for side in order:
            if round_index == 0 and not side.warm:
                continue
            if round_index and side.rounds is not None and round_index > side.rounds:
                continue
            if side.prepare:
                side.prepare()
                # What a prepare deleted or wrote is flushed before the clock starts, so that a
                # side which syncs does not also wait for the previous run's clean-up.
                subprocess.run(["sync", "-f", str(context.work)], check=False)
            measured = side.run()
            label = "warm-up" if round_index == 0 else f"round {round_index}"
            sized = any(r.unit == "bytes" and side.name in (r.prov, r.baseline) for r in plan.rows)
            amount = f"{measured.seconds:10,.0f} B" if sized else f"{measured.seconds:8.3f} s"
            log(f"    {label:8s} {side.name:28s} {amount}")
            if round_index:
                times[side.name].append(measured.seconds)
                if measured.rss is not None:
                    rss[side.name] = max(rss.get(side.name, 0), measured.rss)
    return [
        Result(
            row,
            times[row.prov],
            times[row.baseline],
            times[row.floor] if row.floor else [],
            rss.get(row.prov),
            rss.get(row.baseline),
            plan.checks,
        )
        for row in plan.rows
    ]


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _amount(value: float, row: Row) -> str:
    if row.unit == "seconds":
        return _seconds(value)
    if value >= MiB:
        return f"{value / MiB:.1f} MiB"
    return f"{value / 1024:.1f} KiB" if value >= 1024 else f"{value:.0f} B"


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / MiB:.0f} MiB"


def _target(row: Row) -> str:
    parts = []
    if row.target is not None:
        word = "size" if row.unit == "bytes" else "time"
        parts.append(
            f"speed >= {row.target:g}x" if row.kind == "speed" else f"{word} <= {row.target:g}x"
        )
    if row.rss_cap:
        parts.append(f"RSS <= {_mib(row.rss_cap)}")
    return ", ".join(parts) or "-"


def _prov(result: Result) -> str:
    text = _amount(result.prov_median, result.row)
    if result.row.per and result.row.unit == "seconds":
        count, unit = result.row.per
        text += f" ({count / result.prov_median:,.0f} {unit}/s)"
    return text


def _cells(*cells: str) -> str:
    """One table line; a ``|`` inside a cell (``find | sort``) is escaped, not a column."""
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def table(results: list[Result], header: str) -> str:
    lines = [
        header,
        "",
        "| case | prov (median) | baseline (median) | ratio | prov peak RSS | target | result |",
        "|---|---|---|---|---|---|---|",
    ]
    notes = []
    for result in results:
        row = result.row
        if result.error:
            lines.append(
                _cells(row.title, "-", row.baseline, "-", "-", _target(row), result.verdict)
            )
            continue
        word = "speed" if row.kind == "speed" else "size" if row.unit == "bytes" else "time"
        ratio = f"{result.ratio:.2f}x {word}"
        lines.append(
            _cells(
                row.title,
                _prov(result),
                f"{row.baseline}: {_amount(result.baseline_median, row)}",
                ratio,
                _mib(result.prov_rss),
                _target(row),
                result.verdict,
            )
        )
        detail = [f"n={len(result.prov)} rounds"]
        if result.floor:
            floor = statistics.median(result.floor)
            detail.append(f"floor `{row.floor}`: {_amount(floor, row)} (n={len(result.floor)})")
        if result.baseline_rss:
            detail.append(f"baseline peak RSS {_mib(result.baseline_rss)}")
        if row.note:
            detail.append(row.note)
        detail.extend(result.checks)
        notes.append(f"- **{row.title}**: " + "; ".join(detail))
    return "\n".join([*lines, "", *notes, ""])
