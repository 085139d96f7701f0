"""The small float types (f8E5M2, f8E4M3, f8E3M4, f8E4M3FN, the FNUZ types, f6E2M3FN, f6E3M2FN,
f4E2M1FN, f8E8M0FNU) end to end on every target and driver, against ml_dtypes: extf of every bit
pattern to f32/f16/bf16, truncf from f32/f16/bf16 at the edges (ties between neighbours, just off them,
subnormals, the largest value and beyond, infinities, NaN, -0), and arithmetic computed in f32 and
rounded to the type. Types without NaN (f4, f6) take NaN to +0 on both targets."""

from __future__ import annotations

from typing import Callable

import ml_dtypes
import numpy as np
import pytest

Runner = Callable[..., object]  # the `run` fixture (conftest.py)
TYPES = {"f8E5M2": (ml_dtypes.float8_e5m2, 8), "f8E4M3": (ml_dtypes.float8_e4m3, 8),
         "f8E3M4": (ml_dtypes.float8_e3m4, 8), "f8E4M3FN": (ml_dtypes.float8_e4m3fn, 8),
         "f8E4M3FNUZ": (ml_dtypes.float8_e4m3fnuz, 8),
         "f8E5M2FNUZ": (ml_dtypes.float8_e5m2fnuz, 8),
         "f8E4M3B11FNUZ": (ml_dtypes.float8_e4m3b11fnuz, 8),
         "f6E2M3FN": (ml_dtypes.float6_e2m3fn, 6), "f6E3M2FN": (ml_dtypes.float6_e3m2fn, 6),
         "f4E2M1FN": (ml_dtypes.float4_e2m1fn, 4), "f8E8M0FNU": (ml_dtypes.float8_e8m0fnu, 8)}
WIDE = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}


def _every_value(t: str) -> np.ndarray:
    dtype, bits = TYPES[t]
    return np.arange(1 << bits, dtype=np.uint8).view(dtype)


def _has_nan(t: str) -> bool:
    return bool(np.isnan(_every_value(t).astype(np.float32)).any())


def _round(x: np.ndarray, t: str) -> np.ndarray:
    """ml_dtypes' rounding to `t`, NaN to +0 where `t` has no NaN."""
    if not _has_nan(t):
        x = np.where(np.isnan(x), np.zeros((), x.dtype), x)
    return x.astype(TYPES[t][0])


