"""The tamper corpus (corpus.py): every mutation fails with its message; equivalents verify."""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from pathlib import Path

from tests.reliability import figures
from tests.reliability.corpus import CORPORA, Case
from tests.reliability.evidence import Evidence, run_cli

MINIMUM_MUST_FAIL = 200


def attempt(case: Case, ev: Evidence, work: Path) -> str:
    """Run one case through the real command line; return "" when it behaved, else why not."""
    trial = case.build(ev, work)
    code, _, err, unexpected = run_cli(trial.command, str(trial.file), *trial.args)
    if unexpected is not None:
        return f"crashed: {type(unexpected).__name__}: {unexpected}"
    if "Traceback" in err:
        return "printed a traceback"
    if case.kind == "equivalent":
        return "" if code == 0 else f"refused (exit {code}): {err.strip()}"
    if code == 0:
        return "WRONGLY ACCEPTED"
    if code != case.exit_code or not re.search(case.expect, err):
        return f"exit {code}, not {case.exit_code} with /{case.expect}/: {err.strip()}"
    return ""


def run_corpus(name: str, ev: Evidence) -> tuple[Counter[str], list[str]]:
    tally: Counter[str] = Counter()
    problems: list[str] = []
    seen: set[str] = set()
    for case in CORPORA[name](ev):
        assert case.id not in seen, f"duplicate case id {case.id}"
        seen.add(case.id)
        with tempfile.TemporaryDirectory(prefix="prov-tamper-") as folder:
            problem = attempt(case, ev, Path(folder))
        tally[f"{case.kind} tried"] += 1
        if case.kind == "must-fail":
            if problem == "WRONGLY ACCEPTED":
                tally["wrongly accepted"] += 1
            elif problem:
                tally["rejected for another reason"] += 1
            else:
                tally["rejected"] += 1
        else:
            tally["equivalent verified" if not problem else "equivalent refused"] += 1
        if problem:
            problems.append(f"{case.id}: {problem}")
    return tally, problems


def test_every_mutation_is_rejected_and_every_equivalent_verifies(evidence: Evidence) -> None:
    for name in CORPORA:
        tally, problems = run_corpus(name, evidence)
        category = f"tamper:{name}"
        figures.count(category, "mutations tried", tally["must-fail tried"])
        figures.count(category, "mutations rejected", tally["rejected"])
        figures.count(category, "wrongly accepted", tally["wrongly accepted"])
        figures.count(category, "rejected for another reason", tally["rejected for another reason"])
        figures.count(category, "equivalents tried", tally["equivalent tried"])
        figures.count(category, "equivalents verified", tally["equivalent verified"])
        for problem in problems:
            figures.note(category, problem)
        assert problems == [], "\n".join(problems)
        assert tally["must-fail tried"] >= MINIMUM_MUST_FAIL
