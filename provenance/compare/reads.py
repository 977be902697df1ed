"""What a claim read: the captured values its expression looked up, each with its source.

A verdict is only as good as the values behind it, so a reader is shown them: for
``captures['hero-run'].config.trainer.num_train_steps * 4096`` the value at that path (390,251)
and the capture it came from. The paths are the maximal lookups in the compiled expression
(attributes and constant subscripts rooted at a name), each evaluated alone by the same safe
evaluator the claim used; nothing else is run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from provenance._internal.safe_eval import Compiled, EvaluationError, Evaluator, View
from provenance.compare.claims import Claim, names_for
from provenance.compare.evidence import Evidence

__all__ = ["Read", "reads"]


@dataclass(frozen=True)
class Read:
    """One value an expression read, or why it could not be read."""

    path: str
    source: str | None  # the capture's source name, for ``captures[NAME]...``
    value: Any = None
    error: str | None = None


def _root(node: ast.AST) -> tuple[ast.Name, str | None] | None:
    """The name a lookup chain starts from and, for ``captures['x']``, the source ``x``."""
    source: str | None = None
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript):
            if not isinstance(node.slice, ast.Constant):
                return None
            if isinstance(node.value, ast.Name) and isinstance(node.slice.value, str):
                source = node.slice.value
        node = node.value
    return (node, source) if isinstance(node, ast.Name) else None


def _paths(tree: ast.AST) -> list[tuple[ast.expr, str | None]]:
    found: list[tuple[ast.expr, str | None]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            root = _root(node)
            if root is not None:
                name, source = root
                found.append((node, source if name.id == "captures" else None))
                return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _plain(value: Any) -> Any:
    if isinstance(value, View):
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def reads(claim: Claim, evidence: Evidence) -> list[Read]:
    """Every captured value ``claim``'s expression reads, in the order written, once each."""
    evaluator = Evaluator(names_for(evidence))
    out: list[Read] = []
    seen: set[str] = set()
    for node, source in _paths(claim.expression.tree.body):
        text = ast.unparse(node)
        if text in seen:
            continue
        seen.add(text)
        try:
            value = evaluator.run(Compiled(text, ast.Expression(body=node)))
        except EvaluationError as e:
            out.append(Read(text, source, error=str(e)))
            continue
        if isinstance(value, View):
            out.append(Read(text, source, error="a capture or a set of documents, not a value"))
        else:
            out.append(Read(text, source, _plain(value)))
    return out
