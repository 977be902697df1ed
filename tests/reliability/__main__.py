"""``make reliability``: run the reliability suites at full budget and print their figures.

    python -m tests.reliability [pytest options]

Runs pytest over tests/reliability with ``PROV_RELIABILITY=full`` (the big hypothesis profile,
50 crash trials), then prints what was tried and what held, and exits non-zero when pytest
failed or a figure misses its bar (anything wrongly accepted, fewer than 200 mutations per
corpus (DSSE envelopes, Sigstore bundles), fewer than 50 consistent crash trials, fewer than 8
consistent concurrent writers, a fault not survived, a hostile server not bounded, a forgery
(``forgery:<class>``, issue 13) not refused, a planted command run or a credential kept or sent
on, a bundle of the interop corpus against its expected verdict). Categories it does
not know are printed as they come; a count named "wrongly ..." fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.reliability.figures import LEVEL_ENV, REPORT_ENV

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

Counts = dict[str, int]


def _tamper(name: str, c: Counts) -> tuple[str, list[str]]:
    line = (
        f"{c.get('mutations tried', 0):,} mutations tried, {c.get('mutations rejected', 0):,} "
        f"rejected, {c.get('wrongly accepted', 0)} wrongly accepted, "
        f"{c.get('rejected for another reason', 0)} rejected for another reason; "
        f"{c.get('equivalents verified', 0)} of {c.get('equivalents tried', 0)} equivalent "
        "spellings verified"
    )
    problems = []
    if c.get("wrongly accepted", 0):
        problems.append(f"{name}: {c['wrongly accepted']} mutation(s) WRONGLY ACCEPTED")
    if c.get("mutations tried", 0) < 200:
        problems.append(f"{name}: fewer than 200 mutations tried")
    if c.get("mutations rejected", 0) != c.get("mutations tried", 0):
        problems.append(f"{name}: not every mutation was rejected with its message")
    if c.get("equivalents verified", 0) != c.get("equivalents tried", 0):
        problems.append(f"{name}: an equivalent spelling was refused")
    return line, problems


def _properties(name: str, c: Counts) -> tuple[str, list[str]]:
    each = {k: v for k, v in c.items() if k != "examples run"}
    line = f"{c.get('examples run', 0):,} examples run over {len(each)} properties"
    return line, [] if c.get("examples run", 0) else ["no property example ran"]


def _crash(name: str, c: Counts) -> tuple[str, list[str]]:
    phases = ", ".join(f"{v} {k}" for k, v in sorted(c.items()) if k.startswith("killed "))
    line = f"{c.get('trials consistent', 0)} of {c.get('trials', 0)} SIGKILLed snapshots consistent"
    line += f" ({phases})" if phases else ""
    packing = ", ".join(
        f"{v} {k.removeprefix('packing killed: ')}"
        for k, v in sorted(c.items())
        if k.startswith("packing killed: ")
    )
    line += f"; {c.get('packing kills consistent', 0)} batches SIGKILLed while packing consistent"
    line += f" ({packing})" if packing else ""
    problems = []
    if c.get("trials consistent", 0) != c.get("trials", 0):
        problems.append("crash: a killed snapshot left an inconsistent store")
    full = os.environ.get(LEVEL_ENV) == "full"
    if c.get("trials", 0) < 50 and full:
        problems.append("crash: fewer than 50 trials")
    if c.get("packing kills consistent", 0) < 50 and full:
        problems.append("crash: fewer than 50 consistent kills while packing")
    return line, problems


def _concurrency(name: str, c: Counts) -> tuple[str, list[str]]:
    line = (
        f"{c.get('writers consistent', 0)} of {c.get('writers', 0)} concurrent writers "
        f"consistent, with {c.get('fsck runs during the writes', 0)} fsck runs meanwhile; "
        f"{c.get('same-label races with one winner', 0)} same-label race(s) with one winner"
    )
    ok = c.get("writers", 0) >= 8 and c.get("writers consistent", 0) == c.get("writers", 0)
    return line, [] if ok else ["concurrency: not all 8 writers consistent"]


def _faults(name: str, c: Counts) -> tuple[str, list[str]]:
    kinds = ", ".join(
        f"{v} {k.removeprefix('survived: ')}" for k, v in sorted(c.items()) if ": " in k
    )
    line = f"{c.get('survived', 0)} of {c.get('tried', 0)} faults survived ({kinds})"
    ok = c.get("tried", 0) > 0 and c.get("survived", 0) == c.get("tried", 0)
    return line, [] if ok else ["faults: a fault was not survived"]


def _hostile(name: str, c: Counts) -> tuple[str, list[str]]:
    line = (
        f"{c.get('bounded', 0)} of {c.get('cases', 0)} hostile servers ended in time and memory, "
        f"recorded as captures (slowest capture {c.get('slowest capture ms', 0) / 1000:.1f} s "
        f"for a 2 s timeout; largest peak RSS {c.get('largest peak RSS MiB', 0)} MiB)"
    )
    ok = c.get("cases", 0) > 0 and c.get("bounded", 0) == c.get("cases", 0)
    return line, [] if ok else ["hostile: a hostile server was not bounded"]


def _diff(name: str, c: Counts) -> tuple[str, list[str]]:
    line = f"{c.get('documents replayed', 0):,} document patches replayed by python-json-patch"
    return line, [] if c.get("documents replayed", 0) else ["diff: no patch was replayed"]


def _forgery(name: str, c: Counts) -> tuple[str, list[str]]:
    line = (
        f"{c.get('cases tried', 0)} forged cases through the CLI, {c.get('refused', 0)} refused, "
        f"{c.get('wrongly accepted', 0)} wrongly accepted, "
        f"{c.get('refused for another reason', 0)} refused for another reason"
    )
    problems = []
    if c.get("wrongly accepted", 0):
        problems.append(f"{name}: {c['wrongly accepted']} forgery(ies) WRONGLY ACCEPTED")
    if not c.get("cases tried", 0) or c.get("refused", 0) != c.get("cases tried", 0):
        problems.append(f"{name}: not every forgery was refused with its message")
    return line, problems


def _interop(name: str, c: Counts) -> tuple[str, list[str]]:
    line = (
        f"{c.get('bundles', 0)} real bundles from other clients: {c.get('accepted', 0)} accepted, "
        f"{c.get('refused', 0)} refused for their reason ({c.get('reasoned exceptions', 0)} "
        "reasoned exceptions: a client accepts, prov refuses as documented); "
        f"{c.get('tampered refused', 0)} of {c.get('tampered tried', 0)} tampered copies refused; "
        f"prov's keyless bundles: {c.get('prov bundles sigstore-js verified', 0)} verified by "
        "sigstore-js, "
        f"{c.get('prov bundles tampered refused by sigstore-js and sigstore CLI', 0)} altered or "
        "foreign refused by sigstore-js and the sigstore CLI"
    )
    bad = ("wrongly accepted", "wrongly refused", "refused for another reason", "tracebacks")
    problems = [f"{name}: {c[k]} {k}" for k in bad if c.get(k)]
    if not c.get("bundles"):
        problems.append(f"{name}: no bundle was verified")
    return line, problems


def _generic(name: str, c: Counts) -> tuple[str, list[str]]:
    problems = [f"{name}: {k} {v}" for k, v in c.items() if "wrongly" in k and v]
    return ", ".join(f"{k} {v:,}" for k, v in sorted(c.items())), problems


FORMATS: dict[str, Callable[[str, Counts], tuple[str, list[str]]]] = {
    "properties": _properties,
    "crash": _crash,
    "concurrency": _concurrency,
    "faults": _faults,
    "hostile": _hostile,
    "diff": _diff,
    "interop": _interop,
}


def summarise(report: dict[str, Any]) -> tuple[list[str], list[str]]:
    lines, problems = [], []
    for category, counts in report["counts"].items():
        format_ = (
            _tamper
            if category.startswith("tamper:")
            else _forgery
            if category.startswith("forgery:")
            else FORMATS.get(category, _generic)
        )
        line, found = format_(category, counts)
        lines.append(f"  {category:<26} {line}")
        problems += found
    wrongly = sum(
        v for c in report["counts"].values() for k, v in c.items() if k == "wrongly accepted"
    )
    lines.append(f"  {'TOTAL':<26} wrongly accepted: {wrongly}")
    for category, notes in report["notes"].items():
        lines += [f"  note ({category}): {note}" for note in notes]
    return lines, problems


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="prov-reliability-") as folder:
        report_path = Path(folder) / "figures.json"
        env = {**os.environ, LEVEL_ENV: "full", REPORT_ENV: str(report_path)}
        command = [sys.executable, "-m", "pytest", str(HERE), "-p", "no:cacheprovider", *argv]
        code = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
        if not report_path.exists():
            print("reliability: pytest wrote no figures", file=sys.stderr)
            return code or 1
        report = json.loads(report_path.read_text())
    lines, problems = summarise(report)
    print("\nprov reliability figures")
    print("\n".join(lines))
    for problem in problems:
        print(f"FAILED: {problem}")
    if code == 0 and not problems:
        print("all bars met")
    return code or (1 if problems else 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
