"""What a signed statement may say, and how steps 3 and 4 check each kind (by predicateType).

``PREDICATES`` is the registry: one entry per predicateType prov verifies, each with how the
predicate is checked (step 4) and how its subject must name what it is about (step 5). A
snapshot's subject is the sha256 of its own canonical bytes, and every capture's digest is
recomputed from its content; a note's or a signed diff's subjects are the snapshots it speaks
of. A new kind of statement adds one function pair and one line here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from provenance._internal import canonical
from provenance.attest import statement as statements
from provenance.attest.statement import check_subject, subject_name
from provenance.errors import VerificationError
from provenance.model import (
    DIFF_PREDICATE_TYPE,
    NOTE_PREDICATE_TYPE,
    PREDICATE_TYPE,
    WITNESS_PREDICATE_TYPE,
    Capture,
    Note,
    Snapshot,
    Witness,
)

__all__ = [
    "PREDICATES",
    "Checked",
    "Predicate",
    "check_captures",
    "check_predicate",
    "check_schema",
    "check_statement",
]

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Checked:
    """What step 4 established: the kind of statement, and what it is about."""

    kind: str
    label: str
    """The label prov's file naming gives it (``LABEL.intoto.jsonl``, ``diff-A-B...``)."""
    about: tuple[tuple[str, str], ...]
    """(label, sha256) of every snapshot the statement speaks of."""
    detail: str
    snapshot: Snapshot | None = None
    note: Note | None = None


@dataclass(frozen=True)
class Predicate:
    statement: Callable[[statements.ParsedStatement], Checked]
    subject: Callable[[statements.ParsedStatement, Checked], str]
    named: bool
    """Whether a file name implies the label (notes and diffs are saved under any name)."""


def check_schema(predicate: dict[str, Any], schema: dict[str, Any]) -> None:
    """Raise VerificationError naming where a predicate first departs from its JSON Schema."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(predicate))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise VerificationError(
            f"the predicate does not match its schema at {where}: {error.message}"
        )


def check_predicate(parsed: statements.ParsedStatement) -> Snapshot:
    """A snapshot predicate: its schema, its model, and every capture's digest recomputed."""
    if parsed.predicate_type != PREDICATE_TYPE:
        raise VerificationError(
            f"unknown predicateType {parsed.predicate_type!r}",
            hint=f"prov verifies {', '.join(PREDICATES)} statements",
        )
    from provenance.model import snapshot_schema

    check_schema(parsed.predicate, snapshot_schema())
    try:
        snapshot = Snapshot.model_validate(parsed.predicate)
    except ValidationError as e:
        raise VerificationError("the predicate is not a valid snapshot", cause=str(e)) from e
    check_captures(snapshot)
    return snapshot


def check_captures(snapshot: Snapshot) -> int:
    """Recompute every capture's content digest; a signed digest is a claim like any other.

    ``prov diff`` and ``prov log`` compare captures by digest: one that kept an older
    capture's digest while its data and blobs changed would read as "no differences".
    """
    for capture in snapshot.captures:
        try:
            actual = _content_digest(capture)
        except canonical.CanonicalizationError:
            continue  # no canonical form: the subject check (step 5) refuses the whole snapshot
        if actual != capture.digest:
            raise VerificationError(
                f"capture {capture.source!r}: its digest {capture.digest} is not the digest "
                f"of its content ({actual})",
                cause="the capture's data, request, blobs or error changed, its digest did not",
                hint="the snapshot was altered before it was signed; do not rely on it",
            )
    return len(snapshot.captures)


def _content_digest(capture: Capture) -> str:
    return Capture.content_digest(
        capture.kind,
        capture.request,
        capture.data,
        [blob.model_dump(mode="json") for blob in capture.blobs],
        capture.error.model_dump(mode="json") if capture.error else None,
    )


def check_statement(parsed: statements.ParsedStatement) -> tuple[Predicate, Checked]:
    """Step 4: the predicateType is one prov verifies, and its predicate checks out."""
    predicate = PREDICATES.get(parsed.predicate_type)
    if predicate is None:
        raise VerificationError(
            f"unknown predicateType {parsed.predicate_type!r}: a foreign in-toto statement about "
            f"{statements.describe_subjects(parsed.subjects)}",
            cause="its envelope and signature are reported by the steps before this one",
            hint=f"prov verifies {', '.join(PREDICATES)} statements; `prov show FILE` reads "
            "this one, and a verifier for its predicate type checks what it claims",
        )
    return predicate, predicate.statement(parsed)


