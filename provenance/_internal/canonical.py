"""Canonical JSON (RFC 8785, the JSON Canonicalization Scheme).

The bytes this module produces are what prov hashes and signs, so they must be the same on every
machine and every run. Two deliberate choices:

* Integers are written exactly, whatever their size. RFC 8785 assumes IEEE doubles and would round
  535,477,106,688-scale values only past 2**53, but a provenance record must never change a number,
  so an integer above 2**53 is written as its exact decimal digits (as every JSON parser reads it).
* A C encoder writes RFC 8785 bytes for everything but some floats (sorted keys, minimal
  separators, the same string escapes) as long as no key lies outside the Basic Multilingual
  Plane (Python sorts by code point, RFC 8785 by UTF-16 code unit).

Three paths, the first that can vouch for a document wins (tests/unit/core/test_canonical.py
holds each to the ``rfc8785`` package, byte for byte):

1. ``_direct``: orjson writes the whole document once; the float spellings that differ from
   ECMAScript's (``3.0`` for ``3``, ``1e-6`` and ``1e+16``..``1e+20`` for positional digits) are
   rewritten in the bytes. What orjson cannot be trusted with is ruled out at C speed, without
   walking the document in Python: ``marshal`` refuses every type but the exact built-ins, and
   its bytes show whether a float is NaN or infinite (orjson would write ``null``) and whether a
   string holds text a rewrite would touch.
2. ``_fast``: a Python walk checks types and keys and swaps each float whose spelling differs for
   a marked placeholder; a C encoder writes the document and the numbers are put back.
3. ``_encode``: the reference encoder, which follows the RFC to the letter.
"""

from __future__ import annotations

import json
import marshal
import math
import re
import secrets
from typing import Any

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


class CanonicalizationError(ValueError):
    """The value cannot be represented in canonical JSON (NaN, infinity, a lone surrogate...)."""


def dumps(value: Any) -> bytes:
    """Serialise ``value`` to RFC 8785 canonical JSON bytes."""
    if type(value) in _CONTAINERS:
        direct = _direct(value)
        if direct is not None:
            return direct
    try:
        fast = _fast(value)
    except RecursionError as e:
        raise CanonicalizationError("the document is nested too deeply") from e
    if fast is not None:
        return fast
    parts: list[str] = []
    try:
        _encode(value, parts)
    except RecursionError as e:
        raise CanonicalizationError("the document is nested too deeply") from e
    return _utf8("".join(parts))


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise CanonicalizationError(f"string is not valid Unicode: {e}") from e


_CONTAINERS = (dict, list, tuple)
# In orjson's output, a number token is always followed by one of these (a document whose top is
# a container): the rewrites below anchor on them.
_INTEGRAL = re.compile(rb"\.0(?=[,\]}])")  # "3.0": ECMAScript writes "3"
_NEGATIVE_ZERO = re.compile(rb"-0\.0(?=[,\]}])")  # "-0.0": ECMAScript writes "0"
_EXPONENT = re.compile(rb"e(?:-6|\+1[6-9]|\+20)(?=[,\]}])")  # positional in ECMAScript
# The same shapes as raw text: found in marshal's bytes, they may be inside a string (two
# patterns, not one alternation: a literal prefix keeps each search at memory speed).
_INTEGRAL_TEXT = re.compile(rb"\.0[,\]}]")
_EXPONENT_TEXT = re.compile(rb"e(?:-6|\+1[6-9]|\+20)[,\]}]")
# marshal (version 2) writes a float as "g" and 8 little-endian bytes; NaN and the infinities
# have every exponent bit set. A match may be a false alarm, never a miss.
_NOT_FINITE = re.compile(rb"g[\x00-\xff]{6}[\xf0-\xff][\x7f\xff]")
_NUMBER_BYTES = frozenset(b"0123456789.-")
_BEFORE_NUMBER = frozenset(b":,[")
_BELOW_F0 = bytes(range(0xF0))  # deleted by translate: what is left are 4-byte UTF-8 leads


