"""Defect (b): hex literals inside `dense<...>` are float bit patterns, not integer values."""

import math

import pytest
from float_constants import constant_values

from weir.errors import CompileError
from weir.ir import parse_module, print_module


def _values(src: str) -> tuple[float, ...]:
    return constant_values(src, "h.mlir")


@pytest.mark.parametrize(
    ("literal", "elem", "expected"),
    [
        ("0xFF800000", "f32", -math.inf),
        ("0x7F800000", "f32", math.inf),
        ("0x3F800000", "f32", 1.0),
        ("0x7C00", "f16", math.inf),
        ("0xFC00", "f16", -math.inf),
        ("0x3C00", "f16", 1.0),
        ("0xFF80", "bf16", -math.inf),
        ("0x3F80", "bf16", 1.0),
        ("0xFFF0000000000000", "f64", -math.inf),
        ("0x3FF0000000000000", "f64", 1.0),
    ],
)
def test_dense_splat_hex_is_bit_pattern(literal, elem, expected):
    assert _values(f"%c = arith.constant dense<{literal}> : tensor<4x{elem}>") == (expected,) * 4


def test_dense_list_mixes_hex_and_decimal():
    assert _values("%c = arith.constant dense<[0xFF800000, 2.0, 0x00000000]> : tensor<3xf32>") == (-math.inf, 2.0, 0.0)


def test_hex_nan_stays_nan():
    values = _values("%c = arith.constant dense<0x7FC00000> : tensor<2xf32>")
    assert len(values) == 2 and all(math.isnan(v) for v in values)


def test_scalar_hex_float_constant():
    assert _values("%c = arith.constant 0xFF800000 : f32") == (-math.inf,)


def test_hex_integers_stay_integers():
    assert _values("%c = arith.constant dense<0xFF> : tensor<2xi32>") == (255, 255)


def test_dense_hex_round_trips_through_printer():
    text = print_module(parse_module("%c = arith.constant dense<0xFF800000> : tensor<4xf32>", "h.mlir"))
    assert _values(text) == (-math.inf,) * 4


def test_hex_too_wide_for_type_is_a_located_error():
    with pytest.raises(CompileError) as info:
        parse_module("%c = arith.constant dense<0x1FF800000> : tensor<4xf32>", "h.mlir")
    assert (info.value.line, info.value.col) == (1, 27)
    assert "out of range" in info.value.message


def test_negative_hex_float_is_an_error():
    with pytest.raises(CompileError, match="leading minus"):
        parse_module("%c = arith.constant dense<-0xFF800000> : tensor<4xf32>", "h.mlir")


def test_scalar_hex_too_wide_is_a_located_error():
    with pytest.raises(CompileError) as info:
        parse_module("%c = arith.constant 0x1FF800000 : f32", "h.mlir")
    assert (info.value.line, info.value.col) == (1, 21)
