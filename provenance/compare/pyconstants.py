"""Module-level constants of a Python file, read from its syntax tree, never by running it.

A launcher is Python: its budgets, fractions and run ids are module-level assignments such as
``TOTAL_TOKENS = PRETRAIN_TOKENS + COOLDOWN_TOKENS`` or ``MIXTURE_SWITCH_FRACTION = 108_000 /
390_251``. This module folds those into values with Python's own arithmetic (``/`` of two
integers is a float, as the launcher computes it) and reports every other binding (a call, an
import, a comprehension, a name from elsewhere) as *not a constant*, with its line and why.

The file is parsed with ``ast.parse``; nothing is compiled or executed, no name is looked up
outside the module, and the work is bounded on hostile input: the source size, the nesting depth,
the node count, the bits of every integer (so ``10 ** 10 ** 9`` is refused before it is computed),
the length of strings and the number of items a value may hold.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

MAX_SOURCE: Final = 1 << 20  # bytes of source read
MAX_DEPTH: Final = 60  # nesting of one expression
MAX_NODES: Final = 200_000  # syntax nodes folded per module
MAX_BITS: Final = 4096  # of any integer produced
MAX_STRING: Final = 100_000  # characters of any string produced
MAX_ITEMS: Final = 100_000  # scalars one value may hold (nested lists and dicts counted through)

Value = int | float | str | bool | None | list[Any] | dict[str, Any]


@dataclass(frozen=True)
class NotConstant:
    """A module-level name whose value this view does not compute."""

    name: str
    line: int
    reason: str


@dataclass(frozen=True)
class ModuleConstants:
    """What a Python file binds at module level: values, their lines, and what was skipped."""

    values: dict[str, Value] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, NotConstant] = field(default_factory=dict)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "values": self.values,
            "lines": self.lines,
            "not_constants": {
                name: {"line": item.line, "reason": item.reason}
                for name, item in self.skipped.items()
            },
            "error": self.error,
        }


class _Skip(Exception):
    """Why an expression is not a constant (internal: becomes a NotConstant)."""


def read(source: bytes | str) -> ModuleConstants:
    """The module-level constants of ``source``; a file that does not parse gives ``error``."""
    if isinstance(source, bytes):
        if len(source) > MAX_SOURCE:
            return ModuleConstants(error=f"{len(source):,} bytes is over the {MAX_SOURCE:,} limit")
        try:
            source = source.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            return ModuleConstants(error=f"not UTF-8: {e}")
    if len(source) > MAX_SOURCE:
        return ModuleConstants(error=f"{len(source):,} characters is over the {MAX_SOURCE:,} limit")
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return ModuleConstants(error=f"not valid Python: {e.msg} (line {e.lineno})")
    except (RecursionError, MemoryError):
        return ModuleConstants(error="nested too deeply to read")
    except ValueError as e:  # a NUL byte
        return ModuleConstants(error=f"not valid Python: {e}")
    folder = _Folder()
    for statement in tree.body:
        folder.statement(statement)
    return ModuleConstants(folder.values, folder.lines, folder.skipped)


class _Folder:
    def __init__(self) -> None:
        self.values: dict[str, Value] = {}
        self.lines: dict[str, int] = {}
        self.skipped: dict[str, NotConstant] = {}
        self.nodes = 0
        # Sizes of the lists and dicts made so far, by identity (each kept alive here, so an id
        # is never reused): a value built from shared parts is counted in one step, not 2**n.
        self.sizes: dict[int, tuple[Value, int]] = {}

    def size(self, value: Value) -> int:
        if not isinstance(value, (list, dict)):
            return 1
        known = self.sizes.get(id(value))
        if known is not None:
            return known[1]
        items = value.values() if isinstance(value, dict) else value
        total = sum(self.size(item) for item in items) or 1
        self.sizes[id(value)] = (value, total)
        return total

    def check(self, value: Value) -> Value:
        if self.size(value) > MAX_ITEMS:
            raise _Skip(f"a value holding over {MAX_ITEMS:,} items")
        return value

    def bind(self, name: str, line: int, value: Value) -> None:
        self.skipped.pop(name, None)
        self.values[name] = value
        self.lines[name] = line

    def skip(self, name: str, line: int, reason: str) -> None:
        self.values.pop(name, None)
        self.lines[name] = line
        self.skipped[name] = NotConstant(name, line, reason)

    def statement(self, node: ast.stmt) -> None:
        line = node.lineno
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            origin = node.module if isinstance(node, ast.ImportFrom) else None
            if origin == "__future__":
                return
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                if name != "*":
                    where = f"from {origin}" if origin else alias.name
                    self.skip(name, line, f"imported ({where})")
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "a class" if isinstance(node, ast.ClassDef) else "a function"
            self.skip(node.name, line, kind)
            return
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self.assign(target, node.value, line)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, node.value, line)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            left = ast.Name(id=node.target.id, ctx=ast.Load())
            self.assign(node.target, ast.BinOp(left=left, op=node.op, right=node.value), line)
        else:
            for name in _bound_names(node):
                self.skip(name, line, f"bound by {_statement_kind(node)}")

    def assign(self, target: ast.expr, value: ast.expr, line: int) -> None:
        if isinstance(target, ast.Name):
            try:
                self.bind(target.id, line, self.fold(value, 0))
            except _Skip as e:
                self.skip(target.id, line, str(e))
            return
        if (
            isinstance(target, (ast.Tuple, ast.List))
            and isinstance(value, (ast.Tuple, ast.List))
            and len(target.elts) == len(value.elts)
        ):
            for inner_target, inner_value in zip(target.elts, value.elts, strict=True):
                self.assign(inner_target, inner_value, line)
            return
        for name in _target_names(target):
            self.skip(name, line, "an unpacking this view does not follow")

    def fold(self, node: ast.expr, depth: int) -> Value:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Skip(f"the module has more than {MAX_NODES:,} expression parts")
        if depth > MAX_DEPTH:
            raise _Skip(f"nested more than {MAX_DEPTH} deep")
        if isinstance(node, ast.Constant):
            return _literal(node.value)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, (ast.Tuple, ast.List)):
            return self.check([self.fold(item, depth + 1) for item in node.elts])
        if isinstance(node, ast.Dict):
            return self.dict(node, depth)
        if isinstance(node, ast.UnaryOp):
            return _unary(node.op, self.fold(node.operand, depth + 1))
        if isinstance(node, ast.BinOp):
            left = self.fold(node.left, depth + 1)
            right = self.fold(node.right, depth + 1)
            if isinstance(left, (str, list)) or isinstance(right, (str, list)):
                return self.check(self.sequence(node.op, left, right))
            return _binary(node.op, left, right)
        if isinstance(node, ast.Compare):
            left = self.fold(node.left, depth + 1)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self.fold(right_node, depth + 1)
                if not _compare(op, left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.BoolOp):
            result: Value = None
            for value_node in node.values:
                result = self.fold(value_node, depth + 1)
                if bool(result) is isinstance(node.op, ast.Or):
                    return result
            return result
        if isinstance(node, ast.IfExp):
            test = self.fold(node.test, depth + 1)
            return self.fold(node.body if test else node.orelse, depth + 1)
        if isinstance(node, ast.Subscript):
            return _index(self.fold(node.value, depth + 1), self.fold(node.slice, depth + 1))
        raise _Skip(_describe(node))

    def name(self, name: str) -> Value:
        if name in self.values:
            return self.values[name]
        if name in self.skipped:
            other = self.skipped[name]
            raise _Skip(f"uses {name} (line {other.line}), which is not a constant")
        raise _Skip(f"uses {name}, which this module does not define before it")

    def dict(self, node: ast.Dict, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                raise _Skip("a dict unpacking (**)")
            key = self.fold(key_node, depth + 1)
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise _Skip("a dict key that is not a string or an integer")
            out[str(key)] = self.fold(value_node, depth + 1)
        self.check(out)
        return out

    def sequence(self, op: ast.operator, left: Value, right: Value) -> Value:
        """``+`` of two strings or two lists, ``*`` of one by a small integer; bounded."""
        if isinstance(op, ast.Add) and type(left) is type(right) and isinstance(left, (str, list)):
            assert isinstance(right, (str, list))
            size = len(left) + len(right)
            if isinstance(left, str) and size > MAX_STRING:
                raise _Skip(f"a string over {MAX_STRING:,} characters")
            return left + right  # type: ignore[operator]
        if isinstance(op, ast.Mult):
            sequence, count = (left, right) if isinstance(left, (str, list)) else (right, left)
            if isinstance(count, int) and not isinstance(count, bool):
                if isinstance(sequence, str):
                    if len(sequence) * max(count, 0) > MAX_STRING:
                        raise _Skip(f"a string over {MAX_STRING:,} characters")
                    return sequence * count
                if isinstance(sequence, list):
                    if self.size(sequence) * max(count, 0) > MAX_ITEMS:
                        raise _Skip(f"a value holding over {MAX_ITEMS:,} items")
                    return sequence * count
        if isinstance(op, ast.Mod) and isinstance(left, str):
            raise _Skip("%-formatting")
        raise _Skip(f"{_symbol(op)} on {_kind(left)} and {_kind(right)}")


def _literal(value: Any) -> Value:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if value.bit_length() > MAX_BITS:
            raise _Skip(f"an integer over {MAX_BITS} bits")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Skip("a number that is not finite")
        return value
    if isinstance(value, complex):
        raise _Skip("a complex number")
    if isinstance(value, bytes):
        raise _Skip("a bytes literal")
    raise _Skip(f"the literal {type(value).__name__}")


def _number(value: Value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _unary(op: ast.unaryop, value: Value) -> Value:
    if isinstance(op, ast.Not):
        return not value
    if not _number(value) and not isinstance(value, bool):
        raise _Skip(f"the operator {type(op).__name__} on {_kind(value)}")
    assert isinstance(value, (int, float))
    if isinstance(op, ast.USub):
        return -value
    if isinstance(op, ast.UAdd):
        return +value
    if isinstance(value, float):
        raise _Skip("'~' on a float")
    return ~value


def _binary(op: ast.operator, left: Value, right: Value) -> Value:
    if not (_number(left) or isinstance(left, bool)) or not (
        _number(right) or isinstance(right, bool)
    ):
        raise _Skip(f"{_symbol(op)} on {_kind(left)} and {_kind(right)}")
    assert isinstance(left, (int, float)) and isinstance(right, (int, float))
    _guard(op, left, right)
    try:
        result = _ARITHMETIC[type(op)](left, right)
    except ZeroDivisionError as e:
        raise _Skip("a division by zero") from e
    except OverflowError as e:
        raise _Skip("a number too large for a float") from e
    except KeyError as e:
        raise _Skip(f"the operator {_symbol(op)}") from e
    if isinstance(result, complex):
        raise _Skip("a complex result")
    return _literal(result)


def _guard(op: ast.operator, left: int | float, right: int | float) -> None:
    """Refuse, before computing, what would grow past the bounds."""
    exact = isinstance(left, int) and isinstance(right, int)
    if isinstance(op, ast.Pow):
        if abs(right) > MAX_BITS and abs(left) not in (0, 1):
            raise _Skip(f"an exponent over {MAX_BITS}")
        # (bits - 1) x exponent is a lower bound of the result's size: refuse before computing
        # what must exceed the limit; the result is checked again after.
        if exact and right > 0 and (int(left).bit_length() - 1) * int(right) > MAX_BITS:
            raise _Skip(f"an integer over {MAX_BITS} bits")
    grows = (isinstance(op, ast.Mult) and exact and _bits(left) + _bits(right) > MAX_BITS + 1) or (
        isinstance(op, ast.LShift) and exact and (right < 0 or _bits(left) + int(right) > MAX_BITS)
    )
    if grows:
        raise _Skip(f"an integer over {MAX_BITS} bits")


def _bits(value: int | float) -> int:
    return int(value).bit_length()


def _compare(op: ast.cmpop, left: Value, right: Value) -> bool:
    if isinstance(op, (ast.Eq, ast.NotEq)):
        return (left == right) is isinstance(op, ast.Eq)
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (list, dict, str)):
        if isinstance(right, str) and not isinstance(left, str):
            raise _Skip("'in' a string of something else")
        return (left in right) is isinstance(op, ast.In)
    ordered = (_number(left) and _number(right)) or (
        isinstance(left, str) and isinstance(right, str)
    )
    if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) and ordered:
        return bool(_ORDER[type(op)](left, right))
    raise _Skip(f"the comparison {type(op).__name__} of {_kind(left)} and {_kind(right)}")


_ORDER: dict[type[ast.cmpop], Any] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


def _index(container: Value, key: Value) -> Value:
    if isinstance(container, dict) and isinstance(key, (str, int)) and not isinstance(key, bool):
        if str(key) in container:
            return container[str(key)]  # type: ignore[no-any-return]
        raise _Skip(f"a key {key!r} the dict does not hold")
    if isinstance(container, (list, str)) and isinstance(key, int) and not isinstance(key, bool):
        if -len(container) <= key < len(container):
            item: Value = container[key]
            return item
        raise _Skip(f"an index {key} out of range")
    raise _Skip(f"an index into {_kind(container)}")


_ARITHMETIC: dict[type[ast.operator], Any] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitXor: lambda a, b: a ^ b,
}

_SYMBOLS: dict[type[ast.operator], str] = {
    ast.Add: "'+'",
    ast.Sub: "'-'",
    ast.Mult: "'*'",
    ast.Div: "'/'",
    ast.FloorDiv: "'//'",
    ast.Mod: "'%'",
    ast.Pow: "'**'",
    ast.LShift: "'<<'",
    ast.RShift: "'>>'",
    ast.BitOr: "'|'",
    ast.BitAnd: "'&'",
    ast.BitXor: "'^'",
    ast.MatMult: "'@'",
}


def _symbol(op: ast.operator) -> str:
    return _SYMBOLS.get(type(op), type(op).__name__)


def _kind(value: Value) -> str:
    if value is None:
        return "None"
    return {bool: "a boolean", str: "a string", list: "a list", dict: "a dict"}.get(
        type(value), "a number"
    )


def _describe(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return f"a call to {node.func.id}(...)"
        dotted = _dotted(node.func)
        return f"a call to {dotted}(...)" if dotted else "a call"
    kinds: dict[type[ast.expr], str] = {
        ast.ListComp: "a comprehension",
        ast.SetComp: "a comprehension",
        ast.DictComp: "a comprehension",
        ast.GeneratorExp: "a generator expression",
        ast.Lambda: "a lambda",
        ast.Attribute: "an attribute of another object",
        ast.JoinedStr: "an f-string",
        ast.Set: "a set",
        ast.NamedExpr: "an assignment expression",
        ast.Starred: "an unpacking (*)",
        ast.Await: "await",
        ast.Yield: "yield",
        ast.Slice: "a slice",
    }
    return kinds.get(type(node), type(node).__name__)


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name (a short one), else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute) and len(parts) < 8:
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _target_names(target: ast.expr) -> Iterator[str]:
    stack = [target]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, (ast.Tuple, ast.List)):
            stack.extend(node.elts)
        elif isinstance(node, ast.Starred):
            stack.append(node.value)


def _bound_names(node: ast.stmt) -> Iterator[str]:
    """Names a compound statement (if, for, with, try) binds at module level."""
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            yield child.id
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield child.name


def _statement_kind(node: ast.stmt) -> str:
    return {
        ast.If: "an if statement",
        ast.For: "a for loop",
        ast.While: "a while loop",
        ast.With: "a with statement",
        ast.Try: "a try statement",
    }.get(type(node), f"a {type(node).__name__} statement")
