"""`prov check`: published numbers against a snapshot, with a safe and exact evaluator."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import jsonschema
import pytest
from click.testing import Result

from provenance._internal.safe_eval import (
    EvaluationError,
    Evaluator,
    UnsafeExpression,
    compile_expression,
)
from provenance.compare import claims
from provenance.compare.evidence import StoreBlobs, open_evidence
from provenance.errors import ClaimsError
from tests import marin_fixture as marin

ROOT = Path(__file__).resolve().parents[3]
CLAIMS = marin.CLAIMS
RUN = "captures['hero-run']"
MIX = f"captures['launcher'].documents['{marin.MIX_PATH}']"
CODE = "captures['launcher'].constants"
RULE = f"{CODE}['experiments/grug/moe/launch_datakit_moe_mix.py']"
MULTIPLE = (
    f"({RULE}._MIXTURE_BLOCK_SIZE // gcd({RULE}._MIXTURE_BLOCK_SIZE,"
    f" {RUN}.config.trainer.train_batch_size))"
)


@pytest.fixture(scope="module")
def milestones(tmp_path_factory: pytest.TempPathFactory) -> marin.Marin:
    return marin.build(tmp_path_factory.mktemp("marin"))


def write_claims(path: Path, *tables: dict[str, object]) -> Path:
    lines = []
    for table in tables:
        lines.append("[[claims]]")
        for key, value in table.items():
            lines.append(f"{key} = {json.dumps(value)}")
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def evaluate(milestones: marin.Marin, expression: str) -> object:
    evidence = open_evidence("m1", milestones.store)
    return Evaluator(claims.names_for(evidence)).run(compile_expression(expression, claims.NAMES))


def test_published_numbers_against_m1(milestones: marin.Marin, prov: Callable[..., Result]) -> None:
    result = prov("check", "--claims", str(CLAIMS), "m1", "--store", str(milestones.store.root))
    assert result.exit_code == 1, result.output
    blocks = {block.split("\n")[0]: block for block in result.output.split("\n\n")}
    tokens = blocks["FAILS  total training tokens"]
    assert "published 18.75T  (announcement, 2026-08-21)" in tokens
    assert "derived   18,005,144,633,344" in tokens
    assert "gap       -744,855,366,656 (-3.97%); tolerance 0.5%" in tokens
    exact = blocks["holds  total parameters"]
    assert "derived   535,477,106,688" in exact and "gap       0 (exact)" in exact
    summary = blocks["holds  total parameters (job summary)"]
    assert "published 535.3B" in summary and "(+0.033%); tolerance 0.1%" in summary
    steps = blocks["FAILS  training steps"]
    assert "published 390,139" in steps
    assert "derived   390,251" in steps and "gap       +112 (+0.029%)" in steps
    assert "4 claim(s): 2 hold, 2 fail" in result.output


def test_json_report_is_exact_and_valid(
    milestones: marin.Marin, prov: Callable[..., Result]
) -> None:
    result = prov(
        "check",
        "--claims",
        str(CLAIMS),
        "m1",
        "--store",
        str(milestones.store.root),
        "--format",
        "json",
    )
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    schema = json.loads((ROOT / "schemas" / "claims-report.v1.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(report)
    by_name = {r["name"]: r for r in report["results"]}
    tokens = by_name["total training tokens"]
    assert tokens["claimed"] == 18_750_000_000_000
    assert tokens["derived"] == 18_005_144_633_344 == 390_251 * 11_264 * 4_096
    assert tokens["gap"] == -744_855_366_656
    assert tokens["relative_gap"] == pytest.approx(-0.03972561955)
    assert by_name["training steps"]["gap"] == 112
    assert by_name["total parameters (job summary)"]["claimed"] == 535_300_000_000
    assert (report["passed"], report["failed"], report["errors"]) == (2, 2, 0)


def test_markdown_report(milestones: marin.Marin, prov: Callable[..., Result]) -> None:
    result = prov(
        "check",
        "--claims",
        str(CLAIMS),
        "m1",
        "--store",
        str(milestones.store.root),
        "--format",
        "markdown",
    )
    assert (
        "| total training tokens | 18.75T | announcement, 2026-08-21 | 18,005,144,633,344 |"
        in result.output
    )
    assert "**FAILS**" in result.output and "**holds**" in result.output


def test_all_claims_holding_exits_zero(
    milestones: marin.Marin, prov: Callable[..., Result], tmp_path: Path
) -> None:
    path = write_claims(
        tmp_path / "c.toml",
        {
            "name": "tokens at the tracker's step count",
            "claimed": 17_999_977_250_816,
            "derived": f"390139 * {RUN}.config.trainer.train_batch_size"
            f" * {RUN}.config.model.max_seq_len",
        },
        {
            "name": "phase switch",
            "claimed": "312,192",
            "source": "launcher",
            "derived": f"max({MULTIPLE}, int({RUN}.config.trainer.num_train_steps"
            f" * {RULE}._PHASE_1_START_FRACTION) // {MULTIPLE} * {MULTIPLE})",
        },
        {
            "name": "store is denied",
            "claimed": 403,
            "derived": "captures['harrier-store-artifact'].status",
        },
        {
            "name": "captured fine",
            "claimed": "ok",
            "derived": "captures['harrier-store-artifact'].envelope.status",
        },
        {
            "name": "weights sum to one",
            "claimed": 1,
            "derived": f"sum({MIX}.phase0_weights)",
            "abs_tolerance": 1e-9,
        },
        {
            "name": "mix has phases",
            "claimed": True,
            "derived": f"len({MIX}.phase_budgets) == 2 and {RUN}.run.state == 'running'",
        },
    )
    result = prov("check", "--claims", str(path), "m1", "--store", str(milestones.store.root))
    assert result.exit_code == 0, result.output
    assert "6 claim(s): 6 hold, 0 fail" in result.output


def test_integer_arithmetic_is_exact(milestones: marin.Marin) -> None:
    # past 2**53 a float would round; here every digit is kept
    big = evaluate(milestones, f"{RUN}.config.parameter_count * 1000003 * 1000033 + 1")
    assert big == 535_477_106_688 * 1_000_003 * 1_000_033 + 1
    assert isinstance(big, int)
    third = evaluate(milestones, f"{RUN}.config.parameter_count / 3")
    assert third == Fraction(535_477_106_688, 3)
    assert evaluate(milestones, f"{RUN}.config.parameter_count / 3 * 3") == 535_477_106_688
    assert evaluate(milestones, "18750000000000 / (11264 * 4096)") == Fraction(
        18_750_000_000_000, 46_137_344
    )
    assert evaluate(milestones, "max(1, 2.5, 2)") == 2.5
    assert evaluate(milestones, "round(1 / 3, 4)") == Fraction(3333, 10000)
    assert evaluate(milestones, f"{RUN}.summary._step") == 13527  # underscore names are data
    assert evaluate(milestones, "2 ** -2") == Fraction(1, 4)


def test_published_values_are_read_exactly() -> None:
    assert claims.parse_quantity("18.75T") == (18_750_000_000_000, "18.75T")
    assert claims.parse_quantity("535.3B")[0] == 535_300_000_000
    assert claims.parse_quantity("22.76B")[0] == 22_760_000_000
    assert claims.parse_quantity("3.97%")[0] == Fraction(397, 10_000)
    assert claims.parse_quantity(18.75e12)[0] == 18_750_000_000_000
    assert claims.parse_quantity(0.1)[0] == Fraction(1, 10)  # the decimal, not the binary float
    assert claims.parse_quantity("390,139")[0] == 390_139
    assert claims.parse_quantity("AccessDenied")[0] == "AccessDenied"
    assert claims.parse_quantity(True)[0] is True


def test_a_missing_field_is_an_error_with_its_path(
    milestones: marin.Marin, prov: Callable[..., Result], tmp_path: Path
) -> None:
    with pytest.raises(EvaluationError) as caught:
        evaluate(milestones, f"{RUN}.config.trainer.num_train_step * 2")
    message = str(caught.value)
    assert "captures['hero-run'].config.trainer has no field 'num_train_step'" in message
    assert "num_train_steps" in message  # what it does have
    with pytest.raises(EvaluationError, match=r"has no capture of that source \(it has: harrier"):
        evaluate(milestones, "captures['hero'].config")
    with pytest.raises(EvaluationError, match=r"\[5\]: no such item \(the list has 1 item"):
        evaluate(milestones, f"{RUN}.config.data.phase_switch_steps[5]")
    with pytest.raises(EvaluationError, match="'\\+' needs numbers"):
        evaluate(milestones, f"{RUN}.run.id + 1")

    path = write_claims(
        tmp_path / "c.toml",
        {"name": "steps", "claimed": 390251, "derived": f"{RUN}.config.trainer.num_train_step"},
        {"name": "params", "claimed": 535477106688, "derived": f"{RUN}.config.parameter_count"},
    )
    result = prov("check", "--claims", str(path), "m1", "--store", str(milestones.store.root))
    assert result.exit_code == 2
    assert "ERROR  steps" in result.output
    assert "no field 'num_train_step'" in result.output
    assert "holds  params" in result.output
    assert "1 claim(s) could not be evaluated" in result.output


MALICIOUS = [
    ("__import__('os').system('touch PWNED')", "calling \"__import__('os').system\" is not"),
    ("__import__('os')", "calling '__import__' is not allowed"),
    ("captures.__class__.__mro__", "dunder name '__mro__'"),
    ("captures['hero-run'].__dict__", "dunder name '__dict__'"),
    ("captures['__class__']", "dunder name '__class__'"),
    ("().__class__.__bases__[0].__subclasses__()", "not allowed"),
    ("open('/etc/passwd')", "calling 'open' is not allowed"),
    ("eval('1 + 1')", "calling 'eval' is not allowed"),
    ("getattr(captures, 'x')", "calling 'getattr' is not allowed"),
    ("captures['hero-run'].config.keys()", "is not allowed (only min, max, sum, abs, len, round,"),
    ("math.pow(2, 10)", "calling 'math.pow' is not allowed"),
    ("'x'.join(['a'])", "is not allowed"),
    ("2 ** 100000", "the exponent 100000 is too large"),
    ("10 ** 10 ** 9", "the exponent of '**' must be a number written out"),
    ("2 ** captures['hero-run'].config.parameter_count", "must be a number written out"),
    ("'a' * 10 ** 9", "repeating a string or a list"),
    ("[1] * 1000000000", "repeating a string or a list"),
    ("(lambda: 1)()", "calling 'lambda: 1' is not allowed"),
    ("lambda: 1", "a lambda"),
    ("[x for x in captures]", "a comprehension"),
    ("(y := 1)", "assignment"),
    ("f'{captures}'", "an f-string"),
    ("captures[1:2]", "slicing"),
    ("math", "math is only for math.gcd"),
    ("sum([1], start=2)", "positional arguments only"),
    ("os.system", "unknown name 'os'"),
    ("1 << 100000", "the bitwise operator"),
    ("abs(" * 60 + "1" + ")" * 60, "nested more than 40 deep"),
    ("(" * 250 + "1" + ")" * 250, "not a valid expression"),
    ("-" * 3000 + "1", "characters long"),
    ("1; import os", "not a valid expression"),
]


@pytest.mark.parametrize(("expression", "reason"), MALICIOUS)
def test_unsafe_expressions_are_refused(expression: str, reason: str) -> None:
    with pytest.raises(UnsafeExpression) as caught:
        compile_expression(expression, claims.NAMES)
    assert reason in str(caught.value)


def test_a_refused_expression_runs_nothing(
    milestones: marin.Marin,
    prov: Callable[..., Result],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    canary = tmp_path / "PWNED"
    path = write_claims(
        tmp_path / "c.toml",
        {"name": "fine", "claimed": 390251, "derived": f"{RUN}.config.trainer.num_train_steps"},
        {
            "name": "sneaky",
            "claimed": 0,
            "derived": f"__import__('os').system('touch {canary}')",
        },
    )
    result = prov("check", "--claims", str(path), "m1", "--store", str(milestones.store.root))
    assert result.exit_code == 2
    assert f"{path}:9: claim 'sneaky': expression refused: calling" in result.output
    assert "nothing was evaluated" in result.output
    assert "holds" not in result.output  # not even the safe claim ran
    assert not canary.exists()


def test_dynamic_repetition_is_refused_at_evaluation(milestones: marin.Marin) -> None:
    # a string from the data times a number: caught before anything is repeated
    with pytest.raises(EvaluationError, match="'\\*' needs numbers, got a string and a number"):
        evaluate(milestones, f"{RUN}.run.id * 1000000000")
    with pytest.raises(EvaluationError, match="exceed 4096 bits"):
        evaluate(milestones, "(2 ** 1000) * (2 ** 1000) * (2 ** 1000) * (2 ** 1000) * (2 ** 1000)")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[[claims]]\nname = "x"\nclaimed = 1\nderived = "1"\ncolour = "red"\n',
            "c.toml:5: claim 'x': unknown key 'colour'",
        ),
        ('[[claims]]\nname = "x"\nclaimed = 1\n', "c.toml:1: claim 'x': 'derived' is required"),
        (
            '[[claims]]\nname = "x"\nclaimed = 1\nderived = "1"\n\n' * 2,
            "c.toml:7: claim 'x': duplicate claim name",
        ),
        (
            '[[claims]]\nname = "x"\nclaimed = 1\nderived = "1"\ntolerance = -1\n',
            "c.toml:5: claim 'x': tolerance must not be negative",
        ),
        ("[[claims]\n", "not valid TOML"),
        ('title = "x"\n', "unknown top-level key(s): title"),
    ],
)
def test_claims_file_errors_name_the_line(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(body)
    with pytest.raises(ClaimsError) as caught:
        claims.load(path)
    assert message in caught.value.message


def test_tolerances(milestones: marin.Marin) -> None:
    evidence = open_evidence("m1", milestones.store)
    assert isinstance(evidence.blobs, StoreBlobs)
    evaluator = Evaluator(claims.names_for(evidence))

    def status(**table: object) -> str:
        path = Path(milestones.root / "t.toml")
        write_claims(path, {"name": "t", **table})
        (claim,) = claims.load(path).claims
        return claims.check_claim(claim, evaluator).status

    steps = f"{RUN}.config.trainer.num_train_steps"
    assert status(claimed=390139, derived=steps) == "fail"
    assert status(claimed=390139, derived=steps, abs_tolerance=112) == "pass"
    assert status(claimed=390139, derived=steps, abs_tolerance=111) == "fail"
    assert status(claimed=390139, derived=steps, tolerance="0.03%") == "pass"
    assert status(claimed=390139, derived=steps, tolerance="0.02%") == "fail"
    assert status(claimed="hero-12d8b6f0-dee637", derived=f"{RUN}.run.id") == "pass"
    assert status(claimed="390251", derived=f"{RUN}.run.id") == "fail"
    assert status(claimed=1, derived=f"{RUN}.config") == "error"  # a map is not a value


MIX_PY = f"{CODE}['experiments/grug/moe_hero_ep/harrier_mix_2026_08_18.py']"
LADDER = f"{CODE}['experiments/grug/moe_hero_ep/launch_scaling_ladder.py']"
RECIPE = f"{CODE}['experiments/grug/moe_hero_ep/hero_recipe.py']"


def test_claims_read_python_constants_of_a_captured_file(milestones: marin.Marin) -> None:
    assert evaluate(milestones, f"{MIX_PY}.TOTAL_TOKENS") == 18_750_000_000_000
    steps = (
        f"round({LADDER}.TOKENS_PER_ACTIVE_PARAM * {RUN}.config.active_parameter_count"
        f" / ({RECIPE}.HERO_EP_BATCH_SIZE * {LADDER}.LADDER_RACKS['d6144'] * {LADDER}.SEQ_LEN))"
    )
    assert evaluate(milestones, steps) == 390_251
    assert evaluate(milestones, f"'TOTAL_TOKENS' in {MIX_PY}") is True
    assert evaluate(milestones, f"'_MIXTURE_SWITCH_FRACTION' in {MIX_PY}") is False  # not yet
    with pytest.raises(
        EvaluationError, match=r"RESUME_SAVE_INTERVAL \(line 23\) is not a constant: a call to tim"
    ):
        evaluate(milestones, f"{LADDER}.RESUME_SAVE_INTERVAL")
    with pytest.raises(
        EvaluationError, match=r"HERO_EP_BATCH_SIZE \(line 18\) is not a constant: imp"
    ):
        evaluate(milestones, f"{LADDER}.HERO_EP_BATCH_SIZE")
    with pytest.raises(
        EvaluationError, match=r"has no module-level constant 'STEPS' \(it has: LAD"
    ):
        evaluate(milestones, f"{LADDER}.STEPS")


def test_an_evaluation_error_is_that_claims_result(
    milestones: marin.Marin, prov: Callable[..., Result], tmp_path: Path
) -> None:
    path = write_claims(
        tmp_path / "c.toml",
        {"name": "complex", "claimed": 1, "derived": "(-1) ** 0.5"},
        {
            "name": "imaginary gcd",
            "claimed": 1,
            "derived": f"gcd({RUN}.summary['train/cross_entropy_loss'], 2)",
        },
        {"name": "fine", "claimed": 390251, "derived": f"{RUN}.config.trainer.num_train_steps"},
    )
    result = prov(
        "check", "--claims", str(path), "m1", "--store", str(milestones.store.root),
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    by_name = {r["name"]: r for r in report["results"]}
    assert "complex number, not a real one" in by_name["complex"]["error"]
    assert "gcd() needs integers" in by_name["imaginary gcd"]["error"]
    assert by_name["fine"]["status"] == "pass"


LETS = f"""
[let]
run = "{RUN}.config.trainer"
block = "49152"
multiple = "block // gcd(block, run.train_batch_size)"
broken = "run.no_such_field"

