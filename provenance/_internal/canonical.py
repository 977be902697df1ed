"""Canonical JSON (RFC 8785, the JSON Canonicalization Scheme).

The bytes this module produces are what prov hashes and signs, so they must be the same on every
machine and every run. Two deliberate choices:

* Integers are written exactly, whatever their size. RFC 8785 assumes IEEE doubles and would round
  535,477,106,688-scale values only past 2**53, but a provenance record must never change a number,
  so an integer above 2**53 is written as its exact decimal digits (as every JSON parser reads it).
* Most real documents (git manifests, W&B configs of integers and strings) hold no float and no key
  outside the Basic Multilingual Plane; for them the standard library's C encoder already emits RFC
  8785 bytes (sorted keys, minimal separators, the same escapes), so we use it. Anything else goes
  through the reference encoder below, which follows the RFC to the letter.
"""

from __future__ import annotations

import json
import math
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
    if _plain(value):
        try:
            return json.dumps(
                value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
            ).encode("utf-8")
        except UnicodeEncodeError as e:
            raise CanonicalizationError(f"string is not valid Unicode: {e}") from e
    parts: list[str] = []
    _encode(value, parts)
    try:
        return "".join(parts).encode("utf-8")
    except UnicodeEncodeError as e:
        raise CanonicalizationError(f"string is not valid Unicode: {e}") from e


def _plain(value: Any) -> bool:
    """True when the C encoder's output is already canonical: no floats, only BMP keys."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            for key in item:
                if type(key) is not str or (not key.isascii() and max(key) > "\uffff"):
                    return False
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is float or (kind not in (str, int, bool) and item is not None):
            return False
    return True


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

    def refuse(constant: str) -> Any:
        raise CanonicalizationError(f"{constant} is not valid JSON")

    def finite(text: str) -> float:
        number = float(text)
        if math.isinf(number):
            raise CanonicalizationError(f"the number {text[:40]} is too large for a double")
        return number

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        document: dict[str, Any] = {}
        for key, value in pairs:
            if key in document:
                raise CanonicalizationError(f"the key {key!r} is repeated in one object")
            document[key] = value
        return document

    try:
        return json.loads(data, parse_constant=refuse, parse_float=finite, object_pairs_hook=unique)
    except RecursionError as e:
        raise CanonicalizationError("the JSON nests too deeply") from e
    except CanonicalizationError:
        raise
    except ValueError as e:  # malformed JSON, bytes that are not Unicode, a 5000-digit integer
        raise CanonicalizationError(str(e)) from e