def _assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Bit for bit, except that any NaN matches any NaN."""
    assert got.dtype == want.dtype, what
    g, w = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=what)
    keep = ~np.isnan(w)
    bits = (lambda a: a[keep].view(np.uint16)) if got.itemsize == 2 else \
        (lambda a: a[keep].view(np.uint32) if got.itemsize == 4 else a[keep].view(np.uint8))
    np.testing.assert_array_equal(bits(got), bits(want), err_msg=what)


def _edges(t: str) -> np.ndarray:
    """f32 inputs that test rounding to `t`: its values, the ties between neighbours and the
    f32 values just either side of each tie, and the values beyond its range."""
    values = _every_value(t).astype(np.float32)
    finite = np.unique(values[np.isfinite(values)]).astype(np.float64)
    ties = (finite[:-1] + finite[1:]) / 2
    ties32 = ties.astype(np.float32)  # exact: every tie has few enough bits
    largest, smallest = finite.max(), finite[finite > 0].min()
    extra = [largest * 1.0625, largest * 2, 1e30, np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0,
             smallest / 2, smallest * 0.75, smallest / 4, 1e-40, -1e-40, -smallest / 2]
    with np.errstate(over="ignore"):  # `largest * 2` is inf in f32 for f8E8M0FNU
        return np.concatenate([finite, ties32, np.nextafter(ties32, np.inf),
                               np.nextafter(ties32, -np.inf), np.array(extra)]).astype(np.float32)


@pytest.mark.parametrize("t", TYPES)
def test_extf_of_every_bit_pattern(run: Runner, t: str) -> None:
    x = _every_value(t)
    n = x.size
    src = f"""
    func.func @f(%x: tensor<{n}x{t}>) -> (tensor<{n}xf32>, tensor<{n}xf16>, tensor<{n}xbf16>) {{
      %a = arith.extf %x : tensor<{n}x{t}> to tensor<{n}xf32>
      %b = arith.extf %x : tensor<{n}x{t}> to tensor<{n}xf16>
      %c = arith.extf %x : tensor<{n}x{t}> to tensor<{n}xbf16>
      return %a, %b, %c : tensor<{n}xf32>, tensor<{n}xf16>, tensor<{n}xbf16>
    }}"""
    got = run(src, "f", x)
    for g, (name, wide) in zip(got, WIDE.items()):  # type: ignore[call-overload]
        with np.errstate(over="ignore"):  # f8E8M0FNU's largest powers are inf in f16
            _assert_same(g, x.astype(np.float32).astype(wide), f"extf to {name}")


@pytest.mark.parametrize("t", TYPES)
def test_truncf_at_the_edges(run: Runner, t: str) -> None:
    x = _edges(t)
    n = x.size
    src = f"""
    func.func @f(%a: tensor<{n}xf32>, %b: tensor<{n}xf16>, %c: tensor<{n}xbf16>)
        -> (tensor<{n}x{t}>, tensor<{n}x{t}>, tensor<{n}x{t}>) {{
      %ra = arith.truncf %a : tensor<{n}xf32> to tensor<{n}x{t}>
      %rb = arith.truncf %b : tensor<{n}xf16> to tensor<{n}x{t}>
      %rc = arith.truncf %c : tensor<{n}xbf16> to tensor<{n}x{t}>
      return %ra, %rb, %rc : tensor<{n}x{t}>, tensor<{n}x{t}>, tensor<{n}x{t}>
    }}"""
    with np.errstate(over="ignore"):  # beyond f16's range is inf there, as intended
        inputs = [x.astype(w) for w in WIDE.values()]
    got = run(src, "f", *inputs)
    for g, v, name in zip(got, inputs, WIDE):  # type: ignore[call-overload]
        _assert_same(g, _round(v.astype(np.float32), t), f"truncf from {name}")


@pytest.mark.parametrize("t", TYPES)
def test_arithmetic_rounds_the_f32_result(run: Runner, t: str) -> None:
    values = _every_value(t)
    rng = np.random.default_rng(7)
    a, b = rng.choice(values, 512), rng.choice(values, 512)
    src = f"""
    func.func @f(%a: tensor<512x{t}>, %b: tensor<512x{t}>)
        -> (tensor<512x{t}>, tensor<512x{t}>, tensor<512x{t}>, tensor<512x{t}>, tensor<512x{t}>) {{
      %s = arith.addf %a, %b : tensor<512x{t}>
      %d = arith.subf %a, %b : tensor<512x{t}>
      %p = arith.mulf %a, %b : tensor<512x{t}>
      %q = arith.divf %a, %b : tensor<512x{t}>
      %n = arith.negf %a : tensor<512x{t}>
      return %s, %d, %p, %q, %n
        : tensor<512x{t}>, tensor<512x{t}>, tensor<512x{t}>, tensor<512x{t}>, tensor<512x{t}>
    }}"""
    got = run(src, "f", a, b)
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        want = [fa + fb, fa - fb, fa * fb, fa / fb, -fa]
    names = ("addf", "subf", "mulf", "divf", "negf")
    for g, w, name in zip(got, want, names):  # type: ignore[call-overload]
        _assert_same(g, _round(w, t), name)


def test_small_floats_at_the_abi_and_as_bits(run: Runner) -> None:
    """A constant of f8 values and hex bit patterns (0x80 is NaN in f8E5M2FNUZ), and
    arith.bitcast to i8, keep the bits as IREE lays them out."""
    src = """
    func.func @f(%x: tensor<4xf8E4M3FN>) -> (tensor<4xi8>, tensor<4xi8>) {
      %c = arith.constant dense<[1.5, -0.0, 0x80, 448.0]> : tensor<4xf8E5M2FNUZ>
      %bits = arith.bitcast %c : tensor<4xf8E5M2FNUZ> to tensor<4xi8>
      %xb = arith.bitcast %x : tensor<4xf8E4M3FN> to tensor<4xi8>
      return %bits, %xb : tensor<4xi8>, tensor<4xi8>
    }"""
    x = np.array([1.0, -2.0, 448.0, np.nan], ml_dtypes.float8_e4m3fn)
    bits, xb = run(src, "f", x)  # type: ignore[misc]
    want = np.array([1.5, 0.0, np.nan, 448.0], np.float32).astype(ml_dtypes.float8_e5m2fnuz)
    np.testing.assert_array_equal(bits, want.view(np.int8))
    np.testing.assert_array_equal(xb, x.view(np.int8))


@pytest.mark.parametrize("t", ["f8E4M3FN", "f8E5M2", "f4E2M1FN"])
def test_f64_and_integers_round_once(run: Runner, t: str) -> None:
    """truncf from f64 and sitofp from i64 round the exact value once: through f32 by plain
    rounding, a value just above a tie of `t` would land on the tie and then round to even."""
    dtype = TYPES[t][0]
    ties = _edges(t)
    ties = ties[np.isfinite(ties)].astype(np.float64)
    x = np.concatenate([ties * (1 + 2.0 ** -30), ties * (1 - 2.0 ** -30)])
    n = x.size
    ints = np.array([(1 << 40) + 1, -(1 << 40) - 1, 7, -9, 3, (1 << 24) + 1], np.int64)
    src = f"""
    func.func @f(%x: tensor<{n}xf64>, %i: tensor<6xi64>) -> (tensor<{n}x{t}>, tensor<6x{t}>) {{
      %a = arith.truncf %x : tensor<{n}xf64> to tensor<{n}x{t}>
      %b = arith.sitofp %i : tensor<6xi64> to tensor<6x{t}>
      return %a, %b : tensor<{n}x{t}>, tensor<6x{t}>
    }}"""
    got, got_ints = run(src, "f", x, ints)  # type: ignore[misc]
    # ml_dtypes' own f64 conversion goes through f32; round the exact value by hand instead:
    # the nearest of the type's values, ties to the even encoding.
    values = _every_value(t).astype(np.float64)
    grid = np.unique(values[np.isfinite(values) & (values >= 0)])

    def nearest(v: float) -> np.ndarray:
        """The value of `t` nearest to `v` (its sign kept, so -tiny is -0 where `t` has one)."""
        m = abs(v)
        if m > grid.max():  # beyond the range: what f32 rounding gives (exact there)
            return np.array([v], np.float32).astype(dtype)
        d = np.abs(grid - m)
        best = grid[d == d.min()]
        if best.size == 2:  # a tie: the even encoding
            enc = np.array(best, np.float32).astype(dtype).view(np.uint8)
            best = best[enc % 2 == 0]
        return np.array([np.copysign(best[0], v)], np.float32).astype(dtype)

    want = np.concatenate([nearest(v) for v in x])
    want_ints = np.concatenate([nearest(float(v)) for v in ints])
    _assert_same(got, want, "truncf from f64")
    _assert_same(got_ints, want_ints, "sitofp from i64")


def test_scalars_at_the_abi_on_the_host_and_in_dispatches(run: Runner) -> None:
    """Small float and sub-byte scalars as arguments and results, in host arithmetic (rounded
    to their type after each op) and captured into a dispatch (a fill, a push constant)."""
    src = """
    func.func @f(%a: f8E4M3FN, %b: f32, %i: i2, %x: tensor<3xf8E5M2>)
        -> (f8E4M3FN, f32, f4E2M1FN, i2, tensor<3xf8E5M2>) {
      %0 = arith.addf %a, %a : f8E4M3FN
      %1 = arith.extf %0 : f8E4M3FN to f32
      %2 = arith.addf %1, %b : f32
      %3 = arith.truncf %2 : f32 to f4E2M1FN
      %4 = arith.muli %i, %i : i2
      %h = arith.truncf %b : f32 to f8E5M2
      %e = tensor.empty() : tensor<3xf8E5M2>
      %f = linalg.fill ins(%h : f8E5M2) outs(%e : tensor<3xf8E5M2>) -> tensor<3xf8E5M2>
      %s = arith.addf %f, %x : tensor<3xf8E5M2>
      return %0, %2, %3, %4, %s : f8E4M3FN, f32, f4E2M1FN, i2, tensor<3xf8E5M2>
    }"""
    x = np.array([0.25, -3.0, 1e4], ml_dtypes.float8_e5m2)
    a8, f, f4, i2, s = run(src, "f", np.float32(0.3), np.float32(1.1), -1, x)  # type: ignore[misc]
    e4m3 = ml_dtypes.float8_e4m3fn
    want_a = (np.float32(np.float32(0.3).astype(e4m3)) * 2).astype(e4m3)
    assert a8.dtype == np.dtype(e4m3) and float(a8) == float(want_a) == 0.625
    assert float(f) == float(np.float32(0.625) + np.float32(1.1))
    assert np.asarray(f4).dtype == np.dtype(ml_dtypes.float4_e2m1fn) and float(f4) == 1.5
    assert int(i2) == 1
    h = np.float32(1.1).astype(ml_dtypes.float8_e5m2).astype(np.float32)
    _assert_same(s, (h + x.astype(np.float32)).astype(ml_dtypes.float8_e5m2), "fill + x")
