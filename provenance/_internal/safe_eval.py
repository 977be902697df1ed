"""A small expression language for claims, checked against a whitelist of Python ``ast`` nodes.

Claims files come from anyone (a paper, a tracker issue, a stranger's PR), so an expression is
never given to ``eval``. It is parsed with ``ast.parse(mode="eval")`` and every node is checked
before anything is evaluated; the evaluator below then interprets the tree itself. The grammar:

* literals: integers, floats, strings, ``True`` / ``False`` / ``None``, lists and tuples;
* names given by the caller (``captures``, ``snapshot``), paths into them by attribute or
  subscript (``captures['hero-run'].config.trainer.num_train_steps``, ``x.files[0]``); attributes
  are looked up in the data, never on Python objects, and dunder names are refused outright;
* arithmetic on numbers: ``+ - * / // % **`` and unary ``- +``; ``/`` of integers is an exact
  fraction, so integer arithmetic never rounds; the exponent of ``**`` is a number written out;
* comparisons (``== != < <= > >=``, chained), membership (``in``, ``not in``: an item of a
  list, a key of a map, a part of a string), ``and``, ``or``, ``not``, and conditional
  expressions (``a if test else b``, only the chosen side is evaluated);
* calls of ``min``, ``max``, ``sum`` (over a list, or a map's values), ``abs``, ``len``,
  ``round``, ``int`` (truncates; reads ``"2e12"`` too), ``number`` (``"18.75T"`` -> 18750000000000,
  exactly), ``gcd``, ``ceil``, ``floor``, also spelled ``math.gcd``, ``math.ceil``, ``math.floor``.

Limits guard against resource exhaustion: expression length and node count, nesting depth, the
size of every integer produced (so ``10 ** 10 ** 9`` is refused before it is computed), and no
operator ever repeats a string or list. A refused expression raises ``UnsafeExpression`` at
compile time; a missing field raises ``EvaluationError`` naming the path, never a silent zero.
"""

from __future__ import annotations

import ast
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from provenance._internal.quantity import parse_number

MAX_LENGTH = 2000
MAX_NODES = 400
MAX_DEPTH = 40
MAX_BITS = 4096  # no integer (or fraction part) larger than this many bits
MAX_STRING = 1000
MAX_EXPONENT = 1000
FUNCTIONS = ("min", "max", "sum", "abs", "len", "round", "int", "number", "gcd", "ceil", "floor")
MATH = ("gcd", "ceil", "floor")
"""Functions also callable as ``math.NAME`` (the spelling a launcher's code uses)."""

Number = int | float | Fraction

_BINARY: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: _equal(a, b),
    ast.NotEq: lambda a, b: not _equal(a, b),
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}
_ALLOWED: tuple[type[ast.AST], ...] = (
    ast.Expression,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.Attribute,
    ast.Subscript,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.List,
    ast.Tuple,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.And,
    ast.Or,
    *_BINARY,
    *_COMPARE,
    ast.In,
    ast.NotIn,
)


class UnsafeExpression(ValueError):
    """The expression uses something outside the grammar; nothing was evaluated."""


class EvaluationError(ValueError):
    """The expression is allowed but cannot be evaluated on this snapshot."""


class View(ABC):
    """A value that resolves its own fields (a capture, a map of documents)."""

    @abstractmethod
    def lookup(self, key: str | int, where: str) -> Any:
        """The field ``key``; raise EvaluationError naming ``where`` when there is none."""

    def has(self, key: str | int) -> bool:
        """Whether ``key in view`` holds."""
        try:
            self.lookup(key, "")
        except EvaluationError:
            return False
        return True


@dataclass(frozen=True)
class Compiled:
    text: str
    tree: ast.Expression


