"""Every element type end to end in tensors (i1, i8, i16, i32, i64, f16, bf16, f32, f64) on every
target and driver: elementwise math, constants, reductions, contractions and casts, with results
keeping their dtype. Integers compare exactly (wrap-around included); f16/bf16 results are the
f32 computation rounded once, so single ops compare exactly and sums within the type's precision."""

from __future__ import annotations

from typing import Callable

import ml_dtypes
import numpy as np
import pytest

Runner = Callable[..., object]  # the `run` fixture (conftest.py)
RNG = np.random.default_rng(3)

DTYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
          "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
LOW = ("f16", "bf16")


def _is_float(t: str) -> bool:
    return t.startswith("f") or t == "bf16"


def _sample(t: str, shape: tuple[int, ...]) -> np.ndarray:
    dtype = DTYPES[t]
    if _is_float(t):
        return RNG.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, dtype=np.int64, endpoint=True).astype(dtype)


def _wide(x: np.ndarray, t: str) -> np.ndarray:
    """The type the targets compute `t` in (f16/bf16 in f32), rounded back when done."""
    return x.astype(np.float32) if t in LOW else x


@pytest.mark.parametrize("t", DTYPES)
def test_elementwise_math_and_constants(run: Runner, t: str) -> None:
    add, mul, mx = ("arith.addf", "arith.mulf", "arith.maximumf") if _is_float(t) else \
        ("arith.addi", "arith.muli", "arith.maxsi")
    consts = "1.5, -2.0, 0.25, 3.0" if _is_float(t) else "1, -2, 127, 3"
    src = f"""
    func.func @ew(%a: tensor<2x4x{t}>, %b: tensor<2x4x{t}>)
        -> (tensor<2x4x{t}>, tensor<2x4x{t}>, tensor<2x4x{t}>) {{
      %c = arith.constant dense<[{consts}]> : tensor<4x{t}>
      %e = tensor.empty() : tensor<2x4x{t}>
      %cb = linalg.broadcast ins(%c : tensor<4x{t}>) outs(%e : tensor<2x4x{t}>) dimensions = [0]
      %s = {add} %a, %b : tensor<2x4x{t}>
      %p = {mul} %a, %b : tensor<2x4x{t}>
      %m = {mx} %a, %cb : tensor<2x4x{t}>
      return %s, %p, %m : tensor<2x4x{t}>, tensor<2x4x{t}>, tensor<2x4x{t}>
    }}"""
    dtype = DTYPES[t]
    a, b = _sample(t, (2, 4)), _sample(t, (2, 4))
    c = np.array([float(x) for x in consts.split(",")]).astype(dtype)
    s, p, m = run(src, "ew", a, b)  # type: ignore[misc]
    with np.errstate(over="ignore"):
        wa, wb = _wide(a, t), _wide(b, t)
        expected = [(wa + wb).astype(dtype), (wa * wb).astype(dtype),
                    np.maximum(wa, _wide(c, t)).astype(dtype)]
    for got, want in zip((s, p, m), expected):
        assert got.dtype == np.dtype(dtype) and got.shape == (2, 4)
        np.testing.assert_array_equal(got, want)


