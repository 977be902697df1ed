"""The claims language: every function and operator a person can write from the docs."""

from __future__ import annotations

import ast
import re
from fractions import Fraction
from pathlib import Path

import pytest

from provenance._internal.safe_eval import (
    EvaluationError,
    Evaluator,
    UnsafeExpression,
    compile_expression,
)

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "diff-and-claims.md"
DATA = {
    "run": {
        "trainer": {"num_train_steps": 390_251, "train_batch_size": 11_264},
        "tags": ["hero", "gb200"],
        "tokens": "18.75T",
        "budget": "2e12",
    },
    "rule": {"_MIXTURE_BLOCK_SIZE": 49_152, "_PHASE_1_START_FRACTION": 0.8},
}


def run(expression: str, names: dict[str, object] | None = None) -> object:
    given = DATA if names is None else names
    return Evaluator(given).run(compile_expression(expression, tuple(given)))


def test_every_example_in_the_docs_gives_the_value_the_docs_print() -> None:
    """docs/diff-and-claims.md lists each function with an example and its value: run them."""
    rows = re.findall(r"^\| `([^`]+)` \| `(.+?)` \| `(.+?)` \|$", DOC.read_text(), re.M)
    functions = {name for name, _, _ in rows}
    assert {
        "in",
        "not in",
        "min",
        "max",
        "sum",
        "len",
        "abs",
        "round",
        "int",
        "number",
    } <= functions
    assert {"gcd", "math.gcd", "ceil", "floor", "//", "%", "if else"} <= functions
    for name, example, shown in rows:
        expected = (
            Fraction(shown[9:-1]) if shown.startswith("Fraction(") else ast.literal_eval(shown)
        )
        assert run(example, {}) == expected, (name, example)


def test_the_launchers_phase_switch_rule_as_an_expression() -> None:
    block = "rule._MIXTURE_BLOCK_SIZE"
    multiple = f"({block} // gcd({block}, run.trainer.train_batch_size))"
    steps = "run.trainer.num_train_steps"
    rule = (
        f"max({multiple}, int({steps} * rule._PHASE_1_START_FRACTION) // {multiple} * {multiple})"
    )
    assert run(rule) == 312_192
    switch = f"math.ceil({steps} * (108_000 / 390_251) / {multiple}) * {multiple}"
    assert run(switch) == 108_000


def test_membership() -> None:
    assert run("'gb200' in run.tags") is True
    assert run("'tpu' not in run.tags") is True
    assert run("'trainer' in run") is True
    assert run("'18' in run.tokens") is True
    with pytest.raises(EvaluationError, match="'in' needs a list, a map or a string"):
        run("1 in run.trainer.num_train_steps")


def test_numbers_written_as_text_are_read_exactly() -> None:
    assert run("number(run.tokens)") == 18_750_000_000_000
    assert run("number(run.budget) * 2") == 4_000_000_000_000
    assert run("int('390,251') + 1") == 390_252
    assert run("number('3.97%')") == Fraction(397, 10_000)
    with pytest.raises(EvaluationError, match="'hero' is not a number"):
        run("number('hero')")


def test_a_conditional_evaluates_only_the_side_it_takes() -> None:
    assert run("run.missing if 'missing' in run else run.trainer.num_train_steps") == 390_251
    with pytest.raises(EvaluationError, match="has no field 'missing'"):
        run("run.missing if 'trainer' in run else 0")


def test_a_complex_result_is_an_error_not_a_crash() -> None:
    with pytest.raises(EvaluationError, match="complex number"):
        run("(-1) ** 0.5")
    with pytest.raises(EvaluationError, match="gcd\\(\\) needs integers"):
        run("gcd(2.5, 5)")


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("math.sqrt(2)", "calling 'math.sqrt' is not allowed"),
        ("math", "math is only for math.gcd"),
        ("math.gcd.__call__(2, 4)", "is not allowed"),
        ("int.__class__", "dunder"),
        ("gcd(a=1, b=2)", "positional arguments only"),
    ],
)
def test_what_stays_refused(expression: str, reason: str) -> None:
    with pytest.raises(UnsafeExpression, match=re.escape(reason)):
        compile_expression(expression, tuple(DATA))
