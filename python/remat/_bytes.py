"""Byte sizes as the remat tool reads them: an integer, or a number with a unit (2GiB, 512MiB, 1.5e9)."""

import fractions
import numbers
import operator
import re
from typing import Union

from ._args import shown
from ._errors import ArgumentError, CountOverflowError

#: A byte count as remat takes one: an int, or a string such as "8GiB".
Bytes = Union[int, str]

_UNITS = {
    "": 1, "b": 1,
    "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
}
_PATTERN = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*$")


def _fits(nbytes: int, given: Bytes, what: str) -> int:
    """`nbytes`, or remat.CountOverflowError where it exceeds the library's 64-bit byte counts."""
    if nbytes > 2**64 - 1:
        # the count itself only while it is short: 1e9999 has more digits than Python converts to a str
        size = f" is {nbytes} bytes," if nbytes.bit_length() <= 128 else " is"
        given = repr(given) if isinstance(given, str) else shown(given)
        raise CountOverflowError(f"{what}: {given}{size} more than a 64-bit count holds (2^64-1)")
    return nbytes


def parse_bytes(value: Bytes, what: str = "budget") -> int:
    """Bytes as an int: `value` an int >= 0, or a string such as "8GiB" (binary units), "8GB" (decimal).
    remat.ArgumentError naming `what` for anything else; remat.CountOverflowError past 2^64-1 bytes.

        >>> remat.parse_bytes("8GiB"), remat.parse_bytes("1.5 kB"), remat.parse_bytes(4096)
        (8589934592, 1500, 4096)
    """
    if isinstance(value, bool):
        raise ArgumentError(f"{what}: expected a byte count, got {value!r}")
    if isinstance(value, numbers.Integral):
        value = operator.index(value)
        if value < 0:
            raise ArgumentError(f"{what}: expected a byte count >= 0, got {shown(value)}")
        return _fits(value, value, what)
    if isinstance(value, str):
        m = _PATTERN.match(value)
        if m and m.group(2).lower() in _UNITS:
            number, unit = m.group(1), _UNITS[m.group(2).lower()]
            mantissa, _, exponent = number.lower().partition("e")
            if len(exponent.lstrip("0")) > 4:  # 10^10000 and up: made exactly, 10^(10^9) would take minutes
                if fractions.Fraction(mantissa) == 0:
                    return 0
                raise CountOverflowError(f"{what}: {value!r} is more than a 64-bit count holds (2^64-1)")
            # Exactly, as a fraction of the decimal digits: a float rounded 1.0000000000000001 to a whole 1 and
            # 9007199254740993.0 to ...992, and overflowed to inf (an OverflowError, not remat's) at 1e400.
            bytes_ = fractions.Fraction(number) * unit
            if bytes_.denominator == 1:
                return _fits(int(bytes_), value, what)
            raise ArgumentError(f"{what}: {value!r} is not a whole number of bytes")
        raise ArgumentError(f"{what}: expected a byte count such as 8GiB, 512MiB or 1000000, got {value!r}")
    raise ArgumentError(f"{what}: expected a byte count (int or str such as \"8GiB\"), got {type(value).__name__}")
