"""Byte sizes as the remat tool reads them (through its own parser): an integer, or a number with a unit (2GiB,
512MiB, 1.5e9)."""

from typing import Union

from . import _remat
from ._args import integer, shown
from ._errors import ArgumentError, CountOverflowError

#: A byte count as remat takes one: an int, or a string such as "8GiB".
Bytes = Union[int, str]


def _fits(nbytes: int, what: str) -> int:
    """`nbytes`, or remat.CountOverflowError where it exceeds the library's 64-bit byte counts."""
    if nbytes > 2**64 - 1:
        # shown() says only "an int of N bits" of an int too long to convert to a str (10**5000)
        raise CountOverflowError(f"{what}: {shown(nbytes)} is more than a 64-bit count holds (2^64-1)")
    return nbytes


def parse_bytes(value: Bytes, what: str = "budget") -> int:
    """Bytes as an int: `value` an int >= 0, or a string such as "8GiB" (binary units; K, M, G, T, P alike, and EiB), "8GB"
    (decimal), "1.5e9", read exactly from its digits by the `remat` tool's own parser (remat::parse_bytes): it
    must be a whole number of bytes. remat.ArgumentError naming `what` for anything else; remat.CountOverflowError
    past 2^64-1 bytes.

        >>> remat.parse_bytes("8GiB"), remat.parse_bytes("1.5 kB"), remat.parse_bytes(4096)
        (8589934592, 1500, 4096)
    """
    if isinstance(value, bool):
        raise ArgumentError(f"{what}: expected a byte count, got {value!r}")
    index = integer(value)  # an int, or any integer with __index__ (numpy's)
    if index is not None:
        value = index
        if value < 0:
            raise ArgumentError(f"{what}: expected a byte count >= 0, got {shown(value)}")
        return _fits(value, what)
    if isinstance(value, str):
        if not value.isascii():  # the grammar is ASCII (a text with others would not pass to C++ as it is)
            raise ArgumentError(f"{what}: expected a byte count such as 4096, 64MiB or 2GiB, got {value!r}")
        # the `remat` tool's own parser (remat::parse_bytes), exact from the decimal digits
        return _remat.parse_bytes(value, what)
    raise ArgumentError(f"{what}: expected a byte count (int or str such as \"8GiB\"), got {type(value).__name__}")
