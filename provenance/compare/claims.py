"""Claims: published numbers checked against a snapshot (docs/diff-and-claims.md).

A claims file lists what someone published and how to derive it from the evidence::

    [[claims]]
    name = "total training tokens"
    claimed = "18.75T"                 # a number, or text with K / M / B / G / T / P or %
    source = "announcement, 2026-08-21"
    derived = '''captures['hero-run'].config.trainer.train_batch_size * 4096
                 * captures['hero-run'].config.trainer.num_train_steps'''
    tolerance = 0.005                  # relative (0.005 = 0.5%), or a string such as "0.1%"
    # abs_tolerance = 100              # absolute, in the claim's unit

Expressions are evaluated by ``_internal.safe_eval`` (never ``eval``) over two names:

* ``captures[NAME]``: a capture by source name. ``captures[NAME].X`` reads ``X`` from the
  capture's data (``.config.trainer.num_train_steps`` for W&B, ``.status`` for an HTTP status);
  when the data has no ``X``, the capture's own fields answer (``.kind``, ``.started``,
  ``.establishes``...). ``.data`` and ``.envelope`` name either side explicitly, so
  ``captures['store'].envelope.status`` is ``"ok"`` while ``captures['store'].status`` is ``403``.
  ``.documents['path/in/repo.json']`` parses a stored file (JSON, YAML or TOML; other files as
  text) when its blob is in the store or pack; ``.constants['path/to/module.py'].NAME`` is a
  module-level constant of a stored Python file, read from its syntax tree (``compare.pyconstants``:
  nothing is run).
* ``snapshot``: ``label``, ``created`` and ``sha256`` of the snapshot.

A ``[let]`` table names sub-expressions that claims (and later names) use, so a rule such as the
launcher's phase switch reads as it is written in the code::

    [let]
    run = "captures['hero-run'].config.trainer"
    rule = "captures['launcher'].constants['experiments/grug/moe/launch_datakit_moe_mix.py']"
    multiple = "rule._MIXTURE_BLOCK_SIZE // gcd(rule._MIXTURE_BLOCK_SIZE, run.train_batch_size)"

Every expression in a file is compiled and checked before any is evaluated, so one refused
expression means nothing runs. Numbers stay exact: the published value is read as a decimal
(``"535.3B"`` is exactly 535,300,000,000), integer arithmetic is exact and the gap is computed on
exact fractions. A claim passes when ``|derived - claimed| <= max(abs_tolerance,
tolerance x |claimed|)``; text and booleans must be equal.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import Field, JsonValue

from provenance._internal.quantity import parse_number
from provenance._internal.safe_eval import (
    FUNCTIONS,
    Compiled,
    EvaluationError,
    Evaluator,
    UnsafeExpression,
    View,
    compile_expression,
)
from provenance.compare.diff import ClaimChange, Diff, NoteRef, SnapshotRef
from provenance.compare.evidence import Evidence
from provenance.compare.views import NAMES, CaptureView, LetNames, ModuleView, names_for
from provenance.errors import ClaimsError, InputError
from provenance.model import WireModel

__all__ = [
    "NAMES",
    "SCHEMA",
    "Claim",
    "ClaimResult",
    "ClaimsFile",
    "ClaimsReport",
    "affected",
    "check",
    "check_claim",
    "load",
    "names_for",
    "parse",
    "parse_quantity",
]

SCHEMA: Final = "https://prov.dev/claims-report/v1"
_KEYS = {"name", "claimed", "derived", "source", "tolerance", "abs_tolerance"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

Claimed = int | Fraction | float | str | bool


# -- reading a claims file ----------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    name: str
    claimed: Claimed
    claimed_text: str
    expression: Compiled
    source: str | None
    tolerance: Fraction
    abs_tolerance: Fraction
    line: int


@dataclass(frozen=True)
class ClaimsFile:
    path: Path
    claims: tuple[Claim, ...]
    lets: tuple[tuple[str, Compiled], ...] = ()


def parse_quantity(value: Any) -> tuple[Claimed, str]:
    """A published value, exactly: ``"18.75T"`` -> 18750000000000, ``"3.97%"`` -> 397/10000."""
    if isinstance(value, bool):
        return value, "true" if value else "false"
    if isinstance(value, int):
        return value, f"{value:,}"
    if isinstance(value, float):
        exact = Fraction(Decimal(repr(value)))
        return _whole(exact), repr(value)
    if not isinstance(value, str):
        raise ValueError("must be a number, a string or a boolean")
    number = parse_number(value)
    return (value, value) if number is None else (number, value)


def _whole(value: Fraction) -> int | Fraction:
    return value.numerator if value.denominator == 1 else value


def _tolerance(value: Any, key: str) -> Fraction:
    if value is None:
        return Fraction(0)
    if isinstance(value, bool):
        raise ValueError(f"{key} must be a number")
    parsed, _ = parse_quantity(value)
    if isinstance(parsed, (str, bool, float)):
        raise ValueError(f"{key} must be a number or a percentage such as '0.1%'")
    if parsed < 0:
        raise ValueError(f"{key} must not be negative")
    return Fraction(parsed)


def _claim_lines(text: str) -> list[tuple[int, dict[str, int]]]:
    """Where each ``[[claims]]`` table and its keys were written (tomllib keeps no positions)."""
    tables: list[tuple[int, dict[str, int]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if re.match(r"^\[\[\s*claims\s*\]\]", stripped):
            tables.append((number, {}))
        elif tables and (key := re.match(r'^"?([A-Za-z0-9_-]+)"?\s*=', stripped)):
            tables[-1][1].setdefault(key.group(1), number)
    return tables


@dataclass(frozen=True)
class _Failer:
    """Makes errors that name the file, the line and the claim."""

    path: Path
    index: int
    table: dict[str, Any]
    header: int
    key_lines: dict[str, int]

    def __call__(
        self, message: str, key: str | None = None, hint: str | None = None
    ) -> ClaimsError:
        line = self.key_lines.get(key, self.header) if key else self.header
        name = self.table.get("name")
        shown = name if isinstance(name, str) else f"#{self.index + 1}"
        return ClaimsError(f"{self.path}:{line}: claim {shown!r}: {message}", hint=hint)


def load(path: Path) -> ClaimsFile:
    """Read and check a claims file; every expression is compiled (none is evaluated)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise InputError(
            f"no claims file at {path}: file not found", hint="pass --claims PATH"
        ) from e
    except OSError as e:
        raise InputError(f"cannot read the claims file {path}", cause=str(e)) from e
    except UnicodeDecodeError as e:
        raise ClaimsError(f"{path}: not UTF-8 text", cause=str(e)) from e
    return parse(text, path)


