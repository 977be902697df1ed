"""Real bundles from other Sigstore clients' test data, verified by prov offline.

The corpus (tests/fixtures/interop, sources in its SOURCES.md) holds production, staging and
GitHub-instance bundles, v0.1 to v0.3, DSSE and message signatures, Rekor v1 and v2 entries, and
the algorithms Fulcio issues certificates for. ``manifest.json`` gives each case's expected
verdict: a valid case must verify; an invalid one must be refused for its own reason (a regular
expression over prov's message). A case some client accepts and prov refuses must say why in its
``exception`` and in docs/reliability.md. Every valid bundle is also tampered with, and each
tampered copy must be refused with a ProvError, never a traceback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from provenance.errors import ProvError
from tests.interop_corpus import CASES, CORPUS, DOCS, TAMPERED, tampered, verify_case


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_verdict(case: dict[str, Any]) -> None:
    if case["expect"] == "valid":
        result = verify_case(case)
        assert result.times, "a verified bundle has at least one verified time"
        return
    with pytest.raises(ProvError) as refused:
        verify_case(case)
    assert re.search(case["reason"], refused.value.message), refused.value.message


def test_every_refusal_of_an_accepted_bundle_is_documented() -> None:
    documented = DOCS.read_text()
    for case in CASES:
        if case["expect"] == "invalid" and case["accepted_by"]:
            assert case.get("exception"), f"{case['id']}: accepted by {case['accepted_by']}"
            assert case["id"] in documented, f"{case['id']} is not in {DOCS.name}"


def test_corpus_covers_what_the_ecosystem_signs() -> None:
    valid = [c for c in CASES if c["expect"] == "valid"]
    text = " ".join(c["why"] for c in valid)
    for needed in ("P-384", "P-521", "RSA 2048", "RSA 4096", "v0.1", "Rekor v2", "GitHub"):
        assert needed in text, needed
    assert any(c.get("key") for c in valid), "a managed-key bundle"


def test_every_file_has_its_source() -> None:
    sources = (CORPUS / "SOURCES.md").read_text()
    files = [p for p in CORPUS.rglob("*") if p.is_file() and p.name not in {"SOURCES.md"}]
    missing = [str(p.relative_to(CORPUS)) for p in files if p.name not in sources]
    assert not missing, missing


@pytest.mark.parametrize(
    ("case", "how"), TAMPERED, ids=[f"{case['id']}-{how}" for case, how in TAMPERED]
)
def test_tampered_bundle_is_refused_without_traceback(case: dict[str, Any], how: str) -> None:
    data = tampered(case, how)
    assert data is not None
    with pytest.raises(ProvError):
        verify_case(case, data)


# -- foreign statements through the command line -----------------------------------------------

DEMO_FILE = "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl"
GITHUB_DEMO = (
    CORPUS / "bundles" / "gh-cli" / "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl"
)
DEMO_IDENTITY = (
    "https://github.com/actions/attest-demo/.github/workflows/build-python.yml@refs/heads/main"
)


def test_prov_verify_reports_a_foreign_statement_with_distinct_steps(
    prov: Callable[..., Result], tmp_path: Path
) -> None:
    bundle = tmp_path / "demo.sigstore.json"
    bundle.write_bytes(GITHUB_DEMO.read_bytes())
    result = prov(
        "verify",
        str(bundle),
        "--format",
        "json",
        "--trusted-root",
        str(CORPUS / "trusted-roots" / "github.trusted_root.json"),
        "--cert-identity",
        DEMO_IDENTITY,
        "--cert-oidc-issuer",
        "https://token.actions.githubusercontent.com",
    )
    assert result.exit_code == 1, result.output
    steps = json.loads(result.stdout)["steps"]
    numbers = [step["number"] for step in steps]
    assert numbers == sorted(set(numbers)) == [1, 2, 3, 4], steps
    assert [s["status"] for s in steps] == ["passed", "passed", "skipped", "failed"]
    assert "foreign in-toto statement" in steps[3]["detail"]
    assert "github_provenance_demo-0.0.12-py3-none-any.whl (sha256:ae57936d" in steps[3]["detail"]


def test_prov_show_reads_a_foreign_statement(prov: Callable[..., Result]) -> None:
    result = prov("show", str(GITHUB_DEMO))
    assert result.exit_code == 0, result.output
    assert "predicateType https://slsa.dev/provenance/v1" in result.stdout
    assert (
        "subject github_provenance_demo-0.0.12-py3-none-any.whl  sha256:ae57936def59bc4c"
        in result.stdout
    )
    shown = json.loads(prov("show", "--format", "json", str(GITHUB_DEMO)).stdout)
    assert shown["predicateType"] == "https://slsa.dev/provenance/v1"
    assert shown["subject"][0]["digest"]["sha256"].startswith("ae57936d")


def test_prov_show_verifies_a_foreign_statements_signature_when_asked(
    prov: Callable[..., Result],
) -> None:
    trust = ["--trusted-root", str(CORPUS / "trusted-roots" / "github.trusted_root.json")]
    issuer = ["--cert-oidc-issuer", "https://token.actions.githubusercontent.com"]
    shown = prov("show", str(GITHUB_DEMO), *trust, "--cert-identity", DEMO_IDENTITY, *issuer)
    assert shown.exit_code == 0, shown.output
    assert f"signature verified: identity {DEMO_IDENTITY}" in shown.stdout
    other = DEMO_IDENTITY.replace("build-python", "deploy")
    refused = prov("show", str(GITHUB_DEMO), *trust, "--cert-identity", other, *issuer)
    assert refused.exit_code == 1 and "step 2 (bundle) failed" in refused.stderr
