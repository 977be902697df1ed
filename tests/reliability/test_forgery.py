"""Forged evidence never reads as verified (issue 13): one category per class of forgery.

Each case is attacker-made evidence, built from the session's real signed snapshots (see
evidence.py: ``m1`` by alice, ``m2`` by alice and bob) and run through the real command line the
way an auditor would. A case is *refused* when the command exits with the code and the message it
names; it is *wrongly accepted* when the command exits 0 or shows the forged content as good.
``make reliability`` prints each category (``forgery:<class>``) with its counts.

* ``pack-trust``: a pack that brings its own key or TSA chain; the auditor's trust must count,
  and nothing without it (Sigstore roots: tests/unit/attest/test_sigstore.py).
* ``capture-digest``: a validly signed snapshot whose capture kept an older digest while its data
  changed: verify --store, diff (with and without trust options) and log.
* ``readers``: show, diff, check, log given wrongly signed evidence with the auditor's key; an
  index entry that points at another snapshot's attestation.
* ``replay``: a pack for m1 presented as m2 (``m2.evidence.tar``, ``m2.intoto.jsonl``).
* ``escape``: file names holding terminal escapes, and Markdown that would leave a code span.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from provenance._internal import canonical
from provenance.attest import statement as statements
from provenance.digest import sha256_bytes
from provenance.model import PREDICATE_TYPE, Capture
from tests.reliability import figures
from tests.reliability.evidence import PAYLOAD_TYPE, Evidence, run_cli

Verdict = Callable[[int, str, str], str | None]
"""(exit code, stdout, stderr) -> why the command wrongly accepted, or None."""


@dataclass(frozen=True)
class Forgery:
    id: str
    klass: str
    build: Callable[[Evidence, Path], Sequence[str]]
    exit_code: int = 1
    expect: str = ""
    accepted: Verdict | None = None  # a check of the output beyond the exit code


# -- making forged evidence --------------------------------------------------------------------


def _redigest(capture: dict[str, Any]) -> None:
    model = Capture.model_validate(capture)
    capture["digest"] = Capture.content_digest(
        model.kind,
        model.request,
        model.data,
        [b.model_dump(mode="json") for b in model.blobs],
        model.error.model_dump(mode="json") if model.error else None,
    )


def signed(ev: Evidence, predicate: dict[str, Any], path: Path, signer: str = "alice") -> Path:
    """A statement over ``predicate`` really signed by ``signer``, written to ``path``."""
    sha = sha256_bytes(canonical.dumps(predicate)).hex
    subject = {"name": statements.subject_name(predicate["label"]), "digest": {"sha256": sha}}
    payload = statements.wrap([subject], PREDICATE_TYPE, predicate)
    signature = base64.b64encode(ev.sign(signer, payload)).decode()
    envelope = {
        "payload": base64.b64encode(payload).decode(),
        "payloadType": PAYLOAD_TYPE,
        "signatures": [{"keyid": ev.keyid(signer), "sig": signature}],
    }
    path.write_text(json.dumps(envelope) + "\n")
    return path


def kept_digest(ev: Evidence, work: Path) -> Path:
    """m2's content under m1's capture digest, signed by alice (who signs both)."""
    predicate = ev.statement("m2")["predicate"]
    predicate["captures"][0]["digest"] = ev.statement("m1")["predicate"]["captures"][0]["digest"]
    return signed(ev, predicate, work / "m2.intoto.jsonl")


def by_mallory(ev: Evidence, work: Path, label: str = "m1") -> Path:
    return signed(ev, ev.statement(label)["predicate"], work / f"{label}.intoto.jsonl", "mallory")


def with_path(ev: Evidence, work: Path, path: str) -> Path:
    """m2 with a file of the given name, correctly digested and signed by alice."""
    predicate = ev.statement("m2")["predicate"]
    capture = predicate["captures"][0]
    files = capture["data"]["files"]
    files.append({**files[0], "path": path})
    _redigest(capture)
    return signed(ev, predicate, work / "m2.intoto.jsonl")


def pack(ev: Evidence, work: Path, attestation: Path, *keys: str, name: str = "m1") -> Path:
    out = work / f"{name}.evidence.tar"
    args = ["pack", str(attestation), "-o", str(out), "--store", str(ev.store)]
    for key in keys:
        args += ["--key", ev.pub(key)]
    code, _, err, _ = run_cli(*args)
    assert code == 0, err
    return out


def store_copy(ev: Evidence, work: Path) -> Path:
    target = work / "store"
    shutil.copytree(ev.store, target, symlinks=True)
    return target


def repoint(store: Path, label: str, attestation: bytes, sha: str | None = None) -> None:
    """The index entry of ``label`` now names these attestation bytes (put into the store)."""
    from provenance.store.objects import Store

    written = Store(store).put_bytes(attestation)
    for entry in (store / "snapshots").glob("*.json"):
        document = json.loads(entry.read_text())
        if document["label"] == label:
            document["attestation"] = str(written.digest)
            if sha is not None:
                document["sha256"] = sha
            entry.chmod(0o644)
            entry.write_text(json.dumps(document))


# -- the cases ---------------------------------------------------------------------------------


def _not(text: str) -> Verdict:
    return lambda code, out, err: f"printed {text!r}" if text in out else None


def _no_escape(code: int, out: str, err: str) -> str | None:
    return (
        "a raw control character reached the output"
        if re.search(r"[\x00-\x08\x1b\x7f]", out)
        else None
    )


def _markdown_inert(code: int, out: str, err: str) -> str | None:
    tokens = MarkdownIt("commonmark").enable("table").parse(out)
    inline = [c.type for t in tokens for c in (t.children or [])]
    bad = [
        t
        for t in (*inline, *(t.type for t in tokens))
        if t in ("html_inline", "html_block", "image", "link_open")
    ]
    return f"the Markdown opened {bad}" if bad else None


HOSTILE_NAMES = [
    "\x1b]0;pwned\x07\x1b[2Jevil.py",
    "``</code><img src=x onerror=alert(1)>``.py",
    "[click](https://evil.example).py",
]


def cases() -> list[Forgery]:
    alice, store = ("--key",), ("--store",)
    found: list[Forgery] = [
        Forgery(
            "pack-own-key-no-trust-option",
            "pack-trust",
            lambda ev, w: ["verify", str(pack(ev, w, by_mallory(ev, w), "mallory"))],
            exit_code=2,
            expect="brings its own trust material",
        ),
        Forgery(
            "pack-own-key-auditor-key",
            "pack-trust",
            lambda ev, w: [
                "verify",
                str(pack(ev, w, by_mallory(ev, w), "mallory")),
                *alice,
                ev.pub("alice"),
            ],
            expect=r"step 2 \(signatures\) failed",
        ),
        Forgery(
            "pack-own-key-reader",
            "pack-trust",
            lambda ev, w: [
                "show",
                str(pack(ev, w, by_mallory(ev, w), "mallory")),
                *alice,
                ev.pub("alice"),
            ],
            expect=r"step 2 \(signatures\) failed",
        ),
        Forgery(
            "digest-kept-verify-store",
            "capture-digest",
            lambda ev, w: [
                "verify",
                str(kept_digest(ev, w)),
                *alice,
                ev.pub("alice"),
                *store,
                str(ev.store),
            ],
            expect=r"step \d \(statement\) failed: capture .* is not the digest of its content",
        ),
        Forgery(
            "digest-kept-diff-trusted",
            "capture-digest",
            lambda ev, w: [
                "diff",
                str(ev.attestation("m1")),
                str(kept_digest(ev, w)),
                *alice,
                ev.pub("alice"),
            ],
            expect="is not the digest of its content",
            accepted=_not("no differences"),
        ),
        Forgery(
            "digest-kept-diff-unchecked",
            "capture-digest",
            lambda ev, w: [
                "diff",
                str(ev.attestation("m1")),
                str(kept_digest(ev, w)),
                *store,
                str(ev.store),
            ],
            expect="is not the digest of its content",
            accepted=_not("no differences"),
        ),
        Forgery(
            "digest-kept-check",
            "capture-digest",
            lambda ev, w: ["show", str(kept_digest(ev, w))],
            expect="is not the digest of its content",
        ),
        Forgery(
            "digest-kept-log",
            "capture-digest",
            lambda ev, w: _log_with(ev, w, kept_digest(ev, w).read_bytes()),
            exit_code=0,
            expect="",
            accepted=_not("no differences since m1"),
        ),
        Forgery(
            "reader-show-wrong-signer",
            "readers",
            lambda ev, w: ["show", str(by_mallory(ev, w)), *alice, ev.pub("alice")],
            expect=r"step 2 \(signatures\) failed",
        ),
        Forgery(
            "reader-diff-wrong-signer",
            "readers",
            lambda ev, w: [
                "diff",
                str(ev.attestation("m2")),
                str(by_mallory(ev, w)),
                *alice,
                ev.pub("alice"),
            ],
            expect=r"step 2 \(signatures\) failed",
        ),
        Forgery(
            "reader-export-warc-wrong-signer",
            "readers",
            lambda ev, w: [
                "export-warc",
                str(by_mallory(ev, w)),
                "-o",
                str(w / "x.warc"),
                *alice,
                ev.pub("alice"),
                *store,
                str(ev.store),
            ],
            expect=r"step 2 \(signatures\) failed",
        ),
        Forgery(
            "reader-log-index-points-elsewhere",
            "readers",
            lambda ev, w: _log_with(ev, w, ev.attestation("m1").read_bytes()),
            exit_code=0,
            accepted=_not("no differences since m1"),
        ),
        Forgery(
            "reader-log-trusted-wrong-signer",
            "readers",
            lambda ev, w: [
                *_log_with(ev, w, by_mallory(ev, w, "m2").read_bytes()),
                *alice,
                ev.pub("alice"),
            ],
            expect="",
            accepted=_not("changed since m1"),
        ),
        Forgery(
            "replay-pack-renamed",
            "replay",
            lambda ev, w: [
                "verify",
                str(pack(ev, w, ev.attestation("m1"), "alice", name="m2")),
                *alice,
                ev.pub("alice"),
            ],
            expect="signed for label 'm1', not 'm2'",
        ),
        Forgery(
            "replay-pack-as-intoto",
            "replay",
            lambda ev, w: [
                "verify",
                str(_renamed(pack(ev, w, ev.attestation("m1"), "alice"), "m2.intoto.jsonl")),
                *alice,
                ev.pub("alice"),
            ],
            expect="signed for label 'm1', not 'm2'",
        ),
        Forgery(
            "replay-pack-renamed-reader",
            "replay",
            lambda ev, w: [
                "show",
                str(pack(ev, w, ev.attestation("m1"), "alice", name="m2")),
                *alice,
                ev.pub("alice"),
            ],
            expect="signed for label 'm1', not 'm2'",
        ),
    ]
    for number, name in enumerate(HOSTILE_NAMES):
        found.append(
            Forgery(
                f"escape-text-{number}",
                "escape",
                lambda ev, w, name=name: [
                    "diff",
                    str(ev.attestation("m2")),
                    str(with_path(ev, w, name)),
                    "--no-color",
                    *alice,
                    ev.pub("alice"),
                ],
                expect="",
                accepted=_no_escape,
            )
        )
        found.append(
            Forgery(
                f"escape-markdown-{number}",
                "escape",
                lambda ev, w, name=name: [
                    "diff",
                    str(ev.attestation("m2")),
                    str(with_path(ev, w, name)),
                    "--format",
                    "markdown",
                    *alice,
                    ev.pub("alice"),
                ],
                expect="",
                accepted=_markdown_inert,
            )
        )
    return found


def _renamed(path: Path, name: str) -> Path:
    return path.rename(path.with_name(name))


def _log_with(ev: Evidence, work: Path, attestation: bytes) -> list[str]:
    """``prov log`` of a store copy whose m2 entry names these attestation bytes."""
    copy = store_copy(ev, work)
    repoint(copy, "m2", attestation)
    return ["log", "--store", str(copy)]


def attempt(case: Forgery, ev: Evidence, work: Path) -> str:
    """ "" when the forgery was refused as the case says; else what went wrong."""
    args = case.build(ev, work)
    code, out, err, unexpected = run_cli(*args)
    if unexpected is not None:
        return f"crashed: {type(unexpected).__name__}: {unexpected}"
    if "Traceback" in err:
        return "printed a traceback"
    why = case.accepted(code, out, err) if case.accepted else None
    if why is not None or (code == 0 and case.exit_code != 0):
        return f"WRONGLY ACCEPTED: {why or 'exit 0'}"
    if code != case.exit_code and not (case.accepted and case.exit_code == 0):
        return f"exit {code}, not {case.exit_code}: {err.strip()[:300]}"
    if case.expect and not re.search(case.expect, out + err):
        return f"refused, but not with /{case.expect}/: {err.strip()[:300]}"
    return ""


def test_every_forgery_is_refused(evidence: Evidence, tmp_path: Path) -> None:
    tally: Counter[tuple[str, str]] = Counter()
    problems = []
    for number, case in enumerate(cases()):
        work = tmp_path / f"case-{number}"
        work.mkdir()
        problem = attempt(case, evidence, work)
        category = f"forgery:{case.klass}"
        tally[category, "cases tried"] += 1
        if not problem:
            tally[category, "refused"] += 1
        elif problem.startswith("WRONGLY"):
            tally[category, "wrongly accepted"] += 1
        else:
            tally[category, "refused for another reason"] += 1
        if problem:
            problems.append(f"{case.id}: {problem}")
            figures.note(category, f"{case.id}: {problem}")
    for (category, name), value in tally.items():
        figures.count(category, name, value)
    assert problems == [], "\n".join(problems)


def test_a_packed_tsa_chain_never_anchors_a_time_for_the_auditor(
    evidence: Evidence, tmp_path: Path
) -> None:
    """A pack whose timestamp comes from a TSA of the packer's choosing, its chain packed too:
    with the auditor's --key, the token is reported, not trusted (no "time-anchored ... by"
    whatever name the TSA took); only --trust-pack uses the packed chain, and says so."""
    if shutil.which("openssl") is None:
        pytest.skip("the TSA needs openssl: apt-get install openssl")
    from provenance._testing.tsa import LocalTSA
    from provenance.attest import timestamp

    attestation = tmp_path / "m1.intoto.jsonl"
    shutil.copy(evidence.attestation("m1"), attestation)
    with LocalTSA(name="Trusted Timestamping Authority of the Realm") as tsa:
        timestamp.stamp_dsse(attestation, tsa.url)
        args = ["pack", str(attestation), "-o", str(tmp_path / "m1.evidence.tar")]
        args += ["--store", str(evidence.store), "--key", evidence.pub("alice")]
        code, out, err, _ = run_cli(*args, "--tsa-certs", str(tsa.chain_pem))
        assert code == 0, err
    packed = str(tmp_path / "m1.evidence.tar")
    code, out, err, _ = run_cli("verify", packed, "--key", evidence.pub("alice"))
    figures.count("forgery:pack-trust", "cases tried", 1)
    assert code == 0, err
    anchored = "timestamp: time-anchored: existed no later than"
    if anchored in out:
        figures.count("forgery:pack-trust", "wrongly accepted", 1)
    assert anchored not in out and "not checked: pass --tsa-certs" in out, out
    figures.count("forgery:pack-trust", "refused", 1)
    code, out, err, _ = run_cli("verify", packed, "--trust-pack")
    assert code == 0, err
    assert "trusted from the pack (--trust-pack): TSA certificate sha256:" in out
    assert anchored in out and "Realm" in out
