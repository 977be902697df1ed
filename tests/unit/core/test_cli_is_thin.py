"""The command line is thin: click commands parse options, call one library function, print, exit.

Two things are checked on every module under ``provenance/cli/``:

- no function (def to its last line, decorators apart) is over ``MAX_LINES``: a longer one is
  doing work that belongs to a stage below;
- no trust or verification decision: the trust policy is built in ``verify.policy`` from the
  ``TrustOptions`` the shared decorator parses, so the CLI imports from ``provenance.verify.*``
  only what a module lists in ``__all__``, from ``verify.policy`` only ``TrustOptions``, never the
  raw verification steps or the verifiers under them, and never names the things a trust decision
  is made of (identity policies, loaded keys, trusted roots, TSA trust).

The checkers are run on small sources first, so that a checker that finds nothing fails too.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "provenance"
CLI = PACKAGE / "cli"
MAX_LINES = 60

POLICY_ALLOWED = {"TrustOptions"}
"""What ``cli/`` may take from ``verify.policy``: the auditor's options, parsed, nothing loaded."""

FORBIDDEN_MODULES = {
    "provenance.verify.steps",  # verification without the trust policy in front of it
    "provenance.verify.predicates",
    "provenance.attest.dsse",
    "provenance.attest._bundle_verifier",
}

TRUST_NAMES = {
    "IdentityPolicy",
    "TrustPolicy",
    "TrustedRoot",
    "TsaTrust",
    "from_auditor",
    "for_pack",
    "identity_policy",
    "load_verifier",
    "load_public_key",
    "verify_bundle",
    "verify_proof",
    "check_subject_digest",
}
"""The parts a trust decision is made of; naming one in ``cli/`` means deciding there."""


def long_functions(source: str, name: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_LINES:
                yield f"{name}:{node.lineno} {node.name} is {length} lines (at most {MAX_LINES})"


def _public(module: str) -> set[str] | None:
    try:
        return set(getattr(importlib.import_module(module), "__all__", ()))
    except ImportError:
        return None


def trust_decisions(source: str, name: str) -> Iterator[str]:
    for node in ast.walk(ast.parse(source)):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in FORBIDDEN_MODULES:
                    yield f"{where} imports {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.module:
            module, names = node.module, {alias.name for alias in node.names}
            if module in FORBIDDEN_MODULES or {f"{module}.{n}" for n in names} & FORBIDDEN_MODULES:
                yield f"{where} imports from {module}: verification goes through verify.audit"
            if module == "provenance.verify.policy" and names - POLICY_ALLOWED:
                yield f"{where} takes {sorted(names - POLICY_ALLOWED)} from verify.policy"
            elif module.startswith("provenance.verify."):
                public = _public(module)
                if public is not None and names - public:
                    yield f"{where} takes {sorted(names - public)}, not in {module}.__all__"
            if names & TRUST_NAMES:
                yield f"{where} imports {sorted(names & TRUST_NAMES)}"
        elif isinstance(node, ast.Attribute) and node.attr in TRUST_NAMES:
            yield f"{where} uses .{node.attr}"
        elif isinstance(node, ast.Name) and node.id in TRUST_NAMES:
            yield f"{where} uses {node.id}"


def _cli_sources() -> list[Path]:
    return sorted(CLI.rglob("*.py"))


LONG = "def f():\n" + "    x = 1\n" * MAX_LINES
SHORT = "def f():\n" + "    x = 1\n" * (MAX_LINES - 1)


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (LONG, 1),
        (SHORT, 0),
        ("@click.command()\n@click.option('--a')\n" + SHORT, 0),
        ("class C:\n    " + LONG.replace("\n", "\n    "), 1),
    ],
)
def test_the_length_check_counts_def_to_end(source: str, found: int) -> None:
    assert len(list(long_functions(source, "sample.py"))) == found


@pytest.mark.parametrize(
    "source",
    [
        "from provenance.verify.policy import from_auditor",
        "from provenance.verify.policy import TrustPolicy",
        "def f():\n    from provenance.verify.steps import verify",
        "from provenance.verify import steps",
        "from provenance.attest.sigstore import IdentityPolicy",
        "def f(s):\n    return s.IdentityPolicy(issuer='i', identity='x')",
        "def f(t):\n    from provenance.verify import policy\n    return policy.from_auditor(t)",
        "from provenance.verify.audit import _run",
        "import provenance.attest.dsse",
        "def f(k):\n    return keys.load_verifier(k)",
    ],
)
def test_the_trust_check_finds_decisions(source: str) -> None:
    assert list(trust_decisions(source, "sample.py"))


@pytest.mark.parametrize(
    "source",
    [
        "from provenance.verify.policy import TrustOptions",
        "from provenance.verify.audit import audit, make_pack",
        "def f(trusted_root):\n    return TrustOptions(trusted_root=trusted_root)",
        "from provenance.attest.sigstore import KeylessSigner, SigstoreAttester",
    ],
)
def test_the_trust_check_allows_calling_the_library(source: str) -> None:
    assert list(trust_decisions(source, "sample.py")) == []


def test_there_are_commands_to_check() -> None:
    assert len(_cli_sources()) >= 10


def test_no_cli_function_is_over_60_lines() -> None:
    found = [
        problem
        for path in _cli_sources()
        for problem in long_functions(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not found, "move the work into the library:\n" + "\n".join(found)


def test_no_trust_decision_in_the_cli() -> None:
    found = [
        problem
        for path in _cli_sources()
        for problem in trust_decisions(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not found, "trust is decided in verify.policy / verify.audit:\n" + "\n".join(found)