def parse(text: str, path: Path) -> ClaimsFile:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ClaimsError(f"{path}: not valid TOML: {e}", hint="fix the syntax at that line") from e
    unknown = set(raw) - {"claims", "let"}
    if unknown:
        raise ClaimsError(
            f"{path}: unknown top-level key(s): {', '.join(sorted(unknown))}",
            hint="a claims file holds a [let] table and [[claims]] tables only",
        )
    tables = raw.get("claims", [])
    if not isinstance(tables, list) or not tables:
        raise ClaimsError(f"{path}: no [[claims]] tables", hint="see `prov check --help`")
    lets = _lets(raw.get("let", {}), text, path)
    names = (*NAMES, *(name for name, _ in lets))
    lines = _claim_lines(text)
    claims: list[Claim] = []
    seen: set[str] = set()
    for index, table in enumerate(tables):
        header, key_lines = lines[index] if index < len(lines) else (1, {})
        claim = _claim(_Failer(path, index, table, header, key_lines), names, seen)
        seen.add(claim.name)
        claims.append(claim)
    return ClaimsFile(path, tuple(claims), lets)


_REFUSED_HINT = (
    "expressions may use paths, arithmetic, comparisons, in, conditional expressions and "
    f"{' / '.join(FUNCTIONS)}; nothing was evaluated (docs/diff-and-claims.md)"
)


