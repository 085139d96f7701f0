"""Printed results: IREE's layout, truncation, nesting, scalars and float formatting."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from weir.tools.io.element_types import parse_element_type
from weir.tools.io.format_output import (
    format_buffer_view,
    format_result,
    format_results,
    format_scalar,
)
from weir.tools.io.values import TypedScalar


def test_vector() -> None:
    assert format_buffer_view(np.array([0, 55, 144, 273], np.float32)) == "4xf32=0 55 144 273"


def test_default_truncation_after_1024_elements() -> None:
    text = format_buffer_view(np.full(4096, 4, np.float32))
    assert text.startswith("4096xf32=4 4 4")
    assert text.endswith(" 4...")
    assert len(text.split("=", 1)[1].rstrip(".").split(" ")) == 1024


def test_nesting() -> None:
    assert format_buffer_view(np.array([[1, 2], [3, 4]], np.int32)) == "2x2xi32=[1 2][3 4]"
    assert format_buffer_view(np.arange(8, dtype=np.int8).reshape(2, 2, 2)) == \
        "2x2x2xi8=[[0 1][2 3]][[4 5][6 7]]"


def test_truncation_inside_nesting_matches_iree() -> None:
    array = np.arange(9, dtype=np.int32).reshape(3, 3)
    assert format_buffer_view(array, 4) == "3x3xi32=[0 1 2][3...][...]"
    assert format_buffer_view(array, 3) == "3x3xi32=[0 1 2][...][...]"
    assert format_buffer_view(np.arange(24, dtype=np.int32).reshape(2, 3, 4), 5) == \
        "2x3x4xi32=[[0 1 2 3][4...][...]][[...][...][...]]"
    assert format_buffer_view(np.arange(4, dtype=np.int32), 0) == "4xi32=..."


def test_huge_elided_arrays_stay_fast() -> None:
    text = format_buffer_view(np.zeros((200000, 2), np.float32), 2)
    assert text.startswith("200000x2xf32=[0 0][...][...]") and text.count("[...]") == 199999


def test_zero_d_and_empty() -> None:
    assert format_buffer_view(np.array(2.5, np.float32)) == "f32=2.5"
    assert format_buffer_view(np.zeros((0,), np.int32)) == "0xi32="
    assert format_buffer_view(np.zeros((2, 0), np.float32)) == "2x0xf32=[][]"


@pytest.mark.parametrize("value,text", [
    (4.0, "4"), (0.5, "0.5"), (1e10, "1E+10"), (1e-5, "1E-05"), (123456.0, "123456"),
    (1234567.0, "1.23457E+06"), (-0.0, "-0"), (np.inf, "INF"), (-np.inf, "-INF"),
    (np.nan, "NAN"), (0.1, "0.1"),
])
def test_float_elements_use_percent_G(value: float, text: str) -> None:
    assert format_buffer_view(np.array([value], np.float64)) == f"1xf64={text}"


def test_f32_values_print_from_their_f32_value() -> None:
    # 0.1f is 0.100000001490116...; %G rounds it to 6 significant digits.
    assert format_buffer_view(np.array([0.1, 1 / 3], np.float32)) == "2xf32=0.1 0.333333"


def test_half_types() -> None:
    assert format_buffer_view(np.array([1, 0.5, 65504], np.float16)) == "3xf16=1 0.5 65504"
    assert format_buffer_view(np.array([1, 0.1], ml_dtypes.bfloat16)) == "2xbf16=1 0.100098"


def test_i1_prints_as_a_hex_byte_like_iree() -> None:
    assert format_buffer_view(np.array([True, False])) == "2xi1=01 00"


def test_unsigned_and_wide_ints() -> None:
    assert format_buffer_view(np.array([255], np.uint8)) == "1xui8=255"
    assert format_buffer_view(np.array([-9223372036854775808], np.int64)) == \
        "1xi64=-9223372036854775808"


def test_scalars_use_percent_g() -> None:
    t = parse_element_type
    assert format_scalar(TypedScalar(t("i32"), 12)) == "i32=12"
    assert format_scalar(TypedScalar(t("i64"), -5)) == "i64=-5"
    assert format_scalar(TypedScalar(t("f32"), 2.5)) == "f32=2.5"
    assert format_scalar(TypedScalar(t("f64"), 1e10)) == "f64=1e+10"
    assert format_scalar(TypedScalar(t("f32"), float("nan"))) == "f32=nan"


def test_results_block() -> None:
    text = format_results([np.arange(4, dtype=np.float32),
                           TypedScalar(parse_element_type("i32"), 12), None])
    assert text == ("result[0]: hal.buffer_view\n4xf32=0 1 2 3\n"
                    "result[1]: i32=12\n"
                    "result[2]: (null)\n")


def test_format_result_rejects_unknown_values() -> None:
    with pytest.raises(TypeError):
        format_result(object())