def compile_expression(text: str, names: tuple[str, ...]) -> Compiled:
    """Parse and check an expression; raises UnsafeExpression with the reason."""
    if not isinstance(text, str) or not text.strip():
        raise UnsafeExpression("the expression is empty")
    if len(text) > MAX_LENGTH:
        raise UnsafeExpression(
            f"the expression is {len(text)} characters long (limit {MAX_LENGTH})"
        )
    try:
        # Line breaks (a long expression in a TOML multi-line string) are spaces.
        tree = ast.parse(text.replace("\r", " ").replace("\n", " ").strip(), mode="eval")
    except SyntaxError as e:
        raise UnsafeExpression(f"not a valid expression: {e.msg}") from e
    except (RecursionError, MemoryError, ValueError) as e:
        raise UnsafeExpression("the expression is nested too deeply") from e
    count = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise UnsafeExpression(f"the expression has more than {MAX_NODES} parts")
        if depth > MAX_DEPTH:
            raise UnsafeExpression(f"the expression is nested more than {MAX_DEPTH} deep")
        _check_node(node, names)
        children = ast.iter_child_nodes(node)
        if isinstance(node, ast.Call) and _math_call(node):
            children = iter(node.args)  # ``math`` is no name of its own: only math.gcd(...)
        stack.extend((child, depth + 1) for child in children)
    return Compiled(text, tree)


def _math_call(node: ast.Call) -> str | None:
    """The function of a ``math.NAME(...)`` call, else None."""
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "math"
        and func.attr in MATH
    ):
        return func.attr
    return None


def _check_node(node: ast.AST, names: tuple[str, ...]) -> None:
    if not isinstance(node, _ALLOWED):
        raise UnsafeExpression(f"{_describe(node)} is not allowed in a claim expression")
    if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
        raise UnsafeExpression(f"access to the dunder name {node.attr!r} is not allowed")
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, (int, float, str, bool)) and node.value is not None:
            raise UnsafeExpression(f"the constant {node.value!r} is not allowed")
        if isinstance(node.value, str) and len(node.value) > MAX_STRING:
            raise UnsafeExpression(f"a string constant is longer than {MAX_STRING} characters")
        if (
            isinstance(node.value, str)
            and node.value.startswith("__")
            and node.value.endswith("__")
        ):
            raise UnsafeExpression(f"the dunder name {node.value!r} is not allowed")
    if isinstance(node, ast.Name):
        if not isinstance(node.ctx, ast.Load):
            raise UnsafeExpression("assignment is not allowed")
        if node.id not in names and node.id not in FUNCTIONS:
            known = ", ".join((*names, *FUNCTIONS))
            hint = " (math is only for math.gcd / math.ceil / math.floor calls)"
            raise UnsafeExpression(
                f"unknown name {node.id!r} (known: {known})" + (hint if node.id == "math" else "")
            )
    if isinstance(node, ast.Call):
        function = _function(node)
        if function is None:
            called = ast.unparse(node.func)
            allowed = ", ".join((*FUNCTIONS, *(f"math.{name}" for name in MATH)))
            raise UnsafeExpression(f"calling {called!r} is not allowed (only {allowed})")
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            raise UnsafeExpression(f"{function}() takes positional arguments only")
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Mult) and (
            _is_sequence_literal(node.left) or _is_sequence_literal(node.right)
        ):
            raise UnsafeExpression("repeating a string or a list with '*' is not allowed")
        if isinstance(node.op, ast.Pow):
            # An exponent is written out, never computed: 10 ** 10 ** 9 is refused unread.
            right = node.right
            if isinstance(right, ast.UnaryOp) and isinstance(right.op, (ast.USub, ast.UAdd)):
                right = right.operand
            exponent = right.value if isinstance(right, ast.Constant) else None
            if not isinstance(exponent, (int, float)) or isinstance(exponent, bool):
                raise UnsafeExpression("the exponent of '**' must be a number written out")
            if abs(exponent) > MAX_EXPONENT:
                raise UnsafeExpression(
                    f"the exponent {exponent!r} is too large (at most {MAX_EXPONENT})"
                )


