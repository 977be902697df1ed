"""Property tests: no input makes a parser raise anything but prov's own errors.

The parsers are the config loader, the DSSE envelope parser and signature check, the statement
and predicate checks, the snapshot loader (``resolve``, ``verify``, the store index), and
canonical JSON, which must also round-trip and be idempotent (and agree with the reference
``rfc8785`` package wherever RFC 8785 is defined). Example counts come from the hypothesis profile
(conftest.py); every example run is counted in the reliability figures.
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import example, given
from hypothesis import strategies as st

from provenance import config
from provenance._internal import canonical
from provenance.attest import dsse, keys
from provenance.attest import statement as statements
from provenance.attest.statement import check_subject
from provenance.capture.base import validate_source
from provenance.errors import ConfigError, ProvError, VerificationError
from provenance.store.objects import Store
from provenance.verify.resolve import load, load_attestation
from provenance.verify.steps import check_predicate, verify
from tests.reliability import figures
from tests.reliability.evidence import Evidence
from tests.reliability.strategies import (
    edited_bytes,
    edited_json,
    envelope_documents,
    json_text,
    json_values,
    statement_documents,
    toml_documents,
    wild_json,
)


def ran(name: str) -> None:
    figures.count("properties", "examples run")
    figures.count("properties", name)


def printable(error: ProvError) -> None:
    """What the CLI would print must be printable (no lone surrogates from hostile input)."""
    error.diagnostics().encode("utf-8")


# -- canonical JSON ----------------------------------------------------------------------------


def same_json(parsed: Any, original: Any) -> bool:
    """Equal as JSON values. A float is a double: an integral one beyond 2**53 is written as
    the integer its shortest spelling names (RFC 8785, 3.2.2.3), which is the same double."""
    if isinstance(original, float):
        return type(parsed) in (int, float) and float(parsed) == original
    if isinstance(original, list):
        return (
            isinstance(parsed, list)
            and len(parsed) == len(original)
            and all(same_json(p, o) for p, o in zip(parsed, original, strict=True))
        )
    if isinstance(original, dict):
        return (
            isinstance(parsed, dict)
            and parsed.keys() == original.keys()
            and all(same_json(parsed[k], original[k]) for k in original)
        )
    return type(parsed) is type(original) and parsed == original


@given(json_values())
@example(5.130779512690062e16)
@example(2**64 + 1)
def test_canonical_json_round_trips_and_is_idempotent(value: Any) -> None:
    ran("canonical: round trip")
    data = canonical.dumps(value)
    again = canonical.loads(data)
    assert same_json(again, value)
    assert canonical.dumps(again) == data
    # Parsing a non-canonical spelling gives the same canonical bytes.
    assert canonical.dumps(json.loads(json.dumps(value, indent=1))) == data


_IN_RFC_DOMAIN = json_values(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
)


@given(_IN_RFC_DOMAIN)
@example({"\U0001f600": 1, "\ue000": 2, "a": 3})  # key order by UTF-16 code units, not code points
@example([1e21, 1e-7, 5e-324, -0.0, 0.1, 123456789012345680000.0])
def test_canonical_json_matches_the_reference_implementation(value: Any) -> None:
    ran("canonical: equals rfc8785")
    assert canonical.dumps(value) == rfc8785.dumps(value)


@given(
    wild_json | st.dictionaries(st.integers(), st.integers(), max_size=2) | st.sets(st.integers())
)
def test_canonical_dumps_raises_only_its_own_error(value: Any) -> None:
    ran("canonical: dumps of anything")
    with contextlib.suppress(canonical.CanonicalizationError):
        canonical.loads(canonical.dumps(value))


@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
@example(b"[" * 100_000)
@example(b'{"a":1,"a":1}')
@example(b"1e999")
@example(b"1" * 5000)
def test_canonical_loads_raises_only_its_own_error(data: bytes) -> None:
    ran("canonical: loads of anything")
    with contextlib.suppress(canonical.CanonicalizationError):
        canonical.loads(data)


# -- prov.toml ---------------------------------------------------------------------------------


def _check_config(text: str, strict: bool = False) -> None:
    try:
        parsed = config.parse(text, Path("prov.toml"))
        for spec in parsed.sources:
            validate_source(spec)
    except ConfigError as e:
        assert "prov.toml" in e.message  # every complaint names the file
        printable(e)
        if strict:
            raise


@given(toml_documents())
def test_config_shaped_text_raises_only_config_errors(text: str) -> None:
    ran("config: shaped documents")
    _check_config(text)


@given(st.text(max_size=300))
@example("a = " + "[" * 5000 + "]" * 5000)
@example("[defaults]\ntimeout = inf\n")
def test_any_text_raises_only_config_errors(text: str) -> None:
    ran("config: any text")
    _check_config(text)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[defaults]\ntimeout = inf\n", 2),
        ('[[sources]]\nname = "a"\nkind = "git"\nrepo = "."\ntimeout = nan\n', 5),
    ],
)
def test_an_unbounded_timeout_is_refused(text: str, line: int) -> None:
    """A timeout of inf (or nan) would let a hostile server hold a capture forever."""
    with pytest.raises(ConfigError, match=f"prov.toml:{line}: .*finite number"):
        _check_config(text, strict=True)


VALID_TOML = config.TEMPLATE + '\n[[sources]]\nname = "other"\nkind = "git"\nrepo = "../x"\n'


@given(edited_bytes(VALID_TOML.encode()))
def test_edited_config_raises_only_config_errors(data: bytes) -> None:
    ran("config: edits of a valid file")
    _check_config(data.decode("utf-8", "replace"))


# -- envelopes, statements, predicates ---------------------------------------------------------


@pytest.fixture(scope="module")
def real(evidence: Evidence) -> dict[str, Any]:
    return {
        "envelope": evidence.attestation("m1").read_bytes(),
        "payload": evidence.payload("m1"),
        "statement": evidence.statement("m1"),
        "keys": [keys.load_verifier(Path(evidence.pub(name))) for name in ("alice", "bob")],
    }


def _envelope_inputs(real: dict[str, Any]) -> st.SearchStrategy[bytes]:
    payloads = st.just(real["payload"]) | st.binary(max_size=40)
    return (
        st.binary(max_size=300)
        | envelope_documents(payloads).map(lambda d: json.dumps(d).encode())
        | edited_bytes(real["envelope"])
    )


def test_envelope_parser_and_signature_check_raise_only_verification_errors(
    real: dict[str, Any],
) -> None:
    @given(_envelope_inputs(real), st.integers(1, 3))
    @example(b"[" * 100_000, 1)
    @example(b'{"payload":"","payloadType":"\\ud800","signatures":[{"sig":"AAAA"}]}', 1)
    @example(b"\xff\xfe{\x00}\x00", 1)
    def check(data: bytes, threshold: int) -> None:
        ran("envelope: parse and verify signatures")
        try:
            envelope = dsse.parse(data)
            dsse.verify(envelope, real["keys"], threshold)
        except VerificationError as e:
            printable(e)

    check()


def _statement_inputs(real: dict[str, Any]) -> st.SearchStrategy[bytes]:
    statement = real["statement"]
    predicates = edited_json(statement["predicate"])
    return (
        st.binary(max_size=200)
        | statement_documents(predicates).map(lambda d: json.dumps(d).encode())
        | edited_json(statement).map(lambda d: json.dumps(d).encode())
        | edited_bytes(real["payload"])
    )


def test_statement_and_predicate_checks_raise_only_verification_errors(
    real: dict[str, Any],
) -> None:
    @given(_statement_inputs(real))
    @example(real["payload"].replace(b'"dirty":false', b'"dirty":1e999'))
    @example(real["payload"].replace(b'"dirty":false', b'"dirty":"\\udc00"'))
    @example(real["payload"].replace(b'"dirty":false', b'"dirty":' + b"[" * 5000 + b"]" * 5000))
    def check(payload: bytes) -> None:
        ran("statement: parse, schema, subject")
        try:
            parsed = statements.parse(payload)
            check_predicate(parsed)
            check_subject(parsed)
        except VerificationError as e:
            printable(e)

    check()


# -- the snapshot loader: files and the store index -------------------------------------------


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tmp_path_factory.mktemp("loader")


def _signed_envelopes(real: dict[str, Any], evidence: Evidence) -> st.SearchStrategy[bytes]:
    """Statements really signed by alice: the loader's later steps see them, not just step 2."""
    signer = evidence.signer("alice")

    def sign(payload: bytes) -> bytes:
        envelope = dsse.sign(statements.PAYLOAD_TYPE, payload, [signer])
        return envelope.to_json() + b"\n"

    return _statement_inputs(real).map(sign)


