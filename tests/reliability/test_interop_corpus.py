"""The interop corpus as figures: real bundles from other Sigstore clients, and their tampered
copies, verified by prov offline (tests/fixtures/interop; the case-by-case checks are in
tests/unit/attest/test_interop.py).

Counted under ``interop``: bundles accepted and refused as the manifest expects, the reasoned
exceptions (a client accepts, prov refuses for the documented reason), and whatever went
against the manifest (wrongly accepted, wrongly refused, refused for another reason, a
traceback). ``make reliability`` fails on any of the latter.
"""

from __future__ import annotations

import base64
import json
import re

from provenance.errors import ProvError
from tests.interop_corpus import CASES, TAMPERED, tampered, verify_case
from tests.reliability import figures
from tests.reliability.bundle_evidence import IDENTITY, ISSUER, bundles
from tests.reliability.bundle_evidence import OTHER_IDENTITY as OTHER
from tests.reliability.evidence import Evidence

CATEGORY = "interop"


def test_interop_corpus_figures() -> None:
    wrong: list[str] = []
    for case in CASES:
        figures.count(CATEGORY, "bundles")
        try:
            verify_case(case)
        except ProvError as e:
            if case["expect"] == "valid":
                figures.count(CATEGORY, "wrongly refused")
                wrong.append(f"{case['id']}: refused: {e.message}")
            elif re.search(case["reason"], e.message):
                figures.count(CATEGORY, "refused")
                if case["accepted_by"]:
                    figures.count(CATEGORY, "reasoned exceptions")
            else:
                figures.count(CATEGORY, "refused for another reason")
                wrong.append(f"{case['id']}: refused for another reason: {e.message}")
            continue
        except Exception as e:  # counted, then failed below: a traceback is a bug
            figures.count(CATEGORY, "tracebacks")
            wrong.append(f"{case['id']}: {type(e).__name__}: {e}")
            continue
        if case["expect"] == "valid":
            figures.count(CATEGORY, "accepted")
        else:
            figures.count(CATEGORY, "wrongly accepted")
            wrong.append(f"{case['id']}: accepted")
    for case, how in TAMPERED:
        figures.count(CATEGORY, "tampered tried")
        try:
            verify_case(case, tampered(case, how))
        except ProvError:
            figures.count(CATEGORY, "tampered refused")
            continue
        except Exception as e:
            figures.count(CATEGORY, "tracebacks")
            wrong.append(f"{case['id']}/{how}: {type(e).__name__}: {e}")
            continue
        figures.count(CATEGORY, "wrongly accepted")
        wrong.append(f"{case['id']}/{how}: tampered copy accepted")
    for line in wrong:
        figures.note(CATEGORY, line)
    assert not wrong, "\n".join(wrong)


def test_the_bundle_corpus_keyless_bundles_verify_in_other_clients(evidence: Evidence) -> None:
    """The reliability suite's own keyless bundles (bundle_evidence.py), checked by sigstore-js
    and the sigstore CLI: each verifies; a flipped signature and another instance do not."""
    from tests import verifiers

    made = bundles(evidence)
    subject = json.loads(base64.b64decode(made.document("m1")["dsseEnvelope"]["payload"]))
    digest = "sha256:" + subject["subject"][0]["digest"]["sha256"]
    for name, identity in (("m1", IDENTITY), ("m2", IDENTITY), ("m1-other-identity", OTHER)):
        ok, output = verifiers.run_sigstore_js(
            made.path(name), made.trusted_root, identity=identity, issuer=ISSUER
        )
        assert ok, f"{name}: {output}"
        figures.count(CATEGORY, "prov bundles sigstore-js verified")
    ok, output = verifiers.run_sigstore_cli(
        made.path("m1"), made.trusted_root, identity=IDENTITY, issuer=ISSUER, artifact=digest
    )
    assert ok, output
    document = made.document("m1")
    signature = document["dsseEnvelope"]["signatures"][0]
    raw = bytearray(base64.b64decode(signature["sig"]))
    raw[-1] ^= 0x01
    signature["sig"] = base64.b64encode(bytes(raw)).decode()
    tampered = made.root / "m1-flipped-for-other-clients.sigstore.json"
    tampered.write_text(json.dumps(document))
    for refused in (tampered, made.path("m1-other-instance")):
        ok, output = verifiers.run_sigstore_js(
            refused, made.trusted_root, identity=IDENTITY, issuer=ISSUER
        )
        assert not ok, f"{refused.name}: {output}"
        ok, output = verifiers.run_sigstore_cli(
            refused, made.trusted_root, identity=IDENTITY, issuer=ISSUER, artifact=digest
        )
        assert not ok, f"{refused.name}: {output}"
        figures.count(CATEGORY, "prov bundles tampered refused by sigstore-js and sigstore CLI")
