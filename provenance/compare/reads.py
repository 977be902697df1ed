"""What a claim read: the captured values its expression looked up, each with its source.

A verdict is only as good as the values behind it, so a reader is shown them: for
``captures['hero-run'].config.trainer.num_train_steps * 4096`` the value at that path (390,251)
and the capture it came from. The paths are the maximal lookups in the compiled expression
(attributes and constant subscripts rooted at a name), each evaluated alone by the same safe
evaluator the claim used, with the claims file's ``[let]`` names; nothing else is run. A path
that starts at a ``[let]`` name reads the capture that name's own expression starts from.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from provenance._internal.safe_eval import Compiled, EvaluationError, Evaluator, View
from provenance.compare.claims import Claim
from provenance.compare.evidence import Evidence
from provenance.compare.views import LetNames, names_for

Lets = tuple[tuple[str, Compiled], ...]

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


def _paths(tree: ast.AST, lets: frozenset[str] = frozenset()) -> list[tuple[ast.expr, str | None]]:
    """The lookups an expression makes, with the capture each starts from when it says so;
    a bare ``[let]`` name (``steps``) is a lookup too."""
    found: list[tuple[ast.expr, str | None]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Name) and node.id in lets:
            found.append((node, None))
            return
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


def _let_source(name: str, lets: dict[str, Compiled], depth: int = 0) -> str | None:
    """The capture a ``[let]`` name reads, following names defined by earlier names."""
    if name not in lets or depth > len(lets):
        return None
    for node, source in _paths(lets[name].tree.body, frozenset(lets)):
        if source is not None:
            return source
        root = (node, None) if isinstance(node, ast.Name) else _root(node)
        if root is not None and (found := _let_source(root[0].id, lets, depth + 1)):
            return found
    return None


def reads(claim: Claim, evidence: Evidence, lets: Lets = ()) -> list[Read]:
    """Every captured value ``claim``'s expression reads, in the order written, once each."""
    evaluator = Evaluator(LetNames(names_for(evidence), lets))
    named = dict(lets)
    out: list[Read] = []
    seen: set[str] = set()
    for node, source in _paths(claim.expression.tree.body, frozenset(named)):
        root = (node, None) if isinstance(node, ast.Name) else _root(node)
        if source is None and root is not None:
            source = _let_source(root[0].id, named)
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