def _snapshot(parsed: statements.ParsedStatement) -> Checked:
    snapshot = check_predicate(parsed)
    return Checked(
        "snapshot",
        snapshot.label,
        (),  # its subject is itself (step 5), not another snapshot
        f"schema valid; {len(snapshot.captures)} capture digest(s) recomputed",
        snapshot=snapshot,
    )


def _snapshot_subject(parsed: statements.ParsedStatement, checked: Checked) -> str:
    return check_subject(parsed)


def _note(parsed: statements.ParsedStatement) -> Checked:
    try:
        note = Note.model_validate(parsed.predicate)
    except ValidationError as e:
        raise VerificationError("the predicate is not a valid note", cause=str(e)) from e
    about = ((note.snapshot.label, note.snapshot.sha256),)
    return Checked("note", note.snapshot.label, about, "a valid note", note=note)


def _diff(parsed: statements.ParsedStatement) -> Checked:
    predicate = parsed.predicate
    sides = [predicate.get(side) for side in ("a", "b")]
    if predicate.get("schema") != DIFF_PREDICATE_TYPE or not all(
        isinstance(s, dict)
        and isinstance(s.get("label"), str)
        and isinstance(s.get("sha256"), str)
        and _SHA256.match(s["sha256"])
        for s in sides
    ):
        raise VerificationError(
            f"the predicate is not a prov diff (schema {DIFF_PREDICATE_TYPE}, a and b snapshots)"
        )
    about = tuple((str(s["label"]), str(s["sha256"])) for s in sides if isinstance(s, dict))
    label = f"diff-{about[0][0]}-{about[1][0]}"
    return Checked("diff", label, about, f"a diff of {about[0][0]} -> {about[1][0]}")


def _about_subjects(parsed: statements.ParsedStatement, checked: Checked) -> str:
    """A note's or diff's subjects are exactly the snapshots it speaks of."""
    wanted = [
        {"name": subject_name(label), "digest": {"sha256": sha}} for label, sha in checked.about
    ]
    subjects = [s for s in parsed.subjects if isinstance(s, dict)]
    unique = [s for i, s in enumerate(wanted) if s not in wanted[:i]]
    if len(subjects) != len(unique) or any(s not in subjects for s in unique):
        raise VerificationError(
            f"the subject does not name the snapshot(s) the {checked.kind} is about",
            cause=f"subjects {subjects}; the {checked.kind} is about {list(checked.about)}",
            hint=f"the statement was not written by prov for this {checked.kind}",
        )
    names = ", ".join(f"{label} (sha256 {sha[:12]})" for label, sha in checked.about)
    return f"the subject names the snapshot(s) it is about: {names}"


def _witness(parsed: statements.ParsedStatement) -> Checked:
    from provenance.model import witness_schema

    check_schema(parsed.predicate, witness_schema())
    try:
        witness = Witness.model_validate(parsed.predicate)
    except ValidationError as e:
        raise VerificationError(
            "the predicate is not a valid witness statement", cause=str(e)
        ) from e
    about = ((witness.snapshot.label, witness.snapshot.sha256),)
    where = witness.vantage.operator + (
        f", {witness.vantage.region}" if witness.vantage.region else ""
    )
    detail = (
        f"a witness of {len(witness.witnessed)} capture(s) of {witness.snapshot.label} from {where}"
    )
    return Checked("witness", witness.snapshot.label, about, detail)


PREDICATES: dict[str, Predicate] = {
    PREDICATE_TYPE: Predicate(_snapshot, _snapshot_subject, named=True),
    NOTE_PREDICATE_TYPE: Predicate(_note, _about_subjects, named=False),
    DIFF_PREDICATE_TYPE: Predicate(_diff, _about_subjects, named=False),
    # Counted against its snapshot by ``verify.observers``; alone, it verifies like a note.
    WITNESS_PREDICATE_TYPE: Predicate(_witness, _about_subjects, named=False),
}
