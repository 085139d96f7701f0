"""arith and math ops written directly on tensors (comparisons, select, casts, integer
wrap-around, shifts, rounding), run on every target and driver and compared with numpy computed
with the op's own MLIR semantics (C-style truncating division, wrap-around at the width)."""

from __future__ import annotations

from typing import Callable

import ml_dtypes
import numpy as np
import pytest

Runner = Callable[..., object]
RNG = np.random.default_rng(11)

CMPF = {
    "oeq": lambda a, b: a == b, "one": lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),
    "olt": lambda a, b: a < b, "ole": lambda a, b: a <= b,
    "ugt": lambda a, b: ~(a <= b), "uno": lambda a, b: np.isnan(a) | np.isnan(b),
    "ord": lambda a, b: ~np.isnan(a) & ~np.isnan(b), "une": lambda a, b: ~(a == b),
}


@pytest.mark.parametrize("predicate", sorted(CMPF))
def test_cmpf_on_tensors_with_nans(run: Runner, predicate: str) -> None:
    src = f"""
    func.func @cmp(%a: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<6xi1> {{
      %0 = arith.cmpf {predicate}, %a, %b : tensor<6xf32>
      return %0 : tensor<6xi1>
    }}"""
    a = np.array([1, 2, np.nan, 4, -0.0, np.inf], np.float32)
    b = np.array([1, 3, 1, np.nan, 0.0, np.inf], np.float32)
    with np.errstate(invalid="ignore"):
        expected = CMPF[predicate](a, b)
    result = run(src, "cmp", a, b)
    assert result.dtype == np.bool_
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("predicate,fn", [("slt", np.less), ("ult", None), ("uge", None),
                                          ("ne", np.not_equal)])
def test_cmpi_signed_and_unsigned_on_i8(run: Runner, predicate: str, fn: object) -> None:
    src = f"""
    func.func @cmp(%a: tensor<8xi8>, %b: tensor<8xi8>) -> tensor<8xi1> {{
      %0 = arith.cmpi {predicate}, %a, %b : tensor<8xi8>
      return %0 : tensor<8xi1>
    }}"""
    a = np.array([-128, -1, 0, 1, 127, -5, 5, 0], np.int8)
    b = np.array([127, 1, 0, -1, -128, -5, 6, -1], np.int8)
    ua, ub = a.view(np.uint8), b.view(np.uint8)
    expected = {"slt": a < b, "ult": ua < ub, "uge": ua >= ub, "ne": a != b}[predicate]
    np.testing.assert_array_equal(run(src, "cmp", a, b), expected)


def test_relu_as_compare_and_select_with_a_tensor_condition(run: Runner) -> None:
    src = """
    func.func @relu(%a: tensor<3x5xf32>) -> tensor<3x5xf32> {
      %zero = arith.constant dense<0.0> : tensor<3x5xf32>
      %c = arith.cmpf ogt, %a, %zero : tensor<3x5xf32>
      %0 = arith.select %c, %a, %zero : tensor<3x5xi1>, tensor<3x5xf32>
      return %0 : tensor<3x5xf32>
    }"""
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_array_equal(run(src, "relu", a), np.maximum(a, 0))


def test_integer_casts_chain_wraps_and_extends(run: Runner) -> None:
    src = """
    func.func @casts(%a: tensor<6xi16>) -> (tensor<6xi8>, tensor<6xi32>, tensor<6xi64>) {
      %t = arith.trunci %a : tensor<6xi16> to tensor<6xi8>
      %s = arith.extsi %t : tensor<6xi8> to tensor<6xi32>
      %u = arith.extui %t : tensor<6xi8> to tensor<6xi64>
      return %t, %s, %u : tensor<6xi8>, tensor<6xi32>, tensor<6xi64>
    }"""
    a = np.array([300, -1, 127, 128, -129, 255], np.int16)
    t, s, u = run(src, "casts", a)  # type: ignore[misc]
    expected_t = a.astype(np.int8)
    np.testing.assert_array_equal(t, expected_t)
    np.testing.assert_array_equal(s, expected_t.astype(np.int32))
    np.testing.assert_array_equal(u, expected_t.view(np.uint8).astype(np.int64))
    assert (t.dtype, s.dtype, u.dtype) == (np.int8, np.int32, np.int64)


