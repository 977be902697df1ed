"""The interop corpus as figures: real bundles from other Sigstore clients, and their tampered
copies, verified by prov offline (tests/fixtures/interop; the case-by-case checks are in
tests/unit/attest/test_interop.py).

Counted under ``interop``: bundles accepted and refused as the manifest expects, the reasoned
exceptions (a client accepts, prov refuses for the documented reason), and whatever went
against the manifest (wrongly accepted, wrongly refused, refused for another reason, a
traceback). ``make reliability`` fails on any of the latter.
"""

from __future__ import annotations

import re

from provenance.errors import ProvError
from tests.interop_corpus import CASES, TAMPERED, tampered, verify_case
from tests.reliability import figures

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
