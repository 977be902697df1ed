"""Canonical JSON: byte-identical to the rfc8785 package, whichever internal path runs.

The vectors are RFC 8785's (the reference implementation's testdata and Appendix B's numbers),
written here from the spec. The one deliberate divergence, integers past 2**53, is tested as such.
"""

from __future__ import annotations

import enum
import json
import math
import struct
import sys
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from provenance._internal import canonical
from provenance.attest import statement
from provenance.model import Capture, Snapshot

# RFC 8785 testdata: (input JSON text, canonical output).
VECTORS = {
    "arrays": (
        '[\n  56,\n  {\n    "d": true,\n    "10": null,\n    "1": [ ]\n  }\n]',
        '[56,{"1":[],"10":null,"d":true}]',
    ),
    "french": (
        '{\n  "peach": "This sorting order",\n  "p\u00e9ch\u00e9": "is wrong according to French",'
        '\n  "p\u00eache": "but canonicalization MUST",\n  "sin":   "ingnore locale"\n}\n',
        '{"peach":"This sorting order","p\u00e9ch\u00e9":"is wrong according to French",'
        '"p\u00eache":"but canonicalization MUST","sin":"ingnore locale"}',
    ),
    "structures": (
        '{\n  "1": {"f": {"f": "hi","F": 5} ,"\\n": 56.0},\n  "10": { },\n  "": "empty",\n'
        '  "a": { },\n  "111": [ { } ],\n  "A": { }\n}',
        '{"":"empty","1":{"\\n":56,"f":{"F":5,"f":"hi"}},"10":{},"111":[{}],"A":{},"a":{}}',
    ),
    "unicode": (
        '{\n  "Unnormalized Unicode":"\\u1e0d\\u0307"\n}\n',
        '{"Unnormalized Unicode":"\u1e0d\u0307"}',
    ),
    "values": (
        '{\n  "numbers": [1E30, 4.50, 333333333.33333329, 2e-3, 0.000000000000000000000000001],\n'
        '  "escaping": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n'
        '  "literals": [null, true, false]\n}',
        '{"escaping":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/","literals":[null,true,false],'
        '"numbers":[1e+30,4.5,333333333.3333333,0.002,1e-27]}',
    ),
    "weird": (
        '{\n  "\\u20ac": "Euro Sign",\n  "1": "One",\n  "\\u0080": "Control\\u007f",\n'
        '  "\\ud83d\\ude02": "Smiley",\n  "\\u00f6": "Latin Small Letter O With Diaeresis",\n'
        '  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "</script>": "Browser Challenge"\n}\n',
        '{"1":"One","</script>":"Browser Challenge","\u0080":"Control\u007f",'
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",'
        '"\U0001f602":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    ),
}

# RFC 8785 Appendix B: IEEE 754 bit patterns and their ECMAScript spelling.
NUMBERS = {
    0x0000000000000000: "0",
    0x8000000000000000: "0",
    0x0000000000000001: "5e-324",
    0x8000000000000001: "-5e-324",
    0x7FEFFFFFFFFFFFFF: "1.7976931348623157e+308",
    0xFFEFFFFFFFFFFFFF: "-1.7976931348623157e+308",
    0x4340000000000000: "9007199254740992",
    0xC340000000000000: "-9007199254740992",
    0x4430000000000000: "295147905179352830000",
    0x44B52D02C7E14AF5: "9.999999999999997e+22",
    0x44B52D02C7E14AF6: "1e+23",
    0x44B52D02C7E14AF7: "1.0000000000000001e+23",
    0x444B1AE4D6E2EF4E: "999999999999999700000",
    0x444B1AE4D6E2EF4F: "999999999999999900000",
    0x444B1AE4D6E2EF50: "1e+21",
    0x3EB0C6F7A0B5ED8C: "9.999999999999997e-7",
    0x3EB0C6F7A0B5ED8D: "0.000001",
    0x41B3DE4355555553: "333333333.3333332",
    0x41B3DE4355555554: "333333333.33333325",
    0x41B3DE4355555555: "333333333.3333333",
    0x41B3DE4355555556: "333333333.3333334",
    0x41B3DE4355555557: "333333333.33333343",
    0xBECBF647612F3696: "-0.0000033333333333333333",
    0x43143FF3C1CB0959: "1424953923781206.2",
}


def _float(bits: int) -> float:
    value: float = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
    return value


def _reference(value: Any) -> bytes:
    """The module's letter-of-the-RFC encoder, bypassing every fast path."""
    parts: list[str] = []
    canonical._encode(value, parts)
    return "".join(parts).encode()


@pytest.fixture(params=["orjson", "stdlib"])
def encoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the fast path on orjson, then on the standard library's encoder."""
    if request.param == "stdlib":
        monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson -> ImportError
        monkeypatch.setattr(canonical, "_ORJSON", None)  # forget the orjson found before
    return str(request.param)


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_rfc8785_testdata(name: str, encoder: str) -> None:
    source, expected = VECTORS[name]
    document = json.loads(source)
    assert canonical.dumps(document) == expected.encode()
    assert rfc8785.dumps(document) == expected.encode()


@pytest.mark.parametrize("bits", sorted(NUMBERS))
def test_rfc8785_numbers(bits: int, encoder: str) -> None:
    number = _float(bits)
    assert canonical.format_number(number) == NUMBERS[bits]
    assert canonical.dumps({"n": [number]}) == rfc8785.dumps({"n": [number]})
    assert canonical.dumps({"n": [number]}) == b'{"n":[%s]}' % NUMBERS[bits].encode()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_refused_not_written_as_null(bad: float, encoder: str) -> None:
    with pytest.raises(canonical.CanonicalizationError):
        canonical.dumps({"loss": [1.5, bad]})


def test_integers_past_2_53_are_exact_where_rfc8785_refuses(encoder: str) -> None:
    # The deliberate divergence: a provenance record never rounds a number.
    for big in (2**53, 2**53 + 1, -(2**53) - 1, 2**64 + 7, 10**30 + 1):
        assert canonical.dumps({"n": big}) == b'{"n":%d}' % big
        with pytest.raises(rfc8785.IntegerDomainError):
            rfc8785.dumps({"n": big})
    safe = 2**53 - 1
    assert canonical.dumps({"n": [safe, -safe]}) == rfc8785.dumps({"n": [safe, -safe]})


def test_keys_must_be_strings(encoder: str) -> None:
    with pytest.raises(canonical.CanonicalizationError):
        canonical.dumps({1: "a", 2: "b"})


def test_lone_surrogates_are_refused(encoder: str) -> None:
    with pytest.raises(canonical.CanonicalizationError):
        canonical.dumps({"s": "\ud800"})


def test_user_text_that_looks_like_a_float_placeholder_is_left_alone(encoder: str) -> None:
    # The fast path swaps floats for marked strings; text can never be mistaken for one.
    floats = canonical._Floats()
    lookalike = f"{floats.marker}1e-05\x00"
    document = {"a": 1e-05, "b": "\x001e-05\x00", "c": [lookalike, 3.0], "d": "\x00" * 3}
    assert canonical.dumps(document) == _reference(document)
    assert canonical.dumps(document) == rfc8785.dumps(document)


def test_int_subclasses_bools_and_tuples(encoder: str) -> None:
    class Level(enum.IntEnum):
        HIGH = 3

    document = {"level": Level.HIGH, "flags": (True, False, None), "x": [0.5, (1.0, 2)]}
    assert canonical.dumps(document) == b'{"flags":[true,false,null],"level":3,"x":[0.5,[1,2]]}'


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_documents = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(), children, max_size=6)
    ),
    max_leaves=60,
)


