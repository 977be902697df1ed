"""The package's layering: every import, module-level or inside a function, points down.

The stages are folders (see docs/design.md). A module may import its own stage or a lower one;
the core (errors, digest, model, config, _internal) imports no stage. Lazy imports are allowed for
start-up time, but they are imports all the same: a cycle hidden inside a function is still a
cycle, so this test reads every ``import`` statement, wherever it is.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "provenance"

# Lowest first. ``_testing`` (the local services the tests and the demo run) may use anything.
LAYERS = ("core", "store", "attest", "capture", "verify", "compare", "render", "publish", "cli")
CORE = {"errors", "digest", "model", "config", "_internal"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _type_only(tree: ast.AST) -> set[int]:
    """Ids of the import nodes under ``if TYPE_CHECKING:``: they never run."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            ids.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return ids


def _imports(
    name: str, path: Path, known: set[str], *, runtime_only: bool = False
) -> Iterator[tuple[int, str]]:
    """(line, imported provenance module) for every import statement in the file."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_only(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one.
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target in known and target != name:
                yield node.lineno, target


def layer(module: str) -> str:
    parts = module.split(".")
    if module == "provenance.__main__":  # ``python -m provenance`` is the command line
        return "cli"
    if len(parts) == 1 or parts[1] in CORE:
        return "core"
    return parts[1]


def _rank(module: str) -> int:
    name = layer(module)
    return len(LAYERS) if name == "_testing" else LAYERS.index(name)


def test_every_folder_is_a_known_stage() -> None:
    stages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert stages <= {*LAYERS, "_internal", "_testing"}, stages


def test_imports_point_down() -> None:
    modules = _modules()
    upward = [
        f"{modules[name].relative_to(PACKAGE.parent)}:{line} imports {target} "
        f"({layer(name)} may not import {layer(target)})"
        for name in sorted(modules)
        for line, target in _imports(name, modules[name], set(modules))
        if _rank(target) > _rank(name)
    ]
    assert not upward, "\n".join(upward)


def test_no_import_cycles() -> None:
    modules = _modules()
    known = set(modules)
    # Imports under ``if TYPE_CHECKING:`` never run, so they cannot close a cycle. A package's
    # __init__ importing its own submodules is how its surface is re-exported, and a submodule
    # importing its package for that surface is not a cycle of code either.
    graph = {
        name: {
            target
            for _, target in _imports(name, path, known, runtime_only=True)
            if not target.startswith(name + ".") and not name.startswith(target + ".")
        }
        for name, path in modules.items()
    }
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("stage", [s for s in LAYERS if s != "core"])
def test_each_stage_has_a_map_and_a_surface(stage: str) -> None:
    init = PACKAGE / stage / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), f"{init} needs a docstring map of its modules"
    if stage != "cli":
        names = [
            t.id
            for n in tree.body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        ]
        assert "__all__" in names, f"{init} needs an explicit __all__"