def test_int_float_conversions(run: Runner) -> None:
    src = """
    func.func @conv(%a: tensor<5xi32>, %f: tensor<5xf32>) -> (tensor<5xf64>, tensor<5xf32>, tensor<5xi32>, tensor<5xi16>) {
      %0 = arith.sitofp %a : tensor<5xi32> to tensor<5xf64>
      %1 = arith.uitofp %a : tensor<5xi32> to tensor<5xf32>
      %2 = arith.fptosi %f : tensor<5xf32> to tensor<5xi32>
      %3 = arith.fptoui %f : tensor<5xf32> to tensor<5xi16>
      return %0, %1, %2, %3 : tensor<5xf64>, tensor<5xf32>, tensor<5xi32>, tensor<5xi16>
    }"""
    a = np.array([-7, 0, 1, 2**31 - 1, -(2**31)], np.int32)
    f = np.array([1.9, 2.5, 0.0, 300.7, 65000.2], np.float32)
    r0, r1, r2, r3 = run(src, "conv", a, f)  # type: ignore[misc]
    np.testing.assert_array_equal(r0, a.astype(np.float64))
    np.testing.assert_array_equal(r1, a.view(np.uint32).astype(np.float32))
    np.testing.assert_array_equal(r2, np.trunc(f).astype(np.int32))
    np.testing.assert_array_equal(r3, np.trunc(f).astype(np.uint16).view(np.int16))


def test_float_width_conversions_round_to_nearest_even(run: Runner) -> None:
    src = """
    func.func @widths(%a: tensor<6xf32>) -> (tensor<6xf16>, tensor<6xbf16>, tensor<6xf64>) {
      %h = arith.truncf %a : tensor<6xf32> to tensor<6xf16>
      %b = arith.truncf %a : tensor<6xf32> to tensor<6xbf16>
      %d = arith.extf %h : tensor<6xf16> to tensor<6xf64>
      return %h, %b, %d : tensor<6xf16>, tensor<6xbf16>, tensor<6xf64>
    }"""
    a = np.array([1.0009765625, 3.14159, -65504.0, 1e-8, 70000.0, -2.5], np.float32)
    h, b, d = run(src, "widths", a)  # type: ignore[misc]
    with np.errstate(over="ignore"):  # 70000 is past f16's range: +inf, as MLIR rounds it
        as_f16 = a.astype(np.float16)
    np.testing.assert_array_equal(h.view(np.uint16), as_f16.view(np.uint16))
    np.testing.assert_array_equal(b.view(np.uint16), a.astype(ml_dtypes.bfloat16).view(np.uint16))
    np.testing.assert_array_equal(d, as_f16.astype(np.float64))


def test_bitcast_between_f32_and_i32(run: Runner) -> None:
    src = """
    func.func @bits(%a: tensor<4xf32>) -> tensor<4xi32> {
      %0 = arith.bitcast %a : tensor<4xf32> to tensor<4xi32>
      %one = arith.constant dense<1> : tensor<4xi32>
      %1 = arith.addi %0, %one : tensor<4xi32>
      return %1 : tensor<4xi32>
    }"""
    a = np.array([1.0, -0.0, np.inf, 3.5], np.float32)
    np.testing.assert_array_equal(run(src, "bits", a), a.view(np.int32) + 1)


def test_i8_and_i16_arithmetic_wraps_at_the_width(run: Runner) -> None:
    src = """
    func.func @wrap(%a: tensor<5xi8>, %b: tensor<5xi16>) -> (tensor<5xi8>, tensor<5xi16>) {
      %0 = arith.addi %a, %a : tensor<5xi8>
      %1 = arith.muli %b, %b : tensor<5xi16>
      return %0, %1 : tensor<5xi8>, tensor<5xi16>
    }"""
    a = np.array([100, -100, 127, -128, 3], np.int8)
    b = np.array([300, -300, 181, 256, 7], np.int16)
    r0, r1 = run(src, "wrap", a, b)  # type: ignore[misc]
    np.testing.assert_array_equal(r0, (a.astype(np.int32) * 2).astype(np.int8))
    np.testing.assert_array_equal(r1, (b.astype(np.int32) ** 2).astype(np.int16))


