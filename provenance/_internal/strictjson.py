"""The one JSON reader for evidence: a document two parsers could read differently is refused.

Refused, as I-JSON (RFC 7493) refuses them: a key repeated in one object (which value counts
differs between parsers, so an attacker could show a verifier one value and a reader another),
NaN and infinities (also a literal too large for a double, such as ``1e999``), bytes that are not
UTF-8 (RFC 8259; a byte order mark is ignored), and nesting deeper than Python's recursion limit.
Integers stay exact. Envelopes, bundles, pack manifests and canonical JSON all read through here.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["JSONError", "NotUTF8", "RepeatedKey", "TooDeep", "loads"]


class JSONError(ValueError):
    """The bytes are not one strict JSON document; the message says why."""


class RepeatedKey(JSONError):
    """An object repeats a key (``key``)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} is repeated in one object")
        self.key = key


class NotUTF8(JSONError):
    """The bytes are not UTF-8 (UTF-16 and other encodings included)."""


class TooDeep(JSONError):
    """Arrays or objects nest deeper than the parser's recursion limit."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise RepeatedKey(key)
        document[key] = value
    return document


def _refuse(constant: str) -> Any:
    raise JSONError(f"{constant} is not valid JSON")


def _finite(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise JSONError(f"the number {text[:40]} is too large for a double")
    return number


# One decoder for the process: building one per document costs more than many small parses.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique, parse_constant=_refuse, parse_float=_finite)


def loads(data: bytes | str) -> Any:
    """Parse one strict JSON document; raises ``JSONError`` (a ``ValueError``) saying why not."""
    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes | bytearray) else data
        return _DECODER.decode(text)
    except JSONError:
        raise
    except UnicodeDecodeError as e:
        raise NotUTF8(f"not UTF-8: {e}") from e
    except RecursionError as e:
        raise TooDeep("the JSON nests too deeply") from e
    except ValueError as e:  # malformed JSON, a 5000-digit integer
        raise JSONError(str(e)) from e
