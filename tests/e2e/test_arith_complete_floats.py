"""The float side of test_arith_complete.py (whose docstring lists every arith op): float
arithmetic, min/max and comparisons with NaN and signed zeros, every cast (float widths rounding
once, integer <-> float with saturation, bitcasts, index casts), the scaling casts, and f16/bf16
rounding after every op, on host scalars and on tensors, on every target and driver."""

from __future__ import annotations

import math
from typing import Any, Callable

import ml_dtypes
import numpy as np
import pytest
from arith_reference import (
    array,
    as_int,
    as_ints,
    INF,
    NAN,
    NP_FLOAT,
    program,
    round_to,
    same_float,
    scalar_and_tensor,
    tensor_type,
    unsigned,
    wrap,
)

import weir.api as weir
from weir.errors import CompileError

Runner = Callable[..., Any]  # the `run` fixture (conftest.py)


# --- floats -------------------------------------------------------------------------------------

FLOAT_BINARY = ["addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf",
                "minnumf"]
FLOAT_PAIRS = [(1.5, 2.25), (-3.0, 0.5), (NAN, 1.0), (1.0, NAN), (NAN, NAN), (-0.0, 0.0),
               (0.0, -0.0), (-0.0, -0.0), (INF, -INF), (INF, 1.0), (5.0, -0.0), (7.0, 2.5),
               (-7.5, 2.0), (300.0, 300.0), (0.1, 0.2), (-1.0, INF)]


def min_max(op: str, x: float, y: float) -> float:
    """maximumf/minimumf propagate NaN, maxnumf/minnumf return the other operand; all order
    -0.0 below +0.0."""
    if math.isnan(x) or math.isnan(y):
        if op in ("maximumf", "minimumf") or (math.isnan(x) and math.isnan(y)):
            return NAN
        return y if math.isnan(x) else x
    larger = op in ("maximumf", "maxnumf")
    if x == y:  # equal, or zeros of either sign: the larger has no sign bit
        return x if (math.copysign(1, x) > 0) == larger else y
    return max(x, y) if larger else min(x, y)


def float_reference(op: str, x: Any, y: Any, t: str) -> Any:
    """One op on values of type `t`; f16/bf16 compute in f32 (exact for these ops, then one
    rounding), f32/f64 in their own type."""
    dtype = NP_FLOAT[t]
    wide = np.float32 if t in ("f16", "bf16") else dtype
    a, b = wide(x), wide(y)
    with np.errstate(all="ignore"):
        if op in ("maximumf", "minimumf", "maxnumf", "minnumf"):
            return dtype(min_max(op, float(a), float(b)))
        fn = {"addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
              "remf": np.fmod}[op]
        return np.asarray(fn(a, b)).astype(dtype)




def float_program(ops: list[str], t: str, n: int) -> str:
    unary = [("negf", "%negf = arith.negf %a : {a}")]
    return scalar_and_tensor(
        [(op, f"%{op} = arith.{op} %a, %b : {{a}}") for op in ops] + unary, ["a", "b"],
        {"a": t, "b": t}, {op: t for op in [*ops, "negf"]}, n)


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64"])
def test_float_binary_ops_and_negf(run: Runner, t: str) -> None:
    dtype = NP_FLOAT[t]
    with np.errstate(over="ignore"):
        xs = np.array([a for a, _ in FLOAT_PAIRS], np.float64).astype(dtype)
        ys = np.array([b for _, b in FLOAT_PAIRS], np.float64).astype(dtype)
    source = float_program(FLOAT_BINARY, t, len(FLOAT_PAIRS))
    expected = [[float_reference(op, x, y, t) for x, y in zip(xs, ys)] for op in FLOAT_BINARY]
    expected.append([-x for x in xs])
    got = run(source, "tensors", xs, ys)
    for op, e, g in zip([*FLOAT_BINARY, "negf"], expected, got):
        assert g.dtype == np.dtype(dtype), op
        for k in range(len(xs)):
            assert same_float(g[k], e[k]), (op, xs[k], ys[k], g[k], e[k])
    for k in range(len(xs)):
        scalars = run(source, "scalars", float(xs[k]), float(ys[k]))
        for op, e, g in zip([*FLOAT_BINARY, "negf"], expected, scalars):
            assert same_float(g, e[k]), (op, xs[k], ys[k], g, e[k])


CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
        "ule", "une", "uno", "true"]