def _function(node: ast.Call) -> str | None:
    """The allowed function a call names, else None."""
    if isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS:
        return node.func.id
    return _math_call(node)


def _is_sequence_literal(node: ast.AST) -> bool:
    return isinstance(node, (ast.List, ast.Tuple)) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _describe(node: ast.AST) -> str:
    kinds = {
        ast.Lambda: "a lambda",
        ast.ListComp: "a comprehension",
        ast.GeneratorExp: "a generator expression",
        ast.DictComp: "a comprehension",
        ast.SetComp: "a comprehension",
        ast.NamedExpr: "assignment (:=)",
        ast.Starred: "unpacking (*)",
        ast.Slice: "slicing",
        ast.Dict: "a dict literal",
        ast.Set: "a set literal",
        ast.JoinedStr: "an f-string",
        ast.Await: "await",
    }
    for kind, text in kinds.items():
        if isinstance(node, kind):
            return text
    if isinstance(node, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)):
        return f"the bitwise operator {type(node).__name__}"
    if isinstance(node, ast.MatMult):
        return "the operator '@'"
    if isinstance(node, ast.Invert):
        return "the operator '~'"
    if isinstance(node, (ast.Is, ast.IsNot)):
        return f"the comparison {type(node).__name__}"
    return type(node).__name__


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, Fraction)) and not isinstance(value, bool)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _check_size(value: Any, where: str) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_BITS:
        raise EvaluationError(f"{where}: the result has more than {MAX_BITS} bits")
    if isinstance(value, Fraction) and (
        value.numerator.bit_length() > MAX_BITS or value.denominator.bit_length() > MAX_BITS
    ):
        raise EvaluationError(f"{where}: the result has more than {MAX_BITS} bits")
    if isinstance(value, complex):
        raise EvaluationError(f"{where}: the result is a complex number, not a real one")
    if isinstance(value, float) and not math.isfinite(value):
        raise EvaluationError(f"{where}: the result is not a finite number")
    return value


def _normal(value: Number) -> Number:
    """Fractions that are whole numbers become integers again."""
    if isinstance(value, Fraction) and value.denominator == 1:
        return value.numerator
    return value