def _direct(value: Any) -> bytes | None:
    """orjson's bytes with ECMAScript's float spellings, or None when that cannot be vouched for.

    Conditions, each checked in C: ``marshal`` accepts the document (exact dict, list, tuple,
    str, int, float, bool, None: no Enum, UUID, subclass, orjson.Fragment...), orjson encodes it
    (string keys, integers within 64 bits, no lone surrogate), no 4-byte UTF-8 sequence appears
    (keys outside the BMP sort differently), no float is NaN or infinite, and no string holds a
    shape the float rewrites would change. orjson's spellings are checked once per process
    (``_orjson_spells_as_expected``).
    """
    orjson = _orjson()
    if orjson is None:
        return None
    try:
        marshalled = marshal.dumps(value, 2)
        data: bytes = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (ValueError, TypeError):  # a type marshal or orjson refuses, too deep, too big
        return None
    if not data.isascii() and data.translate(None, _BELOW_F0):
        return None
    if b"null" in data and _NOT_FINITE.search(marshalled):
        return None
    if _INTEGRAL_TEXT.search(marshalled):
        return None
    if b"-0.0" in data:
        data = _NEGATIVE_ZERO.sub(b"0", data)
    data = _INTEGRAL.sub(b"", data)
    if _EXPONENT.search(data):
        if _EXPONENT_TEXT.search(marshalled):
            return None
        data = _respell_exponents(data)
    return data


def _respell_exponents(data: bytes) -> bytes:
    parts = []
    last = 0
    for match in _EXPONENT.finditer(data):
        start = match.start()
        while start and data[start - 1] in _NUMBER_BYTES:
            start -= 1
        if not start or data[start - 1] not in _BEFORE_NUMBER:
            continue  # the hex digits of a "\u001e" escape inside a string, not a number
        parts.append(data[last:start])
        parts.append(format_number(float(data[start : match.end()])).encode())
        last = match.end()
    parts.append(data[last:])
    return b"".join(parts)


_ORJSON: Any = None


def _orjson() -> Any:
    """orjson, if installed and spelling floats as ``_direct`` expects (checked once)."""
    global _ORJSON
    if _ORJSON is None:
        try:
            import orjson
        except ImportError:
            _ORJSON = False
        else:
            _ORJSON = orjson if _orjson_spells_as_expected(orjson) else False
    return _ORJSON or None


def _orjson_spells_as_expected(orjson: Any) -> bool:
    """Exponents around every switch of notation, both ends of the mantissa, integral and
    fractional values: after the rewrites, orjson's spelling must be ECMAScript's. A future
    orjson that spells differently turns the direct path off rather than changing a hash."""
    samples = [0.5, 3.0, 10.0, 1e15, 123456.789, 2.0**53, 5e-324, 1.7976931348623157e308]
    # Every exponent where either spelling switches notation, and a few far from them.
    for exponent in (*range(-9, 25), -323, -308, -100, -30, 30, 100, 300, 308):
        for mantissa in ("1", "1.5", "9.999999999999998"):
            number = float(f"{mantissa}e{exponent}")
            if number and not math.isinf(number):
                samples.append(number)
    samples += [-number for number in samples]
    data = orjson.dumps([*samples, 0.0, -0.0])
    rewritten = _INTEGRAL.sub(b"", _NEGATIVE_ZERO.sub(b"0", data))
    if _EXPONENT.search(rewritten):
        rewritten = _respell_exponents(rewritten)
    expected = "[" + ",".join(map(format_number, samples)) + ",0,0]"
    return bool(rewritten == expected.encode())


class _Unsupported(Exception):
    """The fast path cannot vouch for this value; the reference encoder decides."""


class _Floats:
    """Placeholders for the floats the C encoder would spell differently from ECMAScript."""

    def __init__(self) -> None:
        # A fresh random marker per call: a document cannot anticipate it, and the count of
        # markers in the output is checked, so user text can never be taken for a number.
        self.marker = "\x00" + secrets.token_hex(8)
        self.count = 0
        self._spelled: dict[float, str] = {}

    def swap(self, number: float) -> float | str:
        text = repr(number)
        # Between 1e-4 and 1e16 both spell a float the same way (the shortest digits that
        # round-trip, in positional notation), except integral ones: "3.0" is "3" in ECMAScript.
        if "e" not in text and text[-1] not in "0nf":
            return number
        spelled = self._spelled.get(number)
        if spelled is None:
            spelled = format_number(number)  # raises for NaN and infinities
            self._spelled[number] = spelled
        if spelled == text:
            return number
        self.count += 1
        return f"{self.marker}{spelled}\x00"


def _fast(value: Any) -> bytes | None:
    floats = _Floats()
    try:
        prepared = _prepare(value, floats)
    except _Unsupported:
        return None
    data = _encode_c(prepared)
    if floats.count:
        marker = json.dumps(floats.marker).encode()[:-1]  # b'"\\u0000<hex>'
        if data.count(marker) != floats.count:
            return None
        data, swapped = re.subn(re.escape(marker) + rb"([-+.e0-9]+)\\u0000\"", rb"\1", data)
        if swapped != floats.count:
            return None
    return data


