"""Checks of the public functions' count and cost arguments, made before they reach the extension: nanobind
refuses a str, a float, a bool it would take as 1, or an int beyond 64 bits with a TypeError that lists C++
signatures and does not name the argument. Here each is a remat.ArgumentError (or remat.CountOverflowError)
naming the argument and the value; the ranges (steps >= 1, ...) stay the library's to check, with its messages."""

from __future__ import annotations

import math
import numbers
import operator
from typing import Optional

from ._errors import ArgumentError, CountOverflowError

INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


def shown(value: int) -> str:
    """An int for a message: its digits while they are few (an int of more than 4300 digits has no str by
    default: a ValueError instead of remat's error), else its size in bits."""
    return str(value) if value.bit_length() <= 128 else f"an int of {value.bit_length()} bits"


def integer(value: object) -> Optional[int]:
    """`value` as an int where it is an integer: an int or any type with __index__ (numpy's integers, an
    integer tensor of one element), as the action classes take them; None for anything else, a bool of any kind (Python's,
    numpy's, a bool tensor: each has an __index__) and a float tensor (whose __index__ raises) included."""
    if isinstance(value, bool) or str(getattr(value, "dtype", "")) in ("bool", "torch.bool"):
        return None
    if isinstance(value, numbers.Integral):
        return operator.index(value)
    if not hasattr(type(value), "__index__"):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def count(value: object, what: str, *, unsigned: bool = False) -> int:
    """`value` as an int for a 64-bit count (signed: the library's step_t and slot_t; unsigned: byte sizes).
    A bool, a float (3.0 included, as range() refuses it) or a str is refused naming `what`; an int past 64
    bits is a CountOverflowError. Negative values pass: the library refuses them naming its own bound."""
    index = integer(value)
    if index is None:
        raise ArgumentError(f"{what}: expected an int, got {type(value).__name__} {value!r}")
    value = index
    top = UINT64_MAX if unsigned else INT64_MAX
    if value > top:
        raise CountOverflowError(f"{what}: {shown(value)} does not fit 64 bits (at most {top})")
    if value < -INT64_MAX - 1:
        raise CountOverflowError(f"{what}: {shown(value)} does not fit 64 bits")
    if unsigned and value < 0:
        raise ArgumentError(f"{what}: expected an int >= 0, got {value}")
    return value


def bounded(value: object, least: int, most: int) -> bool:
    """Whether `value` is an int (numpy's included, not a bool) in least..most: remat.torch's small counts."""
    index = integer(value)
    return index is not None and least <= index <= most


def optional_count(value: object, what: str) -> Optional[int]:
    return None if value is None else count(value, what)


def real(value: object, what: str) -> float:
    """`value` as a float (an int or a float, not a bool or a str); NaN and the range are the library's to refuse."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentError(f"{what}: expected a number, got {type(value).__name__} {value!r}")
    return float(value)


def finite(value: object, what: str, *, least: float = 0.0) -> float:
    """`value` as a finite float >= `least`, for the checks made in Python alone (no library call checks them)."""
    x = real(value, what)
    if not math.isfinite(x) or x < least:
        raise ArgumentError(f"{what}: expected a finite number >= {least:g}, got {value!r}")
    return x


def flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise ArgumentError(f"{what}: expected True or False, got {type(value).__name__} {value!r}")
    return value
