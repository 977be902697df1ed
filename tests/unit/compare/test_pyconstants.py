"""The Python constants view: values folded from a file's syntax tree, never by running it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from provenance.compare import pyconstants

SCHEDULE = '''"""Token budgets."""
from __future__ import annotations

import math
from datetime import timedelta

PRETRAIN_TOKENS = 15_000_000_000_000
COOLDOWN_TOKENS = 3_750_000_000_000
TOTAL_TOKENS = PRETRAIN_TOKENS + COOLDOWN_TOKENS
MIXTURE_SWITCH_FRACTION = 108_000 / 390_251
LADDER_RACKS: dict[str, int] = {"d768": 1, "d6144": 11}
BATCH = 1024 * LADDER_RACKS["d6144"]
PHASES = (0, 108_000, [312_192, "cooldown"])
MAX_BODY = 4 << 20
SIGN = -(2**63) if BATCH > 0 else 0
STEPS = 390_251
STEPS += 0
RUN_ID = "hero-" + "main"
INTERVAL = timedelta(hours=1)
_SPEC = _load_spec()
SQUARES = [i * i for i in range(10)]
HALF = INTERVAL / 2


def _load_spec():
    return {}
'''


def test_literals_arithmetic_and_references_fold_as_python_computes_them() -> None:
    module = pyconstants.read(SCHEDULE)
    values = module.values
    assert values["TOTAL_TOKENS"] == 18_750_000_000_000 and isinstance(values["TOTAL_TOKENS"], int)
    assert values["MIXTURE_SWITCH_FRACTION"] == 108_000 / 390_251  # a float, as the code has it
    assert values["LADDER_RACKS"] == {"d768": 1, "d6144": 11}
    assert values["BATCH"] == 11_264
    assert values["PHASES"] == [0, 108_000, [312_192, "cooldown"]]
    assert values["MAX_BODY"] == 4 << 20
    assert values["SIGN"] == -(2**63)
    assert values["STEPS"] == 390_251
    assert values["RUN_ID"] == "hero-main"
    assert module.lines["TOTAL_TOKENS"] == 9
    assert module.error is None


def test_calls_imports_and_comprehensions_are_not_constants_with_their_line() -> None:
    skipped = pyconstants.read(SCHEDULE).skipped
    assert skipped["INTERVAL"].reason == "a call to timedelta(...)"
    assert skipped["INTERVAL"].line == 19
    assert skipped["_SPEC"].reason == "a call to _load_spec(...)"
    assert skipped["SQUARES"].reason == "a comprehension"
    assert skipped["HALF"].reason == "uses INTERVAL (line 19), which is not a constant"
    assert skipped["timedelta"].reason == "imported (from datetime)"
    assert skipped["math"].reason == "imported (math)"
    assert skipped["_load_spec"].reason == "a function"
    assert "annotations" not in skipped  # from __future__ binds nothing a reader asks about


def test_a_file_that_is_not_python_says_so() -> None:
    assert pyconstants.read("X = (1,\n").error == "not valid Python: '(' was never closed (line 1)"
    assert pyconstants.read(b"\xff\xfe").error is not None


MARKER = "prov-constants-ran"

HOSTILE = {
    "__import__": ("X = __import__('os').system('touch {marker}')", "a call"),
    "open": ("X = open('{marker}', 'w')", "a call to open(...)"),
    "exec in a default": ('def f(x=exec(\'open("{marker}", "w")\')): pass\nX = f', "uses f"),
    "dunder walk": ("X = ().__class__.__bases__[0].__subclasses__()", "a call"),
    "lambda": ("X = (lambda: open('{marker}', 'w'))()", "a call"),
    "walrus": ("X = (Y := open('{marker}', 'w'))", "an assignment expression"),
    "huge exponent": ("X = 10 ** 10 ** 100", "an exponent over 4096"),
    "tower": ("X = 2 ** 4000\nX = X ** X", "an exponent over 4096"),
    "float overflow": ("X = 1e308 * 10", "a number that is not finite"),
    "complex": ("X = (-1) ** 0.5", "a complex result"),
    "shift": ("X = 1 << 10 ** 9", "an integer over 4096 bits"),
    "string bomb": ("X = 'x' * 10 ** 9", "a string over 100,000 characters"),
    "list bomb": ("A = [0] * 1000\nB = [A] * 1000\nX = [B] * 1000", "uses B (line 2)"),
    "doubling": ("X = 'xx'\n" + "X = X + X\n" * 64, "uses X"),
    "shared dicts": ("X = {}\n" + "X = {'a': X, 'b': X}\n" * 60, "uses X"),
    "deep nesting": ("X = " + "[" * 150 + "1" + "]" * 150, "nested more than 60 deep"),
    "parser limit": ("X = " + "[" * 5000 + "]" * 5000, None),
    "long chain": ("X = " + " + ".join(["1"] * 100_000), None),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_python_runs_nothing_and_stays_bounded(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    source, reason = HOSTILE[case]
    started = time.perf_counter()
    module = pyconstants.read(source.replace("{marker}", MARKER))
    elapsed = time.perf_counter() - started
    assert elapsed < 5, f"{case}: {elapsed:.1f} s"
    assert not (tmp_path / MARKER).exists(), f"{case}: something ran"
    assert "X" not in module.values
    if reason is None:  # refused by the parser itself: nested past Python's own limits
        assert module.error is not None
    else:
        assert reason in module.skipped["X"].reason, module.skipped["X"]