def _encode_c(value: Any) -> bytes:
    """Compact JSON with sorted keys from a C encoder: orjson when installed, else the stdlib's.

    Both write the same bytes for what ``_prepare`` lets through (strings escaped alike, keys in
    code point order, integers exact); orjson refuses integers past 64 bits, the stdlib does not.
    """
    try:
        import orjson
    except ImportError:
        pass
    else:
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            pass
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return _utf8(text)


_SCALARS = frozenset({str, int, bool, type(None)})
_PLAIN = _SCALARS | {float, dict, list, tuple}


def _prepare(value: Any, floats: _Floats) -> Any:
    """Check that a C encoder's output will be canonical; return ``value`` with floats swapped.

    Type checks run over whole containers at C speed (``set(map(type, ...))``); Python code runs
    only for nested containers and floats. Containers are copied only when a float inside them
    is swapped.
    """
    kind = type(value)
    if kind is dict:
        try:
            ascii_keys = all(map(str.isascii, value))
        except TypeError:  # a key that is not a string
            raise _Unsupported from None
        if not ascii_keys and any(max(key, default="") > "\uffff" for key in value):
            raise _Unsupported  # sorted by code point here, by UTF-16 code unit in RFC 8785
        kinds = set(map(type, value.values()))
        if kinds <= _SCALARS:
            return value
        if not kinds <= _PLAIN:
            raise _Unsupported
        copy = None
        for key, item in value.items():
            if type(item) in _SCALARS:
                continue
            new = _prepare(item, floats)
            if new is not item:
                if copy is None:
                    copy = dict(value)
                copy[key] = new
        return value if copy is None else copy
    if kind is list or kind is tuple:
        kinds = set(map(type, value))
        if kinds <= _SCALARS:
            return value
        if not kinds <= _PLAIN:
            raise _Unsupported
        items = None
        for index, item in enumerate(value):
            if type(item) in _SCALARS:
                continue
            new = _prepare(item, floats)
            if new is not item:
                if items is None:
                    items = list(value)
                items[index] = new
        return value if items is None else items
    if kind is float:
        return floats.swap(value)
    if kind in _SCALARS:
        return value
    raise _Unsupported


def _encode(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        out.append(format_number(value))
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _encode(item, out)
        out.append("]")
    elif isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise CanonicalizationError(f"object key is not a string: {key!r}")
        out.append("{")
        # RFC 8785 section 3.2.3: keys sorted by their UTF-16 code units.
        for index, key in enumerate(
            sorted(value, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
        ):
            if index:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _encode(value[key], out)
        out.append("}")
    else:
        raise CanonicalizationError(f"cannot serialise {type(value).__name__} as JSON")


def _string(text: str) -> str:
    parts = ['"']
    for char in text:
        if char in _ESCAPES:
            parts.append(_ESCAPES[char])
        elif char < " ":
            parts.append(f"\\u{ord(char):04x}")
        elif "\ud800" <= char <= "\udfff":
            raise CanonicalizationError("string holds a lone UTF-16 surrogate")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def format_number(number: float) -> str:
    """ECMAScript's Number.prototype.toString, as RFC 8785 section 3.2.2.3 requires."""
    if math.isnan(number) or math.isinf(number):
        raise CanonicalizationError(f"{number} has no JSON representation")
    if number == 0:
        return "0"
    if number < 0:
        return "-" + format_number(-number)
    # repr gives the shortest digits that round-trip, which is what ECMAScript uses too;
    # only the placement of the decimal point and the exponent differ.
    mantissa, _, exponent_text = repr(number).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    stripped = digits.lstrip("0")
    point = len(whole) + int(exponent_text or 0) - (len(digits) - len(stripped))
    digits = stripped.rstrip("0")
    count = len(digits)
    if count <= point <= 21:
        return digits + "0" * (point - count)
    if 0 < point <= 21:
        return digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return "0." + "0" * (-point) + digits
    exponent = point - 1
    sign = "+" if exponent >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if count > 1 else "")
    return f"{head}e{sign}{abs(exponent)}"


def loads(data: bytes | str) -> Any:
    """Parse JSON, keeping integers exact.

    Refused, as I-JSON (RFC 7493) refuses them: NaN and infinities (also a literal too large for
    a double, such as ``1e999``), and repeated keys in one object, which two parsers may resolve
    to different values. Nesting deeper than Python's recursion limit is refused too.
    """

    from provenance._internal import strictjson

    try:
        return strictjson.loads(data)
    except strictjson.JSONError as e:
        raise CanonicalizationError(str(e)) from e
