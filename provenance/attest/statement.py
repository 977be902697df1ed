"""in-toto Statement v1 around a snapshot, serialised once as canonical JSON.

The subject is the snapshot itself, digested with sha256 over its canonical bytes: sigstore, cosign
and ``gh attestation verify`` accept only SHA-2/SHA-3 subject digests. The blake3 addresses of
everything captured live inside the predicate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from provenance._internal import canonical
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


def wrap(subjects: list[dict[str, Any]], predicate_type: str, predicate: dict[str, Any]) -> bytes:
    """Statement bytes for any predicate (diffs, notes) about the given subjects."""
    statement = {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": predicate_type,
        "predicate": predicate,
    }
    return canonical.dumps(statement)