class Evaluator:
    """Interprets a compiled expression over the given names."""

    def __init__(self, names: Mapping[str, Any]) -> None:
        self.names = names

    def run(self, compiled: Compiled) -> Any:
        """The value of the expression; every failure is an EvaluationError with a reason."""
        try:
            return self._eval(compiled.tree.body)
        except EvaluationError:
            raise
        except RecursionError as e:
            raise EvaluationError("the expression is nested too deeply") from e
        except (ArithmeticError, TypeError, ValueError) as e:
            # A combination of values the checks above did not foresee: this claim's error,
            # never a traceback that hides the other claims' results.
            raise EvaluationError(f"cannot evaluate: {type(e).__name__}: {e}") from e

    def _eval(self, node: ast.AST) -> Any:
        where = ast.unparse(node)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise EvaluationError(f"{node.id!r} is a function: call it, as in {node.id}(...)")
            return self.names[node.id]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self._eval(item) for item in node.elts]
        if isinstance(node, ast.Attribute):
            return self._field(self._eval(node.value), node.attr, ast.unparse(node.value))
        if isinstance(node, ast.Subscript):
            key = self._eval(node.slice)
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise EvaluationError(f"{where}: an index must be a string or an integer")
            return self._field(self._eval(node.value), key, ast.unparse(node.value))
        if isinstance(node, ast.UnaryOp):
            operand = self._eval(node.operand)
            if isinstance(node.op, ast.Not):
                return not operand
            self._numbers(where, operand)
            return operand if isinstance(node.op, ast.UAdd) else -operand
        if isinstance(node, ast.BinOp):
            return self._binary(node, where)
        if isinstance(node, ast.BoolOp):
            result: Any = None
            for value_node in node.values:
                result = self._eval(value_node)
                if isinstance(node.op, ast.And) and not result:
                    return result
                if isinstance(node.op, ast.Or) and result:
                    return result
            return result
        if isinstance(node, ast.IfExp):
            return self._eval(node.body if self._eval(node.test) else node.orelse)
        if isinstance(node, ast.Compare):
            left = self._eval(node.left)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self._eval(right_node)
                if isinstance(op, (ast.In, ast.NotIn)):
                    found = self._contains(right, left, where)
                    if found is isinstance(op, ast.NotIn):
                        return False
                    left = right
                    continue
                if not isinstance(op, (ast.Eq, ast.NotEq)) and not (
                    (self._is_num(left) and self._is_num(right))
                    or (isinstance(left, str) and isinstance(right, str))
                ):
                    raise EvaluationError(f"{where}: cannot order {_kind(left)} and {_kind(right)}")
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Call):
            function = _function(node)
            assert function is not None  # checked at compile time
            args = [self._eval(arg) for arg in node.args]
            return _check_size(self._call(function, args, where), where)
        raise UnsafeExpression(f"{_describe(node)} is not allowed")  # unreachable after compile

    @staticmethod
    def _contains(container: Any, item: Any, where: str) -> bool:
        if isinstance(container, str):
            if not isinstance(item, str):
                raise EvaluationError(f"{where}: 'in' a string needs a string, got {_kind(item)}")
            return item in container
        if isinstance(container, list):
            return any(_equal(item, member) for member in container)
        if isinstance(container, dict):
            return isinstance(item, str) and item in container
        if isinstance(container, View):
            return isinstance(item, (str, int)) and container.has(item)
        raise EvaluationError(
            f"{where}: 'in' needs a list, a map or a string, got {_kind(container)}"
        )

    @staticmethod
    def _is_num(value: Any) -> bool:
        return _is_number(value)

    def _numbers(self, where: str, *values: Any) -> None:
        for value in values:
            if not _is_number(value):
                raise EvaluationError(f"{where}: expected a number, got {_kind(value)}")

    def _binary(self, node: ast.BinOp, where: str) -> Any:
        left, right = self._eval(node.left), self._eval(node.right)
        symbol = _BINARY[type(node.op)]
        if not (_is_number(left) and _is_number(right)):
            raise EvaluationError(
                f"{where}: '{symbol}' needs numbers, got {_kind(left)} and {_kind(right)}"
            )
        exact = not isinstance(left, float) and not isinstance(right, float)
        try:
            if symbol == "+":
                result = left + right
            elif symbol == "-":
                result = left - right
            elif symbol == "*":
                if exact and _bits(left) + _bits(right) > MAX_BITS:
                    raise EvaluationError(f"{where}: the result would exceed {MAX_BITS} bits")
                result = left * right
            elif symbol == "/":
                result = Fraction(left) / Fraction(right) if exact else left / right
            elif symbol == "//":
                result = left // right
            elif symbol == "%":
                result = left % right
            else:
                result = self._power(left, right, where)
        except ZeroDivisionError as e:
            raise EvaluationError(f"{where}: division by zero") from e
        except OverflowError as e:
            raise EvaluationError(f"{where}: the result is too large") from e
        return _check_size(_normal(result), where)

    @staticmethod
    def _power(base: Number, exponent: Number, where: str) -> Number:
        if isinstance(exponent, Fraction) and exponent.denominator != 1:
            exponent = float(exponent)
        if isinstance(exponent, float) or isinstance(base, float):
            if abs(float(exponent)) > MAX_EXPONENT:
                raise EvaluationError(f"{where}: the exponent is too large")
            result: Any = float(base) ** float(exponent)
            if isinstance(result, complex):  # a negative base to a fractional power
                raise EvaluationError(f"{where}: the result is a complex number, not a real one")
            return float(result)
        power = int(exponent)
        if abs(power) > MAX_EXPONENT or _bits(base) * abs(power) > MAX_BITS:
            raise EvaluationError(f"{where}: the result would exceed {MAX_BITS} bits")
        return Fraction(base) ** power

    def _call(self, name: str, args: list[Any], where: str) -> Any:
        if name in ("min", "max", "sum"):
            items = args[0] if len(args) == 1 else args
            if isinstance(items, dict):
                items = list(items.values())
            if not isinstance(items, list) or (name != "sum" and not items):
                raise EvaluationError(f"{where}: {name}() needs a non-empty list of numbers")
            if len(args) > 1 and name == "sum":
                raise EvaluationError(f"{where}: sum() takes one list")
            self._numbers(where, *items)
            if name == "sum":
                exact = all(not isinstance(v, float) for v in items)
                total: Number = sum(items, Fraction(0) if exact else 0.0)
                return _check_size(_normal(total), where)
            return min(items) if name == "min" else max(items)
        if name == "abs":
            self._arity(name, args, 1, where)
            self._numbers(where, args[0])
            return abs(args[0])
        if name == "len":
            self._arity(name, args, 1, where)
            if not isinstance(args[0], (list, dict, str)):
                raise EvaluationError(f"{where}: len() needs a list, a map or a string")
            return len(args[0])
        if name == "round":
            if len(args) not in (1, 2):
                raise EvaluationError(f"{where}: round() takes a number and optional digits")
            self._numbers(where, *args)
            digits = args[1] if len(args) == 2 else None
            if digits is not None and (not isinstance(digits, int) or abs(digits) > 50):
                raise EvaluationError(f"{where}: round() digits must be an integer up to 50")
            return _normal(round(args[0], digits)) if digits is not None else round(args[0])
        if name == "number":
            self._arity(name, args, 1, where)
            return self._number(args[0], where)
        if name == "int":
            self._arity(name, args, 1, where)
            return int(self._number(args[0], where))
        if name in ("ceil", "floor"):
            self._arity(name, args, 1, where)
            self._numbers(where, args[0])
            return math.ceil(args[0]) if name == "ceil" else math.floor(args[0])
        if name == "gcd":
            if not args or not all(isinstance(v, int) and not isinstance(v, bool) for v in args):
                raise EvaluationError(f"{where}: gcd() needs integers")
            return math.gcd(*args)
        raise EvaluationError(f"{where}: unknown function {name}()")

    def _number(self, value: Any, where: str) -> Number:
        """A number as is; a string such as "2e12", "18.75T", "3.97%" or "390,251", exactly."""
        if isinstance(value, str):
            parsed = parse_number(value)
            if parsed is None:
                raise EvaluationError(f"{where}: {value[:40]!r} is not a number")
            return parsed
        self._numbers(where, value)
        return value  # type: ignore[no-any-return]

    @staticmethod
    def _arity(name: str, args: list[Any], count: int, where: str) -> None:
        if len(args) != count:
            raise EvaluationError(f"{where}: {name}() takes {count} argument(s)")

    @staticmethod
    def _field(container: Any, key: str | int, where: str) -> Any:
        if isinstance(container, View):
            return container.lookup(key, where)
        if isinstance(container, dict):
            if isinstance(key, str) and key in container:
                return container[key]
            listed = ", ".join(list(container)[:20]) + (", ..." if len(container) > 20 else "")
            raise EvaluationError(
                f"{where} has no field {key!r}" + (f" (it has: {listed})" if listed else "")
            )
        if isinstance(container, list):
            if isinstance(key, int) and -len(container) <= key < len(container):
                return container[key]
            raise EvaluationError(
                f"{where}[{key!r}]: no such item (the list has {len(container)} item(s))"
            )
        raise EvaluationError(f"{where} is {_kind(container)}, which has no field {key!r}")


def _bits(value: Number) -> int:
    if isinstance(value, Fraction):
        return max(value.numerator.bit_length(), value.denominator.bit_length())
    return int(value).bit_length()


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if _is_number(value):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a map"
    return "a record"