@settings(max_examples=400, deadline=None)
@given(document=json_documents)
def test_randomized_documents_match_rfc8785(document: Any) -> None:
    expected = rfc8785.dumps(document)
    assert canonical.dumps(document) == expected
    assert _reference(document) == expected


@settings(max_examples=300, deadline=None)
@given(bits=st.integers(min_value=0, max_value=2**64 - 1))
def test_randomized_float_bit_patterns_match_rfc8785(bits: int) -> None:
    number = _float(bits)
    if math.isnan(number) or math.isinf(number):
        return
    document = {"x": number, "xs": [number, -number, number / 3]}
    assert canonical.dumps(document) == rfc8785.dumps(document)


def test_stdlib_fast_path_matches_on_randomized_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "orjson", None)
    monkeypatch.setattr(canonical, "_ORJSON", None)

    @settings(max_examples=150, deadline=None)
    @given(document=json_documents)
    def check(document: Any) -> None:
        assert canonical.dumps(document) == rfc8785.dumps(document)

    check()


def test_statement_splice_equals_full_canonicalisation() -> None:
    capture = Capture(
        source="s",
        kind="git",
        tool_version="0",
        started="2026-08-21T00:00:00Z",
        ended="2026-08-21T00:00:01Z",
        request={"repo": "r", "lr": 3e-4},
        status="ok",
        data={"weights": [0.25, 1.0, 1e-7], "steps": 390251},
        digest="blake3:" + "0" * 64,
    )
    snapshot = Snapshot(label="step-1", created="2026-08-21T00:00:02Z", captures=(capture,))
    whole = {
        "_type": statement.STATEMENT_TYPE,
        "subject": [{"name": "prov-snapshot:step-1", "digest": {"sha256": snapshot.sha256().hex}}],
        "predicateType": "https://prov.dev/snapshot/v1",
        "predicate": snapshot.model_dump(mode="json"),
    }
    assert statement.build(snapshot) == canonical.dumps(whole) == rfc8785.dumps(whole)


