"""Numbers as people write them: ``390,251``, ``2e12``, ``18.75T``, ``535.3B``, ``3.97%``.

Read exactly: the digits are a decimal, so ``"535.3B"`` is 535,300,000,000 and ``"0.1%"`` is
1/1000, never a float's nearest double. Used for the published value of a claim and by the
``number()`` and ``int()`` functions of claim expressions.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Final

SUFFIXES: Final = {
    "K": 10**3,
    "k": 10**3,
    "M": 10**6,
    "B": 10**9,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,3})?)([KkMBGTP%]?)$")
MAX_TEXT: Final = 200  # characters: a longer string is not read as a number


def parse_number(text: str) -> int | Fraction | None:
    """The exact value of ``text``, a whole number as an int; None when it is not a number."""
    if len(text) > MAX_TEXT:
        return None
    match = _QUANTITY.match(text.strip().replace(",", "").replace("_", "").replace(" ", ""))
    if match is None:
        return None
    try:
        number = Fraction(Decimal(match.group(1)))
    except (InvalidOperation, ValueError, OverflowError):
        return None
    suffix = match.group(2)
    if suffix == "%":
        number /= 100
    elif suffix:
        number *= SUFFIXES[suffix]
    return number.numerator if number.denominator == 1 else number