def test_i1_tensors_logic_compare_and_select(run: Runner) -> None:
    src = """
    // (xDSL 0.74 parses cmpf, select and casts only on scalars: they sit in generics.)
    func.func @logic(%p: tensor<6xi1>, %q: tensor<6xi1>, %x: tensor<6xf32>, %y: tensor<6xf32>)
        -> (tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xf32>, tensor<6xi32>) {
      %and = arith.andi %p, %q : tensor<6xi1>
      %el = tensor.empty() : tensor<6xi1>
      %lt = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                             affine_map<(d0) -> (d0)>],
                            iterator_types = ["parallel"]}
          ins(%x, %y : tensor<6xf32>, tensor<6xf32>) outs(%el : tensor<6xi1>) {
      ^bb0(%u: f32, %v: f32, %o: i1):
        %w = arith.cmpf olt, %u, %v : f32
        linalg.yield %w : i1
      } -> tensor<6xi1>
      %xor = arith.xori %lt, %q : tensor<6xi1>
      %or = arith.ori %and, %xor : tensor<6xi1>
      %e = tensor.empty() : tensor<6xf32>
      %sel = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                              affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                             iterator_types = ["parallel"]}
          ins(%or, %x, %y : tensor<6xi1>, tensor<6xf32>, tensor<6xf32>) outs(%e : tensor<6xf32>) {
      ^bb0(%c: i1, %u: f32, %v: f32, %o: f32):
        %w = arith.select %c, %u, %v : f32
        linalg.yield %w : f32
      } -> tensor<6xf32>
      %ei = tensor.empty() : tensor<6xi32>
      %ext = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                             iterator_types = ["parallel"]}
          ins(%or : tensor<6xi1>) outs(%ei : tensor<6xi32>) {
      ^bb0(%c: i1, %o: i32):
        %w = arith.extui %c : i1 to i32
        linalg.yield %w : i32
      } -> tensor<6xi32>
      return %and, %xor, %or, %sel, %ext
          : tensor<6xi1>, tensor<6xi1>, tensor<6xi1>, tensor<6xf32>, tensor<6xi32>
    }"""
    p = np.array([1, 0, 1, 0, 1, 1], bool)
    q = np.array([1, 1, 0, 0, 0, 1], bool)
    x, y = RNG.standard_normal(6).astype(np.float32), RNG.standard_normal(6).astype(np.float32)
    a, xr, o, sel, ext = run(src, "logic", p, q, x, y)  # type: ignore[misc]
    assert a.dtype == np.bool_ and o.dtype == np.bool_
    np.testing.assert_array_equal(a, p & q)
    np.testing.assert_array_equal(xr, (x < y) ^ q)
    np.testing.assert_array_equal(o, (p & q) | ((x < y) ^ q))
    np.testing.assert_array_equal(sel, np.where(o, x, y))
    np.testing.assert_array_equal(ext, o.astype(np.int32))


@pytest.mark.parametrize("t", ["i8", "i16", "i64", "f16", "bf16", "f64"])
def test_row_sums_keep_the_type(run: Runner, t: str) -> None:
    add = "arith.addf" if _is_float(t) else "arith.addi"
    zero = "0.0" if _is_float(t) else "0"
    src = f"""
    func.func @rows(%a: tensor<4x16x{t}>) -> tensor<4x{t}> {{
      %zero = arith.constant {zero} : {t}
      %e = tensor.empty() : tensor<4x{t}>
      %acc = linalg.fill ins(%zero : {t}) outs(%e : tensor<4x{t}>) -> tensor<4x{t}>
      %0 = linalg.reduce ins(%a : tensor<4x16x{t}>) outs(%acc : tensor<4x{t}>) dimensions = [1]
        (%x: {t}, %s: {t}) {{
          %y = {add} %x, %s : {t}
          linalg.yield %y : {t}
        }}
      return %0 : tensor<4x{t}>
    }}"""
    dtype = DTYPES[t]
    a = _sample(t, (4, 16))
    got = run(src, "rows", a)
    assert got.dtype == np.dtype(dtype)  # type: ignore[union-attr]
    if _is_float(t):
        # Summation order is unspecified; f16/bf16 accumulate in f32 and round once.
        tol = {"f16": 2e-3, "bf16": 1.6e-2, "f64": 1e-12}[t]
        np.testing.assert_allclose(np.asarray(got, np.float64),
                                   a.astype(np.float64).sum(axis=1), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, a.sum(axis=1, dtype=dtype))  # wraps at the width


@pytest.mark.parametrize("t, acc", [("f16", "f16"), ("bf16", "bf16"), ("f64", "f64"),
                                    ("i32", "i32")])
