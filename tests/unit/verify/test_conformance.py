"""The sigstore-conformance ``bundle-verify`` cases, run through ``prov-conformance``, offline.

Every case folder under ../shared/conformance (upstream sigstore-conformance, sigstore-python's
staging bundles laid out the same way, and the derived identity/subject cases) is verified twice,
with the artifact as a path and as ``sha256:<hex>``, the way upstream's harness does. Cases without
their own trusted root get the pinned production one from ``trusted-roots/``.

A ``_fail`` case counts only when it is rejected for the reason it was written for (FAIL_REASONS),
not merely with a non-zero exit. Known gaps go in EXPECTED_FAILURES, each with its reason.

The whole run happens in one child process inside ``unshare -n`` (no network at all) where that
is available; run this file as a script to get the same tally by hand::

    unshare -n .venv/bin/python tests/unit/verify/test_conformance.py ../shared
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

CASE_SETS = (
    "sigstore-conformance/assets",
    "sigstore-python",
    "derived/conformance-extra",
)
DEFAULT_IDENTITY = (
    "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
    ".github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main"
)
DEFAULT_ISSUER = "https://token.actions.githubusercontent.com"
PRODUCTION_ROOT = "trusted-roots/sigstore-production.trusted_root.json"
MODES = ("path", "digest")

# Cases prov does not meet, keyed "case" or "case:mode", each with why. None today: the four
# cases sigstore-python 4.5.1 misses (intoto/0.0.2, the inclusive TSA validity end, two
# managed-key bundles) are handled by provenance/attest/_bundle_verifier.py.
EXPECTED_FAILURES: dict[str, str] = {}

# Why each _fail case must be rejected: a regular expression over prov-conformance's stderr.
FAIL_REASONS: dict[str, str] = {
    # sigstore-conformance
    "bundle-empty-certificate-chain_fail": r"non-empty certificate chain",
    "bundle-from-wrong-instance_fail": r"failed to build timestamp certificate chain",
    "bundle-invalid-base64-signature_fail": r"messageSignature\.signature|base64",
    "bundle-malformed-json_fail": r"Invalid JSON",
    "bundle-negative-log-index_fail": r"logIndex",
    "bundle-unknown-version_fail": r"mediaType",
    "bundle-with-root-cert_fail": r"certificate chain contains a root CA",
    "checkpoint-bad-keyhint_fail": r"checkpoint: Signature not found for log ID",
    "checkpoint-wrong-roothash_fail": r"invalid root hash",
    "dsse-invalid-sig_fail": r"DSSE: invalid signature",
    "dsse-mismatch-envelope_fail": r"payload hash does not match",
    "dsse-mismatch-sig_fail": r"log entry signatures do not match",
    "inclusion-proof-corrupted-hash_fail": r"inclusion proof contains invalid root hash",
    # The edited public key changes the entry body, hence its leaf hash: the proof fails.
    "incorrect-public-key_fail": r"inclusion proof contains invalid root hash",
    "integrated-time-in-future_fail": r"cert is not valid at validation time",
    "intoto-expired-certificate_fail": r"cert is not valid at validation time",
    "intoto-log-entry-mismatch_fail": r"inconsistent with other materials",
    "intoto-missing-inclusion-proof_fail": r"inclusionProof",
    "intoto-set-outside-signing-cert-validity_fail": r"cert is not valid at validation time",
    "intoto-tsa-timestamp-outside-cert-validity_fail": r"cert is not valid at validation time",
    "invalid-checkpoint-signature_fail": r"checkpoint: invalid signature",
    "invalid-ct-key_fail": r"SCT verify failed",
    # A v0.2 bundle's proof must carry a checkpoint; without one the old proof proves nothing.
    "invalid-inclusion-proof_fail": r"inclusion proof, with checkpoint",
    "managed-key-no-key_fail": r"signed with a managed key, not a certificate",
    # Its key.pub is the right key with its last bytes replaced: not a point on P-256.
    "managed-key-wrong-key_fail": r"public key .* cannot be loaded",
    "message-digest-mismatch_fail": r"message digest mismatch",
    "rekor2-checkpoint-missing-log-signature_fail": r"at least one signature",
    "rekor2-checkpoint-missing-origin_fail": r"too few items in header",
    "rekor2-checkpoint-missing-root-hash_fail": r"too few items in header",
    "rekor2-checkpoint-missing-size_fail": r"too few items in header",
    "rekor2-checkpoint-no-matching-signature_fail": r"checkpoint: invalid signature",
    "rekor2-dsse-invalid-sig_fail": r"DSSE: invalid signature",
    "rekor2-dsse-mismatch-envelope_fail": r"inconsistent with other materials",
    "rekor2-dsse-mismatch-sig_fail": r"inconsistent with other materials",
    "rekor2-no-inclusion-proof_fail": r"inclusionProof",
    "rekor2-no-timestamp_fail": r"inclusion promise or signed timestamp",
    "rekor2-timestamp-outside-trust-root-tsa-validity_fail": r"not enough sources of verified time",
    "rekor2-timestamp-outside-tsa-cert-validity_fail": r"not enough sources of verified time",
    "rekor2-timestamp-payload-mismatch_fail": r"not enough sources of verified time",
    # FreeTSA's token orders its certificate SET as BER allows and DER forbids; rfc3161-client
    # refuses to parse it, so the untrusted token is rejected before its chain is even tried.
    "rekor2-timestamp-untrusted-tsa-with-embedded-cert_fail": r"Invalid Timestamp Response",
    "rekor2-timestamp-untrusted-tsa-without-embedded-cert_fail": (
        r"not enough sources of verified time"
    ),
    "rekor2-timestamp-with-incorrect-time_fail": r"cert is not valid at validation time",
    "set-invalid-signature_fail": r"SET: invalid inclusion promise",
    "signature-mismatch_fail": r"Signature is invalid for input",
    "trust-root-tlog-missing-validity-start_fail": r"trusted root .* is malformed",
    "wrong-hashedrekord-artifact_fail": r"inconsistent with other materials",
    "wrong-hashedrekord-cert-and-sig_fail": r"inconsistent with other materials",
    "wrong-hashedrekord-entry_fail": r"inconsistent with other materials",
    "wrong-material_fail": r"message digest mismatch",
    # sigstore-python staging cases
    "bundle-v0.3-wrong-identity_fail": r"SANs do not match someone-else@example\.com",
    "bundle-v0.3-wrong-issuer_fail": r"OIDCIssuer does not match",
    "cve-2022-36056_fail": r"inconsistent with other materials",
    "invalid-mediatype_fail": r"mediaType",
    "no-cert-v0.1_fail": r"non-empty certificate chain",
    "no-log-entry_fail": r"exactly one log entry",
    "v0.2-no-checkpoint_fail": r"inclusion proof, with checkpoint",
    "v0.3-no-signed-time_fail": r"inclusion promise or signed timestamp",
    # derived
    "happy-path-intoto-in-dsse-v3-subject-mismatch_fail": r"no subject for digest",
    "happy-path-intoto-in-dsse-v3-wrong-identity_fail": r"SANs do not match",
    "happy-path-v0.1-staging-trusted-root_fail": r"failed to build timestamp certificate chain",
    "happy-path-v0.3-identity-prefix_fail": r"SANs do not match",
    "happy-path-v0.3-issuer-trailing-slash_fail": r"OIDCIssuer does not match",
    "happy-path-v0.3-wrong-identity_fail": r"SANs do not match",
    "happy-path-v0.3-wrong-issuer_fail": r"OIDCIssuer does not match",
    "rekor2-dsse-happy-path-subject-mismatch_fail": r"no subject for digest",
}


@dataclass
class Outcome:
    case_set: str
    case: str
    mode: str
    exit_code: int
    stderr: str

    @property
    def expect_fail(self) -> bool:
        return self.case.endswith("_fail")

    def judge(self) -> tuple[bool, str]:
        """(met, why): met when the case's expectation holds, for the right reason."""
        if not self.expect_fail:
            if self.exit_code == 0:
                return True, "verified"
            return False, f"not verified (exit {self.exit_code}): {self.stderr}"
        if self.exit_code == 0:
            return False, "accepted a bundle that must be rejected"
        reason = FAIL_REASONS.get(self.case)
        if reason is None:
            return False, "rejected, but FAIL_REASONS has no expected reason for this case"
        if not re.search(reason, self.stderr, re.IGNORECASE | re.DOTALL):
            return False, f"rejected for another reason than /{reason}/: {self.stderr}"
        if self.exit_code != 1:
            return False, f"rejected with exit {self.exit_code}, not 1: {self.stderr}"
        return True, "rejected for the right reason"