def cmpf_reference(predicate: str, x: float, y: float) -> bool:
    unordered = math.isnan(x) or math.isnan(y)
    if predicate in ("false", "true"):
        return predicate == "true"
    if predicate in ("ord", "uno"):
        return unordered == (predicate == "uno")
    base = {"eq": x == y, "gt": x > y, "ge": x >= y, "lt": x < y, "le": x <= y,
            "ne": x != y}[predicate[1:]]
    return (base or unordered) if predicate[0] == "u" else (base and not unordered)


@pytest.mark.parametrize("t", ["f16", "f64"])
def test_cmpf_every_predicate(run: Runner, t: str) -> None:
    dtype = NP_FLOAT[t]
    xs = np.array([a for a, _ in FLOAT_PAIRS], np.float64).astype(dtype)
    ys = np.array([b for _, b in FLOAT_PAIRS], np.float64).astype(dtype)
    source = scalar_and_tensor(
        [(p, f"%{p} = arith.cmpf {p}, %a, %b : {{a}}") for p in CMPF], ["a", "b"],
        {"a": t, "b": t}, {p: "i1" for p in CMPF}, len(xs))
    got = run(source, "tensors", xs, ys)
    for p, g in zip(CMPF, got):
        assert list(g) == [cmpf_reference(p, float(x), float(y)) for x, y in zip(xs, ys)], p
    assert [bool(g) for g in run(source, "scalars", NAN, 1.0)] == \
        [cmpf_reference(p, NAN, 1.0) for p in CMPF]


# --- casts --------------------------------------------------------------------------------------

INT_CASTS = [
    ("extui", "%extui = arith.extui %a : {i8} to {i32}", "i32"),
    ("extsi", "%extsi = arith.extsi %a : {i8} to {i64}", "i64"),
    ("ext1", "%ext1 = arith.extsi %c : {i1} to {i32}", "i32"),
    ("zext1", "%zext1 = arith.extui %c : {i1} to {i8}", "i8"),
    ("trunci", "%trunci = arith.trunci %w : {i32} to {i8}", "i8"),
    ("trunc1", "%trunc1 = arith.trunci %w : {i32} to {i1}", "i1"),
    ("idx", "%idx = arith.index_cast %w : {i32} to {index}", None),
    ("idxu", "%idxu = arith.index_castui %w : {i32} to {index}", None),
    ("back", "%back = arith.index_cast %idx : {index} to {i64}", "i64"),
    ("backu", "%backu = arith.index_cast %idxu : {index} to {i64}", "i64"),
    ("narrow", "%narrow = arith.index_castui %idx : {index} to {i8}", "i8"),
]


def int_cast_reference(a: int, c: int, w: int) -> list[int]:
    return [unsigned(a, 8), a, c, unsigned(c, 1), wrap(w, 8), wrap(w, 1), w, unsigned(w, 32),
            wrap(w, 8)]


@pytest.mark.parametrize("shaped", [False, True], ids=["scalars", "tensors"])
def test_integer_casts(run: Runner, shaped: bool) -> None:
    cases = [(-1, -1, -1), (127, 0, 300), (-128, -1, -(2**31)), (5, 0, 2**31 - 1), (0, -1, -129)]
    n = len(cases)
    ty = (lambda s: tensor_type(s, n)) if shaped else (lambda s: s)
    fields = {k: ty(k) for k in ("i1", "i8", "i32", "i64", "index")}
    results = [(name, ty(t)) for name, _, t in INT_CASTS if t is not None]
    source = program("f", [("a", ty("i8")), ("c", ty("i1")), ("w", ty("i32"))],
                     [line.format(**fields) for _, line, _ in INT_CASTS], results)
    kinds = [t for _, _, t in INT_CASTS if t is not None]
    if shaped:
        got = run(source, "f", array([a for a, _, _ in cases], "i8"),
                  array([c for _, c, _ in cases], "i1"), array([w for _, _, w in cases], "i32"))
        for k, kind in enumerate(kinds):
            assert as_ints(got[k], kind) == [int_cast_reference(*c)[k] for c in cases], \
                results[k][0]
    else:
        for case in cases:
            got = run(source, "f", case[0], bool(case[1]), case[2])
            assert [as_int(g, k) for g, k in zip(got, kinds)] == int_cast_reference(*case), case


