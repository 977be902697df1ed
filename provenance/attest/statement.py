"""in-toto Statement v1 around a snapshot, serialised once as canonical JSON.

The subject is the snapshot itself, digested with sha256 over its canonical bytes: sigstore, cosign
and ``gh attestation verify`` accept only SHA-2/SHA-3 subject digests. The blake3 addresses of
everything captured live inside the predicate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from provenance._internal import canonical
from provenance.digest import sha256_bytes
from provenance.errors import VerificationError
from provenance.model import PREDICATE_TYPE, Snapshot

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"


def subject_name(label: str) -> str:
    return f"prov-snapshot:{label}"


def build(snapshot: Snapshot) -> bytes:
    """The statement bytes that get signed and stored.

    Equal to ``canonical.dumps`` of the whole statement (a test checks it), but the snapshot's
    canonical bytes, already computed for the subject digest, are spliced in rather than encoded
    a second time: RFC 8785 orders the four keys ``_type`` < ``predicate`` < ``predicateType`` <
    ``subject``, and a canonical member is the same bytes wherever it sits.
    """
    subject = [{"name": subject_name(snapshot.label), "digest": {"sha256": snapshot.sha256().hex}}]
    return b"".join(
        (
            b'{"_type":',
            canonical.dumps(STATEMENT_TYPE),
            b',"predicate":',
            snapshot.canonical_bytes(),
            b',"predicateType":',
            canonical.dumps(PREDICATE_TYPE),
            b',"subject":',
            canonical.dumps(subject),
            b"}",
        )
    )


@dataclass(frozen=True)
class ParsedStatement:
    raw: dict[str, Any]
    subjects: list[dict[str, Any]]
    predicate_type: str
    predicate: dict[str, Any]


def parse(payload: bytes) -> ParsedStatement:
    """Parse statement bytes and check the in-toto v1 shape (with the reference library)."""
    try:
        raw = canonical.loads(payload)
    except ValueError as e:
        raise VerificationError("the payload is not JSON", cause=str(e)) from e
    if not isinstance(raw, dict):
        raise VerificationError("the payload is not a JSON object")
    if raw.get("_type") != STATEMENT_TYPE:
        raise VerificationError(
            f"the statement type is {raw.get('_type')!r}, not {STATEMENT_TYPE!r}",
            hint="prov verifies in-toto Statement v1 attestations",
        )
    subjects = raw.get("subject")
    predicate = raw.get("predicate")
    predicate_type = raw.get("predicateType")
    if (
        not isinstance(subjects, list)
        or not isinstance(predicate, dict)
        or not isinstance(predicate_type, str)
    ):
        raise VerificationError("the statement lacks subject, predicateType or predicate")
    _validate_with_reference(subjects, predicate_type)
    return ParsedStatement(raw, subjects, predicate_type, predicate)


def _validate_with_reference(subjects: list[Any], predicate_type: str) -> None:
    # in-toto-attestation validates through protobuf, whose Struct turns integers into floats:
    # give it the subjects and the type only, never our predicate.
    from google.protobuf.json_format import ParseDict, ParseError
    from in_toto_attestation.v1 import resource_descriptor_pb2, statement

    try:
        descriptors = [ParseDict(s, resource_descriptor_pb2.ResourceDescriptor()) for s in subjects]
        statement.Statement(descriptors, predicate_type, {"_": 1}).validate()
    except (ParseError, ValueError, TypeError) as e:
        raise VerificationError(
            "the statement is not a valid in-toto Statement v1", cause=str(e)
        ) from e


def describe_subjects(subjects: list[dict[str, Any]], most: int = 3) -> str:
    """``name (alg:hex), ...`` for a reader: what a statement is about."""
    parts = []
    for subject in subjects[:most]:
        digest = subject.get("digest")
        digests: dict[str, Any] = digest if isinstance(digest, dict) else {}
        named = ", ".join(f"{alg}:{value}" for alg, value in sorted(digests.items()))
        parts.append(f"{subject.get('name') or subject.get('uri') or '?'} ({named or 'no digest'})")
    more = f" and {len(subjects) - most} more" if len(subjects) > most else ""
    return "; ".join(parts) + more


def wrap(subjects: list[dict[str, Any]], predicate_type: str, predicate: dict[str, Any]) -> bytes:
    """Statement bytes for any predicate (diffs, notes) about the given subjects."""
    statement = {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": predicate_type,
        "predicate": predicate,
    }
    return canonical.dumps(statement)


def check_subject(parsed: ParsedStatement) -> str:
    # The subject digest is defined over the canonical form of the predicate, which is unique:
    # canonicalising the parsed predicate gives exactly the bytes that were hashed at signing.
    try:
        actual = sha256_bytes(canonical.dumps(parsed.predicate))
    except canonical.CanonicalizationError as e:
        raise VerificationError("the snapshot has no canonical form", cause=str(e)) from e
    claimed = [s.get("digest", {}).get("sha256") for s in parsed.subjects if isinstance(s, dict)]
    if actual.hex not in claimed:
        raise VerificationError(
            "the subject digest does not match the snapshot",
            cause=f"subject sha256 {', '.join(map(str, claimed))}; snapshot sha256 {actual.hex}",
        )
    # The subject names the label it was signed for; a statement that names another is not one
    # prov wrote, and would let the label a reader sees differ from the one inside.
    name = subject_name(str(parsed.predicate.get("label")))
    names = [
        s.get("name")
        for s in parsed.subjects
        if isinstance(s, dict) and s.get("digest", {}).get("sha256") == actual.hex
    ]
    if name not in names:
        raise VerificationError(
            f"the subject is named {', '.join(map(repr, names))}, not {name!r}",
            hint="the statement was not written by prov for this snapshot",
        )
    return f"subject sha256 {actual.hex} matches the canonical snapshot"
