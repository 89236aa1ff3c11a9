"""remat.parse_bytes over the table the tool's test reads too (tests/cli/byte_sizes.json: tests/cli/cli_bytes_test.cpp
gives it to remat::parse_bytes and to `remat plan --budget`), every row checked against a reference of this test's
own: the text matched by a regular expression and its value made exactly with fractions.Fraction (the pure-Python
parser remat.parse_bytes was before it called the tool's, with K, M, G, T, which the tool took, as KiB...)."""

import fractions
import json
import pathlib
import re

import pytest

import remat

TABLE = pathlib.Path(__file__).resolve().parents[1] / "cli" / "byte_sizes.json"
ROWS = json.loads(TABLE.read_text())["rows"]

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50,
          "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "pib": 1 << 50, "eib": 1 << 60,
          "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "pb": 10**15, "eb": 10**18}
_PATTERN = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*$")


def reference(text):
    """The bytes of `text`, "argument" or "overflow", independently of remat."""
    m = _PATTERN.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        return "argument"
    mantissa, _, exponent = m.group(1).lower().partition("e")
    fraction = mantissa.partition(".")[2]
    if len(exponent.lstrip("0")) > 18 or int(exponent or "0") - len(fraction) > 80:  # at least 10^80 unless 0
        return 0 if fractions.Fraction(mantissa) == 0 else "overflow"
    value = fractions.Fraction(m.group(1)) * _UNITS[m.group(2).lower()]
    if value.denominator != 1:
        return "argument"
    return int(value) if value < 2**64 else "overflow"


def outcome(text):
    try:
        return remat.parse_bytes(text, "the size")
    except remat.CountOverflowError as e:
        assert str(e).startswith(f'the size: "{text}"')
        return "overflow"
    except remat.ArgumentError as e:
        assert str(e).startswith("the size: ") and f'"{text}"' in str(e)
        return "argument"


@pytest.mark.parametrize("text,expected", ROWS, ids=[repr(r[0]) for r in ROWS])
def test_the_table_agrees_with_the_reference_and_parse_bytes_with_the_table(text, expected):
    assert reference(text) == expected
    assert outcome(text) == expected


def test_the_table_covers_each_outcome():
    kinds = [r[1] if isinstance(r[1], str) else "bytes" for r in ROWS]
    assert {k: kinds.count(k) >= 8 for k in ("bytes", "argument", "overflow")} == {
        "bytes": True, "argument": True, "overflow": True}


@pytest.mark.parametrize("text", ["8\u00a0GiB", "８GiB", "1e\u0663"])
def test_texts_past_ascii_are_refused(text):
    # \s and [0-9] of the reference's pattern differ past ASCII (Unicode spaces); the parser's grammar is ASCII
    with pytest.raises(remat.ArgumentError, match="the size: expected a byte count"):
        remat.parse_bytes(text, "the size")


def test_an_exponent_of_five_digits_is_weighed_against_the_fraction():
    # a long fraction brings a 5-digit exponent back into range (it was refused as too large)
    zeros = "0" * 9999
    assert remat.parse_bytes(f"0.{zeros}1e10000") == 1
    assert remat.parse_bytes(f"0.{zeros}1e10010 KiB") == 10**10 * 1024
    with pytest.raises(remat.ArgumentError, match="not a whole number of bytes"):
        remat.parse_bytes(f"0.{zeros}15e10000")
    with pytest.raises(remat.CountOverflowError):
        remat.parse_bytes(f"0.{zeros}1e10080")