def case_args(shared: Path, case_set: str, case: Path, mode: str) -> list[str]:
    root = shared / "conformance"
    args = ["verify-bundle", "--bundle", str(case / "bundle.sigstore.json")]
    if (case / "key.pub").exists():
        args += ["--key", str(case / "key.pub")]
    else:
        identity = case / "identity"
        issuer = case / "issuer"
        args += [
            "--certificate-identity",
            identity.read_text().strip() if identity.exists() else DEFAULT_IDENTITY,
            "--certificate-oidc-issuer",
            issuer.read_text().strip() if issuer.exists() else DEFAULT_ISSUER,
        ]
    trusted = case / "trusted_root.json"
    args += ["--trusted-root", str(trusted if trusted.exists() else root / PRODUCTION_ROOT)]
    artifact = case / "artifact"
    if not artifact.exists():
        artifact = root / "sigstore-conformance/assets/bundle-verify/a.txt"
    if mode == "digest":
        args.append("sha256:" + hashlib.sha256(artifact.read_bytes()).hexdigest())
    else:
        args.append(str(artifact))
    return args


def cases(shared: Path) -> list[tuple[str, Path]]:
    found = []
    for case_set in CASE_SETS:
        folder = shared / "conformance" / case_set / "bundle-verify"
        found += [(case_set, p) for p in sorted(folder.iterdir()) if p.is_dir()]
    return found