@pytest.mark.parametrize("shaped", [False, True], ids=["scalars", "tensors"])
def test_float_casts_round_once(run: Runner, shaped: bool) -> None:
    # Values whose rounding through f32 would land on a tie and then round the wrong way.
    values = [1 + 2**-8 + 2**-40, 1 + 2**-11 + 2**-40, -(1 + 2**-8 + 2**-30), 3.14159265358979,
              70000.0, 65519.0, 65520.0, -0.0, NAN, INF, 1e-3, 3.4e38]
    n = len(values)
    ty = (lambda s: tensor_type(s, n)) if shaped else (lambda s: s)
    targets = ["f32", "f16", "bf16"]
    lines = [f"%{t} = arith.truncf %x : {ty('f64')} to {ty(t)}" for t in targets]
    lines += [f"%up_{t} = arith.extf %{t} : {ty(t)} to {ty('f64')}" for t in ("f16", "bf16")]
    results = [(t, ty(t)) for t in targets] + [(f"up_{t}", ty("f64")) for t in ("f16", "bf16")]
    source = program("f", [("x", ty("f64"))], lines, results)
    expected = [[round_to(v, t) for v in values] for t in targets]
    expected += [[np.float64(e) for e in expected[1]], [np.float64(e) for e in expected[2]]]
    if shaped:
        got = run(source, "f", np.array(values))
        rows = [[g[k] for g in got] for k in range(n)]
    else:
        rows = [run(source, "f", v) for v in values]
    for k, row in enumerate(rows):
        for name, g, e in zip([r for r, _ in results], row, [col[k] for col in expected]):
            assert same_float(g, e), (name, values[k], g, e)


INT_FLOAT = [
    ("si32", "%si32 = arith.sitofp %w : {i32} to {f32}", "f32"),
    ("ui32", "%ui32 = arith.uitofp %w : {i32} to {f32}", "f32"),
    ("sbf", "%sbf = arith.sitofp %w : {i32} to {bf16}", "bf16"),
    ("ubf", "%ubf = arith.uitofp %w : {i32} to {bf16}", "bf16"),
    ("sh", "%sh = arith.sitofp %a : {i8} to {f16}", "f16"),
    ("uh", "%uh = arith.uitofp %a : {i8} to {f16}", "f16"),
    ("sd", "%sd = arith.sitofp %l : {i64} to {f64}", "f64"),
    ("ud", "%ud = arith.uitofp %l : {i64} to {f64}", "f64"),
]


def int_to_float_reference(w: int, a: int, big: int) -> list[Any]:
    return [round_to(float(w), "f32"), round_to(float(unsigned(w, 32)), "f32"),
            round_to(float(w), "bf16"), round_to(float(unsigned(w, 32)), "bf16"),
            np.float16(a), np.float16(unsigned(a, 8)), np.float64(big),
            np.float64(unsigned(big, 64))]


@pytest.mark.parametrize("shaped", [False, True], ids=["scalars", "tensors"])
def test_integer_to_float(run: Runner, shaped: bool) -> None:
    # 2^24 + 2^16 + 1 rounds to 2^24 + 2^17 in bf16; through f32 it would tie and round down.
    cases = [(2**24 + 2**16 + 1, -1, -(2**63)), (-(2**31), -128, 2**62 + 1), (7, 127, -5),
             (2**31 - 1, 0, 2**53 + 1)]
    n = len(cases)
    ty = (lambda s: tensor_type(s, n)) if shaped else (lambda s: s)
    fields = {k: ty(k) for k in ("i8", "i32", "i64", "f16", "bf16", "f32", "f64")}
    source = program("f", [("w", ty("i32")), ("a", ty("i8")), ("l", ty("i64"))],
                     [line.format(**fields) for _, line, _ in INT_FLOAT],
                     [(name, ty(t)) for name, _, t in INT_FLOAT])
    if shaped:
        got = run(source, "f", array([c[0] for c in cases], "i32"),
                  array([c[1] for c in cases], "i8"), array([c[2] for c in cases], "i64"))
        rows = [[g[k] for g in got] for k in range(n)]
    else:
        rows = [run(source, "f", *case) for case in cases]
    for case, row in zip(cases, rows):
        for (name, _, _), g, e in zip(INT_FLOAT, row, int_to_float_reference(*case)):
            assert same_float(g, e), (name, case, g, e)


FLOAT_INT = [
    ("s8", "%s8 = arith.fptosi %x : {f32} to {i8}", "i8"),
    ("u8", "%u8 = arith.fptoui %x : {f32} to {i8}", "i8"),
    ("s64", "%s64 = arith.fptosi %d : {f64} to {i64}", "i64"),
    ("u64", "%u64 = arith.fptoui %d : {f64} to {i64}", "i64"),
    ("s16", "%s16 = arith.fptosi %h : {f16} to {i16}", "i16"),
    ("u1", "%u1 = arith.fptoui %x : {f32} to {i1}", "i1"),
]