def test_matmul_in_each_type(run: Runner, t: str, acc: str) -> None:
    zero = "0.0" if _is_float(acc) else "0"
    src = f"""
    func.func @mm(%a: tensor<5x7x{t}>, %b: tensor<7x3x{t}>) -> tensor<5x3x{acc}> {{
      %zero = arith.constant {zero} : {acc}
      %e = tensor.empty() : tensor<5x3x{acc}>
      %c = linalg.fill ins(%zero : {acc}) outs(%e : tensor<5x3x{acc}>) -> tensor<5x3x{acc}>
      %0 = linalg.matmul ins(%a, %b : tensor<5x7x{t}>, tensor<7x3x{t}>)
                         outs(%c : tensor<5x3x{acc}>) -> tensor<5x3x{acc}>
      return %0 : tensor<5x3x{acc}>
    }}"""
    if _is_float(t):
        a, b = _sample(t, (5, 7)), _sample(t, (7, 3))
    else:
        a = RNG.integers(-50000, 50000, (5, 7)).astype(DTYPES[t])
        b = RNG.integers(-50000, 50000, (7, 3)).astype(DTYPES[t])
    got = run(src, "mm", a, b)
    assert got.dtype == np.dtype(DTYPES[acc])  # type: ignore[union-attr]
    if _is_float(t):
        tol = {"f16": 4e-3, "bf16": 3e-2, "f64": 1e-12}[t]
        np.testing.assert_allclose(np.asarray(got, np.float64),
                                   a.astype(np.float64) @ b.astype(np.float64), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, a @ b)  # i32 products wrap like numpy's


CASTS = [  # (op, source type, result type)
    ("extsi", "i8", "i32"), ("sitofp", "i16", "bf16"), ("fptosi", "f64", "i16"),
    ("truncf", "f32", "f16"), ("extf", "bf16", "f32"), ("trunci", "i64", "i8"),
    ("uitofp", "i8", "f32"), ("bitcast", "f32", "i32"), ("fptoui", "f16", "i8"),
    ("extui", "i16", "i64"),
]
CAST_INPUTS = {
    "i8": np.array([-128, -1, 0, 1, 127], np.int8),
    "i16": np.array([-32768, -257, 3, 1000, 32767], np.int16),
    "f64": np.array([-3.9, -0.5, 0.0, 2.5, 30000.7]),
    "f32": np.array([0.1, -2.5, 3e38, -0.0, 7.0], np.float32),
    "bf16": np.array([0.1, -2.5, 3e38, -0.0, 7.0], ml_dtypes.bfloat16),
    "i64": np.array([2**40 + 5, -1, 255, 128, -129], np.int64),
    "f16": np.array([0.0, 1.9, 255.4, 17.5, 3.0], np.float16),
}
NUMPY = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "f16": np.float16,
         "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}


@pytest.mark.parametrize("op, src, dst", CASTS, ids=[f"{o}-{s}-{d}" for o, s, d in CASTS])
def test_cast_between_tensor_types(run: Runner, op: str, src: str, dst: str) -> None:
    prog = f"""
    func.func @cast(%x: tensor<5x{src}>) -> tensor<5x{dst}> {{
      %e = tensor.empty() : tensor<5x{dst}>
      %0 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}}
          ins(%x : tensor<5x{src}>) outs(%e : tensor<5x{dst}>) {{
      ^bb0(%v: {src}, %o: {dst}):
        %w = arith.{op} %v : {src} to {dst}
        linalg.yield %w : {dst}
      }} -> tensor<5x{dst}>
      return %0 : tensor<5x{dst}>
    }}"""
    x = CAST_INPUTS[src]
    to = NUMPY[dst]
    compute = {
        "extsi": lambda: x.astype(to), "sitofp": lambda: x.astype(to),
        "fptosi": lambda: np.trunc(x).astype(to), "truncf": lambda: x.astype(to),
        "extf": lambda: x.astype(to), "trunci": lambda: x.astype(to),
        "uitofp": lambda: x.view(np.uint8).astype(to), "bitcast": lambda: x.view(to),
        "fptoui": lambda: np.trunc(x.astype(np.float32)).astype(np.uint8).view(to),
        "extui": lambda: x.view(np.uint16).astype(to),
    }[op]
    with np.errstate(over="ignore"):  # 3e38 is inf in f16
        expected = compute()
    got = run(prog, "cast", x)
    assert got.dtype == np.dtype(to)  # type: ignore[union-attr]
    np.testing.assert_array_equal(got, expected)