def run_all(shared: Path) -> list[Outcome]:
    """Every case in both modes, in this process (the caller decides about the network)."""
    from click.testing import CliRunner

    from provenance.cli.conformance import main

    runner = CliRunner()
    outcomes = []
    for case_set, case in cases(shared):
        for mode in MODES:
            result = runner.invoke(main, case_args(shared, case_set, case, mode))
            stderr = " ".join(result.stderr.split())
            outcomes.append(Outcome(case_set, case.name, mode, result.exit_code, stderr))
    return outcomes


def _offline_outcomes(shared: Path) -> tuple[list[Outcome], bool]:
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        child = subprocess.run(
            [unshare, "-n", sys.executable, __file__, str(shared), "--json"],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "NO_PROXY": "*"},
        )
        assert child.returncode == 0, child.stderr
        return [Outcome(**o) for o in json.loads(child.stdout)], True
    return run_all(shared), False


def tally(outcomes: list[Outcome]) -> tuple[list[str], int, int]:
    lines, passed, failed = [], 0, 0
    for outcome in outcomes:
        met, why = outcome.judge()
        key = f"{outcome.case}:{outcome.mode}"
        known = EXPECTED_FAILURES.get(key) or EXPECTED_FAILURES.get(outcome.case)
        if met:
            passed += 1
            if known:
                lines.append(f"XPASS {key}: listed as expected to fail ({known})")
        else:
            failed += 1
            lines.append(f"{'XFAIL' if known else 'FAIL'} {key}: {why}")
    return lines, passed, failed