def saturate(x: float, bits: int, signed: bool) -> int:
    """fptosi/fptoui: toward zero, saturated to the range, NaN is 0; as the signed reading."""
    if math.isnan(x):
        return 0
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    v = lo if x == -INF else hi if x == INF else int(x)
    return wrap(min(max(v, lo), hi), bits)


@pytest.mark.parametrize("shaped", [False, True], ids=["scalars", "tensors"])
def test_float_to_integer_saturates(run: Runner, shaped: bool) -> None:
    values = [1e10, -1e10, NAN, 3e9, -2.5, 127.9, 128.0, -129.0, 255.5, 0.99, INF, -INF, 1e19,
              2e19, -0.0]
    n = len(values)
    ty = (lambda s: tensor_type(s, n)) if shaped else (lambda s: s)
    fields = {k: ty(k) for k in ("i1", "i8", "i16", "i64", "f16", "f32", "f64")}
    source = program("f", [("x", ty("f32")), ("d", ty("f64")), ("h", ty("f16"))],
                     [line.format(**fields) for _, line, _ in FLOAT_INT],
                     [(name, ty(t)) for name, _, t in FLOAT_INT])
    with np.errstate(over="ignore"):
        x32, h16 = np.array(values, np.float32), np.array(values, np.float16)
    x64 = np.array(values, np.float64)
    if shaped:
        got = run(source, "f", x32, x64, h16)
        rows = [[g[k] for g in got] for k in range(n)]
    else:
        rows = [run(source, "f", float(x32[k]), float(x64[k]), float(h16[k])) for k in range(n)]
    for k, row in enumerate(rows):
        expected = [saturate(float(x32[k]), 8, True), saturate(float(x32[k]), 8, False),
                    saturate(x64[k], 64, True), saturate(x64[k], 64, False),
                    saturate(float(h16[k]), 16, True), saturate(float(x32[k]), 1, False)]
        kinds = [t for _, _, t in FLOAT_INT]
        assert [as_int(g, t) for g, t in zip(row, kinds)] == expected, values[k]


@pytest.mark.parametrize("shaped", [False, True], ids=["scalars", "tensors"])
def test_bitcast_both_ways(run: Runner, shaped: bool) -> None:
    ty = (lambda s: tensor_type(s, 3)) if shaped else (lambda s: s)
    source = program("f", [("f", ty("f32")), ("h", ty("f16")), ("b", ty("bf16")), ("d", ty("f64"))], [
        f"%fi = arith.bitcast %f : {ty('f32')} to {ty('i32')}",
        f"%hi = arith.bitcast %h : {ty('f16')} to {ty('i16')}",
        f"%bi = arith.bitcast %b : {ty('bf16')} to {ty('i16')}",
        f"%di = arith.bitcast %d : {ty('f64')} to {ty('i64')}",
        f"%bh = arith.bitcast %bi : {ty('i16')} to {ty('f16')}",
        f"%fd = arith.bitcast %fi : {ty('i32')} to {ty('f32')}",
    ], [("fi", ty("i32")), ("hi", ty("i16")), ("bi", ty("i16")), ("di", ty("i64")),
        ("bh", ty("f16")), ("fd", ty("f32"))])
    f = np.array([1.0, -0.0, NAN], np.float32)
    h = np.array([1.0, -2.5, INF], np.float16)
    b = np.array([3.0, -0.0, -2.0], ml_dtypes.bfloat16)  # bits that are no f16 NaN
    d = np.array([1e300, -0.0, 5e-324])
    expected = [f.view(np.int32), h.view(np.int16), b.view(np.int16), d.view(np.int64),
                b.view(np.int16).view(np.float16), f]
    if shaped:
        got = run(source, "f", f, h, b, d)
        for g, e in zip(got, expected):
            assert g.tobytes() == np.asarray(e).tobytes()
    else:
        for k in range(3):
            got = run(source, "f", float(f[k]), float(h[k]), float(b[k]), float(d[k]))
            for g, e in zip(got, expected):
                assert np.asarray(g).tobytes() == np.asarray(e)[k].tobytes()


# --- scaling casts ------------------------------------------------------------------------------