# -- the direct path (orjson's bytes, floats re-spelled) -----------------------------------------


def test_the_direct_path_is_live() -> None:
    """Otherwise every test above would pass through the slower paths and prove nothing of it."""
    assert canonical._orjson() is not None
    document = {"lr": 3e-4, "steps": 3.0, "tiny": 2.5e-6, "big": 1e17, "zero": -0.0, "s": "a"}
    assert canonical._direct(document) == rfc8785.dumps(document)


@settings(max_examples=400, deadline=None)
@given(document=st.lists(json_documents, max_size=4) | st.dictionaries(st.text(), json_documents))
def test_each_path_matches_rfc8785_or_declines(document: Any) -> None:
    """Whichever path ``dumps`` would take, each one alone gives rfc8785's bytes or None."""
    expected = rfc8785.dumps(document)
    for path in (canonical._direct, canonical._fast):
        produced = path(document)
        assert produced is None or produced == expected, path.__name__


@settings(max_examples=300, deadline=None)
@given(bits=st.lists(st.integers(min_value=0, max_value=2**64 - 1), min_size=1, max_size=8))
def test_direct_path_floats_match_rfc8785(bits: list[int]) -> None:
    numbers = [n for n in map(_float, bits) if not (math.isnan(n) or math.isinf(n))]
    document = {"xs": numbers, "m": {"a": numbers[:1]}}
    produced = canonical._direct(document)
    assert produced is not None
    assert produced == rfc8785.dumps(document)


@pytest.mark.parametrize(
    "text",
    ["1.0,2.0", "[3.0]", "{x: 4.0}", ":1e-6,", "[2e+17]", "-0.0,", "v1.0}"],
)
def test_text_shaped_like_a_rewritten_float_is_left_alone(text: str) -> None:
    """Strings holding what the float rewrites look for send the document to the walk."""
    document = {"note": text, "value": 3.0, "small": 1.5e-6, text: [text]}
    assert canonical._direct(document) is None
    assert canonical.dumps(document) == rfc8785.dumps(document)


def test_an_escape_before_an_exponent_shape_is_not_a_number() -> None:
    # "\x1e-6]" is written "\u001e-6]": hex digits then "e-6", inside a string.
    document = {"s": "\x1e-6]", "t": ["\x1e+17,"], "n": [1.5e-6, 1e17]}
    assert canonical._direct(document) == rfc8785.dumps(document)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_next_to_null_is_refused(bad: float) -> None:
    """orjson writes NaN as null; marshal's bytes show it was not None."""
    with pytest.raises(canonical.CanonicalizationError):
        canonical.dumps({"loss": [None, 1.5, bad], "x": None})


def test_nulls_without_nan_stay_on_the_direct_path() -> None:
    document = {"a": None, "b": [None, 1.0, 0.25], "c": {"d": None}}
    assert canonical._direct(document) == rfc8785.dumps(document)


def test_types_only_orjson_knows_are_refused_as_the_reference_refuses_them() -> None:
    import dataclasses
    import datetime
    import uuid

    import orjson

    class Colour(enum.Enum):
        RED = 1

    @dataclasses.dataclass
    class Point:
        x: int

    for odd in (
        Colour.RED,
        uuid.UUID(int=7),
        datetime.date(2026, 8, 18),
        Point(1),
        orjson.Fragment(b"1"),
        b"bytes",
        {1, 2},
    ):
        assert canonical._direct({"v": [odd]}) is None
        with pytest.raises(canonical.CanonicalizationError):
            canonical.dumps({"v": [odd]})


def test_subclasses_and_keys_outside_the_bmp_take_the_walk() -> None:
    class Level(enum.IntEnum):
        HIGH = 3

    class Name(str):
        pass

    for document in (
        {"level": Level.HIGH},
        {Name("k"): 1.0},
        {"\U0001f600": 1, "\uffff": 2},
        {"a": "\U0001f600"},
        {"n": 2**64 + 1},
    ):
        assert canonical._direct(document) is None
        assert canonical.dumps(document) == _reference(document)