def test_conformance_cases(shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes, isolated = _offline_outcomes(shared)
    lines, passed, failed = tally(outcomes)
    with capsys.disabled():
        where = "inside unshare -n" if isolated else "in-process (unshare unavailable)"
        print(f"\nconformance ({len(outcomes)} runs, {where}):")
        for line in lines:
            print("  " + line)
        print(f"conformance: {passed} passed, {failed} failed")

    unexpected = [line for line in lines if not line.startswith("XFAIL")]
    assert not unexpected, "\n".join(unexpected)

    upstream = [o for o in outcomes if o.case_set == CASE_SETS[0]]
    valid = {o.case for o in upstream if not o.expect_fail and o.judge()[0]}
    rejected = {o.case for o in upstream if o.expect_fail and o.judge()[0]}
    assert len(valid) >= 21 and len(rejected) >= 49, (len(valid), len(rejected))
    # Every mode of every case ran, and every _fail case has its reason written down.
    assert len(outcomes) == len(cases(shared)) * len(MODES)
    fail_cases = {case.name for _, case in cases(shared) if case.name.endswith("_fail")}
    assert fail_cases == set(FAIL_REASONS)


def test_reasons_are_checked(shared: Path) -> None:
    """The reason check bites: a rejection for an unrelated reason does not count."""
    outcome = Outcome(CASE_SETS[0], "dsse-invalid-sig_fail", "path", 1, "error: cannot read it")
    assert outcome.judge() == (
        False,
        "rejected for another reason than /DSSE: invalid signature/: error: cannot read it",
    )
    assert not Outcome(CASE_SETS[0], "happy-path-v0.1", "path", 1, "no").judge()[0]
    assert not Outcome(CASE_SETS[0], "signature-mismatch_fail", "path", 0, "").judge()[0]


# -- acceptance: exact identity and issuer, no network -------------------------------------------

HAPPY_DSSE = "sigstore-conformance/assets/bundle-verify/happy-path-intoto-in-dsse-v3"


def _conformance_cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    """prov-conformance as a user runs it: the installed script, inside unshare -n if possible."""
    script = Path(sys.executable).with_name("prov-conformance")
    command = [str(script), *args]
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        command = [unshare, "-n", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("identity", "issuer", "verified", "reason"),
    [
        (DEFAULT_IDENTITY, DEFAULT_ISSUER, True, ""),
        (DEFAULT_IDENTITY.replace("oidc-beacon.yml", "other.yml"), DEFAULT_ISSUER, False, "SANs"),
        (DEFAULT_IDENTITY.removesuffix("@refs/heads/main"), DEFAULT_ISSUER, False, "SANs"),
        (DEFAULT_IDENTITY, "https://accounts.google.com", False, "OIDCIssuer"),
        (DEFAULT_IDENTITY, DEFAULT_ISSUER + "/", False, "OIDCIssuer"),
    ],
    ids=["exact", "wrong-identity", "identity-prefix", "wrong-issuer", "issuer-trailing-slash"],
)
def test_dsse_bundle_identity_is_exact(
    shared: Path, identity: str, issuer: str, verified: bool, reason: str
) -> None:
    case = shared / "conformance" / HAPPY_DSSE
    result = _conformance_cli(
        [
            "verify-bundle",
            "--bundle",
            str(case / "bundle.sigstore.json"),
            "--certificate-identity",
            identity,
            "--certificate-oidc-issuer",
            issuer,
            str(case.parent / "a.txt"),
        ]
    )
    if verified:
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "OK"
    else:
        assert result.returncode == 1, result.stderr
        assert reason in result.stderr and "does not match" in result.stderr


if __name__ == "__main__":
    results = run_all(Path(sys.argv[1]))
    if "--json" in sys.argv:
        print(json.dumps([asdict(o) for o in results]))
    else:
        report, ok, bad = tally(results)
        print("\n".join(report))
        print(f"{ok} passed, {bad} failed")