def _lets(table: Any, text: str, path: Path) -> tuple[tuple[str, Compiled], ...]:
    """The ``[let]`` names in order; each may use the names before it."""
    if not isinstance(table, dict):
        raise ClaimsError(f"{path}: 'let' must be a table of name = \"expression\"")
    line = next(
        (n for n, t in enumerate(text.splitlines(), 1) if re.match(r"^\s*\[\s*let\s*\]", t)), 1
    )
    out: list[tuple[str, Compiled]] = []
    for name, expression in table.items():
        where = f"{path}:{line}: [let] {name}"
        reserved = (*NAMES, *FUNCTIONS, "math", *(n for n, _ in out))
        if not _NAME.match(name) or name in reserved:
            raise ClaimsError(
                f"{where}: not a usable name",
                hint=f"use a plain identifier other than {', '.join(reserved)}",
            )
        if not isinstance(expression, str):
            raise ClaimsError(f"{where}: the value must be a string holding an expression")
        try:
            out.append((name, compile_expression(expression, (*NAMES, *(n for n, _ in out)))))
        except UnsafeExpression as e:
            raise ClaimsError(f"{where}: expression refused: {e}", hint=_REFUSED_HINT) from e
    return tuple(out)


def _claim(fail: _Failer, names: tuple[str, ...], seen: set[str]) -> Claim:
    """One ``[[claims]]`` table, checked and compiled."""
    table, header = fail.table, fail.header
    extra = set(table) - _KEYS
    if extra:
        key = sorted(extra)[0]
        raise fail(f"unknown key {key!r}", key, hint=f"a claim takes: {', '.join(sorted(_KEYS))}")
    for key in ("name", "claimed", "derived"):
        if key not in table:
            raise fail(f"{key!r} is required")
    name = table["name"]
    if not isinstance(name, str) or not name.strip():
        raise fail("'name' must be a non-empty string", "name")
    if name in seen:
        raise fail("duplicate claim name", "name", hint="give every claim a unique name")
    if not isinstance(table["derived"], str):
        raise fail("'derived' must be a string holding an expression", "derived")
    source = table.get("source")
    if source is not None and not isinstance(source, str):
        raise fail("'source' must be a string", "source")
    try:
        claimed, claimed_text = parse_quantity(table["claimed"])
    except ValueError as e:
        raise fail(f"'claimed' {e}", "claimed") from e
    try:
        tolerance = _tolerance(table.get("tolerance"), "tolerance")
        abs_tolerance = _tolerance(table.get("abs_tolerance"), "abs_tolerance")
    except ValueError as e:
        key = "tolerance" if "tolerance" in str(e) and "abs_" not in str(e) else "abs_tolerance"
        raise fail(str(e), key) from e
    try:
        compiled = compile_expression(table["derived"], names)
    except UnsafeExpression as e:
        raise fail(f"expression refused: {e}", "derived", hint=_REFUSED_HINT) from e
    return Claim(
        name=name,
        claimed=claimed,
        claimed_text=claimed_text,
        expression=compiled,
        source=source,
        tolerance=tolerance,
        abs_tolerance=abs_tolerance,
        line=header,
    )


# -- checking -------------------------------------------------------------------------------------


class ClaimResult(WireModel):
    name: str
    source: str | None = None
    expression: str
    claimed: JsonValue = Field(description="the published value, exact when it is a whole number")
    claimed_text: str = Field(description="the published value as written")
    derived: JsonValue = None
    gap: int | float | None = Field(default=None, description="derived - claimed")
    relative_gap: float | None = Field(default=None, description="(derived - claimed) / claimed")
    tolerance: float = Field(description="relative tolerance (0.001 = 0.1%)")
    abs_tolerance: int | float = 0
    status: Literal["pass", "fail", "error"]
    error: str | None = None
    superseded_by: list[str] = Field(
        default_factory=list, description="notes that say this claim no longer holds"
    )