def mx_scale(s: float) -> float:
    """The power of two an OCP MX scale holds: 2^(e-127) for the exponent field e of s as f32,
    2^-127 for a zero field, NaN for an all-ones one."""
    e = (int(np.array(s, np.float32).view(np.uint32)) >> 23) & 0xFF
    return NAN if e == 0xFF else math.ldexp(1.0, (e if e else 0) - 127)


SCALES = [1.0, 2.0, 0.75, 3.0, -4.0, INF, NAN, 0.0, 2.0**-130, 1e30, 2.0**-100, 65504.0]


@pytest.mark.parametrize("shaped", [False, True], ids=["scalars", "tensors"])
def test_scaling_extf_and_truncf(run: Runner, shaped: bool) -> None:
    n = len(SCALES)
    ty = (lambda s: tensor_type(s, n)) if shaped else (lambda s: s)
    source = program("f", [("h", ty("f16")), ("x", ty("f32")), ("s", ty("f32")),
                           ("sd", ty("f64"))], [
        f"%ext = arith.scaling_extf %h, %s : {ty('f16')}, {ty('f32')} to {ty('f32')}",
        f"%extd = arith.scaling_extf %h, %sd : {ty('f16')}, {ty('f64')} to {ty('f64')}",
        f"%trh = arith.scaling_truncf %x, %s : {ty('f32')}, {ty('f32')} to {ty('f16')}",
        f"%trb = arith.scaling_truncf %x, %sd fastmath<fast> : {ty('f32')}, {ty('f64')} to {ty('bf16')}",
    ], [("ext", ty("f32")), ("extd", ty("f64")), ("trh", ty("f16")), ("trb", ty("bf16"))])
    h = np.linspace(-3, 5, n).astype(np.float16)
    x = np.linspace(-1000, 7000, n).astype(np.float32)
    s = np.array(SCALES, np.float32)
    sd = np.array(SCALES, np.float64)
    with np.errstate(all="ignore"):
        p32 = np.array([mx_scale(v) for v in s], np.float32)  # 2^-127 is an f32 subnormal
        p64 = np.array([mx_scale(float(np.float32(v))) for v in sd], np.float64)
        expected = [h.astype(np.float32) * p32, h.astype(np.float64) * p64,
                    [round_to(float(v), "f16") for v in x / p32],
                    [round_to(float(v), "bf16") for v in x / p64.astype(np.float32)]]
    if shaped:
        got = run(source, "f", h, x, s, sd)
        rows = [[g[k] for g in got] for k in range(n)]
    else:
        rows = [run(source, "f", float(h[k]), float(x[k]), float(s[k]), float(sd[k]))
                for k in range(n)]
    for k, row in enumerate(rows):
        for name, g, e in zip(["ext", "extd", "trh", "trb"], row, [col[k] for col in expected]):
            assert same_float(g, e), (name, SCALES[k], g, e)


def test_f16_rounds_after_every_op_in_a_dispatch(run: Runner) -> None:
    # 1024 + 0.5 is a tie in f16 and rounds to 1024, so (a + b) - a is 0, not 0.5.
    source = """
    func.func @chain(%a: tensor<2xf16>, %b: tensor<2xf16>, %p: tensor<2xbf16>, %q: tensor<2xbf16>)
        -> (tensor<2xf16>, tensor<2xbf16>) {
      %0 = arith.addf %a, %b : tensor<2xf16>
      %1 = arith.subf %0, %a : tensor<2xf16>
      %2 = arith.addf %p, %q : tensor<2xbf16>
      %3 = arith.subf %2, %p : tensor<2xbf16>
      return %1, %3 : tensor<2xf16>, tensor<2xbf16>
    }"""
    a, b = np.array([1024, 1], np.float16), np.array([0.5, 0.5], np.float16)
    p, q = np.array([256, 1], ml_dtypes.bfloat16), np.array([1, 1], ml_dtypes.bfloat16)
    h, bf = run(source, "chain", a, b, p, q)
    np.testing.assert_array_equal(h, np.array([0, 0.5], np.float16))
    np.testing.assert_array_equal(bf, np.array([0, 1], ml_dtypes.bfloat16))


def test_a_rounding_mode_other_than_nearest_even_is_a_located_error() -> None:
    source = """func.func @f(%x: f32) -> f16 {
  %0 = arith.truncf %x downward : f32 to f16
  return %0 : f16
}"""
    with pytest.raises(CompileError, match=r"t.mlir:2:3: error: 'arith.truncf' with rounding "
                                           r"mode downward is not supported"):
        weir.compile_string(source, "t.mlir")

