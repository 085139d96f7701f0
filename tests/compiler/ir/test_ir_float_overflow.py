"""Decimal float literals beyond their type's range are ±inf, as MLIR reads them (rounded to
nearest, ties to even: just past the largest finite value still rounds to it); an integer
literal given a float type it does not fit stays an error."""

import math

import pytest
from float_constants import constant_values

from weir.errors import CompileError
from weir.ir import parse_module, print_module


def _values(src: str) -> tuple[float, ...]:
    return constant_values(src, "f.mlir")


@pytest.mark.parametrize(
    ("literal", "elem", "expected"),
    [
        ("70000.0", "f16", math.inf),
        ("-1.0e6", "f16", -math.inf),
        ("65519.0", "f16", 65504.0),   # rounds down to the largest f16
        ("65520.0", "f16", math.inf),  # the tie rounds to even: inf
        ("3.5e38", "f32", math.inf),
        ("-3.5e38", "f32", -math.inf),
        ("3.5e38", "bf16", math.inf),
        ("1.0e400", "f64", math.inf),
    ],
)
def test_dense_overflow_is_inf(literal: str, elem: str, expected: float) -> None:
    src = f"%c = arith.constant dense<[1.0, {literal}]> : tensor<2x{elem}>"
    assert _values(src) == (1.0, expected)


@pytest.mark.parametrize(
    ("literal", "elem", "expected"),
    [("70000.0", "f16", math.inf), ("-70000.0", "f16", -math.inf),
     ("- 70000.0", "f16", -math.inf), ("3.5e38", "f32", math.inf)],
)
def test_scalar_overflow_is_inf(literal: str, elem: str, expected: float) -> None:
    assert _values(f"%c = arith.constant {literal} : {elem}") == (expected,)


def test_overflowed_literal_prints_and_parses_back() -> None:
    src = "%c = arith.constant dense<[1.0, 70000.0, -70000.0]> : tensor<3xf16>"
    printed = print_module(parse_module(src, "f.mlir"))
    assert "0x7c00" in printed and "0xfc00" in printed
    assert print_module(parse_module(printed, "f.mlir")) == printed


def test_integer_literal_too_large_for_float_type_is_an_error() -> None:
    with pytest.raises(CompileError, match=r"f.mlir:1:21: error: float constant 70000 is out of "
                                           r"range for type f16"):
        parse_module("%c = arith.constant 70000 : f16", "f.mlir")