class ClaimsReport(WireModel):
    schema_: Literal["https://prov.dev/claims-report/v1"] = Field(default=SCHEMA, alias="schema")
    snapshot: SnapshotRef
    claims_file: str
    passed: int
    failed: int
    errors: int
    results: tuple[ClaimResult, ...]

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


def _json(value: Any) -> Any:
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else float(value)
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, View):
        return f"<{type(value).__name__.removesuffix('View').lower()}>"
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, Fraction)) and not isinstance(value, bool)


def check_claim(claim: Claim, evaluator: Evaluator, notes: Sequence[NoteRef] = ()) -> ClaimResult:
    superseded = [
        f"note {note.id[:12]} on {note.snapshot} ({note.created[:10]}): {note.text}"
        for note in notes
        if claim.name in note.supersedes
    ]
    base: dict[str, Any] = {
        "name": claim.name,
        "source": claim.source,
        "expression": claim.expression.text,
        "claimed": _json(claim.claimed),
        "claimed_text": claim.claimed_text,
        "tolerance": float(claim.tolerance),
        "abs_tolerance": _json(claim.abs_tolerance),
        "superseded_by": superseded,
    }
    try:
        derived = evaluator.run(claim.expression)
    except EvaluationError as e:
        return ClaimResult(**base, status="error", error=str(e))
    if isinstance(derived, str) and _is_number(claim.claimed):
        # A number the source spells as text ("2e12", "18.75T") compares as that number.
        derived = parse_number(derived) if parse_number(derived) is not None else derived
    if isinstance(derived, (View, dict, list)) or derived is None:
        return ClaimResult(
            **base,
            derived=_json(derived) if not isinstance(derived, View) else None,
            status="error",
            error=f"the expression gives {_describe(derived)}, not a value to compare",
        )
    if _is_number(claim.claimed) and _is_number(derived):
        claimed = Fraction(claim.claimed)
        gap = Fraction(derived) - claimed
        allowed = max(claim.abs_tolerance, claim.tolerance * abs(claimed))
        return ClaimResult(
            **base,
            derived=_json(derived),
            gap=_json(gap),
            relative_gap=float(gap / claimed) if claimed else None,
            status="pass" if abs(gap) <= allowed else "fail",
        )
    same = type(derived) is type(claim.claimed) and derived == claim.claimed
    return ClaimResult(**base, derived=_json(derived), status="pass" if same else "fail")


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return f"a map of {len(value)} field(s)"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, CaptureView):
        return "a capture"
    if isinstance(value, ModuleView):
        return "a module's constants (name one: .NAME)"
    return "a set of files (name one: ['path'])"


def check(claims: ClaimsFile, evidence: Evidence, notes: Sequence[NoteRef] = ()) -> ClaimsReport:
    """Evaluate every claim against one snapshot."""
    evaluator = Evaluator(LetNames(names_for(evidence), claims.lets))
    results = tuple(check_claim(claim, evaluator, notes) for claim in claims.claims)
    snapshot = evidence.snapshot
    return ClaimsReport(
        snapshot=SnapshotRef(
            label=snapshot.label,
            sha256=snapshot.sha256().hex,
            created=snapshot.created,
            origin=evidence.origin,
        ),
        claims_file=str(claims.path),
        passed=sum(1 for r in results if r.status == "pass"),
        failed=sum(1 for r in results if r.status == "fail"),
        errors=sum(1 for r in results if r.status == "error"),
        results=results,
    )


def affected(claims: ClaimsFile, a: Evidence, b: Evidence, diff: Diff) -> Diff:
    """The diff with the claims whose verdict or derived value differs between its two sides
    (``prov diff --claims``): what the changes mean for what was published."""
    before, after = check(claims, a).results, check(claims, b).results
    changed = tuple(
        ClaimChange(
            name=old.name,
            status_a=old.status,
            status_b=new.status,
            derived_a=old.derived,
            derived_b=new.derived,
        )
        for old, new in zip(before, after, strict=True)
        if (old.status, old.derived) != (new.status, new.derived)
    )
    return diff.model_copy(update={"claims_file": str(claims.path), "claims": changed})