[[claims]]
name = "cooldown switch by the launcher's rule"
claimed = 312192
derived = "max(multiple, int(run.num_train_steps * 0.8) // multiple * multiple)"

[[claims]]
name = "uses the broken name"
claimed = 1
derived = "broken + 1"

[[claims]]
name = "text read as a number"
claimed = "18.75T"
derived = "'18.75T' if 'train_batch_size' in run else 0"
"""


def test_let_names_are_shared_and_fail_only_where_used(
    milestones: marin.Marin, prov: Callable[..., Result], tmp_path: Path
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(LETS)
    result = prov("check", "--claims", str(path), "m1", "--store", str(milestones.store.root))
    assert result.exit_code == 2, result.output
    blocks = {block.split("\n")[0]: block for block in result.output.split("\n\n")}
    assert "derived   312,192" in blocks["holds  cooldown switch by the launcher's rule"]
    broken = blocks["ERROR  uses the broken name"]
    assert "broken (from [let]): run has no field 'no_such_field' (it has: id," in broken
    assert "derived   18,750,000,000,000" in blocks["holds  text read as a number"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[let]\ncaptures = "1"\n', "[let] captures: not a usable name"),
        ('[let]\nx = "open(1)"\n', "[let] x: expression refused: calling 'open'"),
        ('[let]\nx = "y + 1"\ny = "1"\n', "[let] x: expression refused: unknown name 'y'"),
        ("[let]\nx = 1\n", "[let] x: the value must be a string"),
    ],
)
def test_let_errors_name_the_line(tmp_path: Path, body: str, message: str) -> None:
    text = body + '\n[[claims]]\nname = "x"\nclaimed = 1\nderived = "1"\n'
    with pytest.raises(ClaimsError) as caught:
        claims.parse(text, tmp_path / "c.toml")
    assert f"c.toml:1: {message}" in str(caught.value)