def test_loading_any_attestation_file_raises_only_prov_errors(
    real: dict[str, Any], evidence: Evidence, scratch: Path
) -> None:
    store = Store(evidence.store)

    @given(_envelope_inputs(real) | _signed_envelopes(real, evidence), st.booleans())
    def check(data: bytes, with_store: bool) -> None:
        ran("loader: attestation files")
        path = scratch / "m1.intoto.jsonl"
        path.write_bytes(data)
        for attempt in (
            lambda: load_attestation(path),
            lambda: verify(
                path, real["keys"], store=store if with_store else None, expect_label="m1"
            ),
        ):
            try:
                attempt()
            except ProvError as e:
                printable(e)

    check()


def _index_entries(evidence: Evidence) -> st.SearchStrategy[bytes]:
    entry = json.loads(next((evidence.store / "snapshots").glob("*.json")).read_text())
    return (
        edited_json(entry).map(lambda d: json.dumps(d).encode())
        | st.binary(max_size=100)
        | edited_bytes(json.dumps(entry).encode())
    )


def test_the_store_index_and_references_raise_only_prov_errors(
    evidence: Evidence, scratch: Path
) -> None:
    import shutil

    root = scratch / "store"
    shutil.copytree(evidence.store, root)
    store = Store(root)
    index = sorted((root / "snapshots").glob("*.json"))

    @given(
        st.lists(_index_entries(evidence), min_size=1, max_size=2),
        st.sampled_from(["m1", "m2", "m", "", "0000000", "\x00", "../m1"]) | json_text,
    )
    def check(entries: list[bytes], reference: str) -> None:
        ran("loader: store index and references")
        for path, data in zip(index, entries, strict=False):
            path.write_bytes(data)
        try:
            load(reference, store)
        except ProvError as e:
            printable(e)

    check()


def test_base64_fields_decode_exactly_what_was_encoded() -> None:
    @given(st.binary(max_size=100), st.booleans(), st.booleans(), st.integers(0, 80))
    def check(data: bytes, urlsafe: bool, padded: bool, wrap: int) -> None:
        ran("envelope: base64 spellings")
        text = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode()
        text = text if padded else text.rstrip("=")
        if wrap:
            text = "\n".join(text[i : i + wrap] for i in range(0, len(text), wrap))
        document = {"payload": text, "payloadType": "x", "signatures": []}
        assert dsse.parse(json.dumps(document).encode()).payload == data

    check()