def test_signed_division_truncates_toward_zero(run: Runner) -> None:
    src = """
    func.func @div(%a: tensor<6xi32>, %b: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>) {
      %q = arith.divsi %a, %b : tensor<6xi32>
      %r = arith.remsi %a, %b : tensor<6xi32>
      %u = arith.divui %a, %b : tensor<6xi32>
      return %q, %r, %u : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>
    }"""
    a = np.array([7, -7, 7, -7, 100, -1], np.int32)
    b = np.array([2, 2, -2, -2, 7, 3], np.int32)
    q, r, u = run(src, "div", a, b)  # type: ignore[misc]
    expected_q = np.trunc(a / b).astype(np.int32)
    np.testing.assert_array_equal(q, expected_q)
    np.testing.assert_array_equal(r, a - expected_q * b)
    np.testing.assert_array_equal(u, (a.view(np.uint32) // b.view(np.uint32)).view(np.int32))


def test_shifts_logical_and_arithmetic(run: Runner) -> None:
    src = """
    func.func @shifts(%a: tensor<4xi32>, %s: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
      %0 = arith.shli %a, %s : tensor<4xi32>
      %1 = arith.shrsi %a, %s : tensor<4xi32>
      %2 = arith.shrui %a, %s : tensor<4xi32>
      return %0, %1, %2 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
    }"""
    a = np.array([1, -16, 0x40000000, -1], np.int32)
    s = np.array([3, 2, 1, 31], np.int32)
    r0, r1, r2 = run(src, "shifts", a, s)  # type: ignore[misc]
    np.testing.assert_array_equal(r0, (a.astype(np.int64) << s).astype(np.int32))
    np.testing.assert_array_equal(r1, a >> s)
    np.testing.assert_array_equal(r2, (a.view(np.uint32) >> s.astype(np.uint32)).view(np.int32))


def test_unsigned_min_max_and_bitwise(run: Runner) -> None:
    src = """
    func.func @umm(%a: tensor<4xi16>, %b: tensor<4xi16>) -> (tensor<4xi16>, tensor<4xi16>, tensor<4xi16>) {
      %0 = arith.maxui %a, %b : tensor<4xi16>
      %1 = arith.minsi %a, %b : tensor<4xi16>
      %2 = arith.xori %a, %b : tensor<4xi16>
      return %0, %1, %2 : tensor<4xi16>, tensor<4xi16>, tensor<4xi16>
    }"""
    a = np.array([-1, 5, -300, 0], np.int16)
    b = np.array([1, -5, 300, 7], np.int16)
    r0, r1, r2 = run(src, "umm", a, b)  # type: ignore[misc]
    np.testing.assert_array_equal(r0, np.maximum(a.view(np.uint16), b.view(np.uint16)).view(np.int16))
    np.testing.assert_array_equal(r1, np.minimum(a, b))
    np.testing.assert_array_equal(r2, a ^ b)


def test_rounding_family(run: Runner) -> None:
    src = """
    func.func @rounding(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
      %0 = math.floor %a : tensor<8xf32>
      %1 = math.ceil %a : tensor<8xf32>
      %2 = math.round %a : tensor<8xf32>
      %3 = math.roundeven %a : tensor<8xf32>
      return %0, %1, %2, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    }"""
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 3.2, 1e7 + 0.5], np.float32)
    r0, r1, r2, r3 = run(src, "rounding", a)  # type: ignore[misc]
    np.testing.assert_array_equal(r0, np.floor(a))
    np.testing.assert_array_equal(r1, np.ceil(a))
    np.testing.assert_array_equal(r2, np.sign(a) * np.floor(np.abs(a) + 0.5))  # half away from 0
    np.testing.assert_array_equal(r3, np.round(a))  # numpy rounds half to even


def test_transcendental_math_on_f64(run: Runner) -> None:
    src = """
    func.func @trans(%a: tensor<16xf64>) -> tensor<16xf64> {
      %0 = math.exp %a : tensor<16xf64>
      %1 = math.log1p %0 : tensor<16xf64>
      %2 = math.rsqrt %1 : tensor<16xf64>
      %3 = math.sin %2 : tensor<16xf64>
      %4 = math.erf %3 : tensor<16xf64>
      return %4 : tensor<16xf64>
    }"""
    from math import erf
    a = RNG.uniform(-3, 3, 16)
    expected = np.array([erf(v) for v in np.sin(1 / np.sqrt(np.log1p(np.exp(a))))])
    np.testing.assert_allclose(run(src, "trans", a), expected, rtol=1e-12, atol=1e-14)


def test_remf_takes_the_dividends_sign(run: Runner) -> None:
    src = """
    func.func @rem(%a: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<6xf32> {
      %0 = arith.remf %a, %b : tensor<6xf32>
      return %0 : tensor<6xf32>
    }"""
    a = np.array([7, -7, 7.5, -0.5, 1e10, 3], np.float32)
    b = np.array([2, 2, -2, 3, 3, 0.75], np.float32)
    np.testing.assert_array_equal(run(src, "rem", a, b), np.fmod(a, b))
