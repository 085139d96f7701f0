"""Scalars on the host and across the host/device boundary, end to end on every target and driver
(the `run` fixture): scalar arguments and results of every type, arith/math on host scalars with
exact integer wrap-around and float rounding, host scalars captured by dispatches (push constants),
and tensors built from or read into scalars. Integers compare exactly; floats exactly where one
correctly rounded op gives them, within a stated tolerance for transcendental functions."""

from __future__ import annotations

from typing import Callable

import ml_dtypes
import numpy as np
import pytest

import weir.api as weir
from weir.errors import InputError

Runner = Callable[..., object]  # the `run` fixture (conftest.py)
RNG = np.random.default_rng(11)

INT_TYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}
FLOAT_TYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
               "f64": np.float64}


def _wrap(x: int, bits: int) -> int:
    return ((x + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))


INT_OPS = ["addi", "subi", "muli", "divsi", "remsi", "divui", "remui", "andi", "ori", "xori",
           "maxsi", "minsi", "maxui", "minui"]


def _int_reference(op: str, a: int, b: int, bits: int) -> int:
    u = lambda x: x % (1 << bits)  # noqa: E731
    quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return _wrap({
        "addi": a + b, "subi": a - b, "muli": a * b, "divsi": quotient,
        "remsi": a - b * quotient, "divui": u(a) // u(b), "remui": u(a) % u(b),
        "andi": a & b, "ori": a | b, "xori": a ^ b, "maxsi": max(a, b), "minsi": min(a, b),
        "maxui": max(u(a), u(b)), "minui": min(u(a), u(b)),
    }[op], bits)


@pytest.mark.parametrize("t", INT_TYPES)
def test_integer_arith_wraps_at_the_width(run: Runner, t: str) -> None:
    lines = "\n".join(f"  %{op} = arith.{op} %a, %b : {t}" for op in INT_OPS)
    shifts = "\n".join(f"  %{op} = arith.{op} %a, %s : {t}" for op in ("shli", "shrsi", "shrui"))
    names = INT_OPS + ["shli", "shrsi", "shrui"]
    src = f"""
    func.func @ints(%a: {t}, %b: {t}, %s: {t}) -> ({", ".join([t] * len(names))}) {{
    {lines}
    {shifts}
      return {", ".join("%" + n for n in names)} : {", ".join([t] * len(names))}
    }}"""
    bits = int(t[1:])
    big = (1 << (bits - 1)) - 1
    for a, b, s in [(big - 3, 100, 3), (-100, 7, 2), (-(big + 1), -1, 1)]:
        got = run(src, "ints", a, b, s)
        expected = [_int_reference(op, a, b, bits) for op in INT_OPS]
        expected += [_wrap(a << s, bits), a >> s, _wrap((a % (1 << bits)) >> s, bits)]
        assert [int(g) for g in got] == expected, (a, b, s)  # type: ignore[union-attr]
        assert all(g.dtype == INT_TYPES[t] for g in got)  # type: ignore[union-attr]


def test_cmpi_every_predicate_and_select(run: Runner) -> None:
    predicates = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
    lines = "\n".join(f"  %{p} = arith.cmpi {p}, %a, %b : i16" for p in predicates)
    src = f"""
    func.func @cmp(%a: i16, %b: i16) -> ({", ".join(["i1"] * 10)}, i16) {{
    {lines}
      %pick = arith.select %ult, %a, %b : i16
      return {", ".join("%" + p for p in predicates)}, %pick : {", ".join(["i1"] * 10)}, i16
    }}"""
    for a, b in [(-1, 1), (3, 3), (5, -7)]:
        ua, ub = a % 65536, b % 65536
        expected = [a == b, a != b, a < b, a <= b, a > b, a >= b, ua < ub, ua <= ub, ua > ub,
                    ua >= ub]
        got = run(src, "cmp", a, b)
        assert [bool(g) for g in got[:10]] == expected  # type: ignore[index]
        assert got[10] == (a if ua < ub else b)  # type: ignore[index]


# (arith.remf is missing from xDSL 0.74's arith dialect, so no program can spell it.)
FLOAT_OPS = ["addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf", "minnumf"]


@pytest.mark.parametrize("t", FLOAT_TYPES)
def test_float_arith_rounds_to_the_type(run: Runner, t: str) -> None:
    lines = "\n".join(f"  %{op} = arith.{op} %a, %b : {t}" for op in FLOAT_OPS)
    src = f"""
    func.func @floats(%a: {t}, %b: {t}) -> ({", ".join([t] * 10)}) {{
    {lines}
      %negf = arith.negf %a : {t}
      %absf = math.absf %negf : {t}
      return {", ".join("%" + n for n in FLOAT_OPS)}, %negf, %absf : {", ".join([t] * 10)}
    }}"""
    dtype = FLOAT_TYPES[t]
    # 16-bit types compute in f32 and round once, which gives the correctly rounded result of
    # each of these ops; f32 and f64 are numpy's own.
    wide = np.float32 if t in ("f16", "bf16") else dtype
    for a, b in [(0.1, 0.7), (-3.3, 1.9), (1e3, -7e-3)]:
        x, y = dtype(a), dtype(b)
        xw, yw = wide(x), wide(y)
        expected = [xw + yw, xw - yw, xw * yw, xw / yw, np.maximum(xw, yw),
                    np.minimum(xw, yw), np.fmax(xw, yw), np.fmin(xw, yw), -xw, np.abs(xw)]
        got = run(src, "floats", float(x), float(y))
        for g, e in zip(got, expected):  # type: ignore[call-overload]
            assert g.dtype == np.dtype(dtype)
            with np.errstate(over="ignore"):  # 1e3 / -7e-3 is -inf in f16
                assert g == dtype(e), (t, a, b, g, e)


def test_cmpf_every_predicate_with_nan(run: Runner) -> None:
    predicates = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
                  "ult", "ule", "une", "uno", "true"]
    lines = "\n".join(f"  %{p} = arith.cmpf {p}, %a, %b : f32" for p in predicates)
    src = f"""
    func.func @cmpf(%a: f32, %b: f32) -> ({", ".join(["i1"] * 16)}) {{
    {lines}
      return {", ".join("%" + p for p in predicates)} : {", ".join(["i1"] * 16)}
    }}"""
    for a, b in [(1.0, 2.0), (2.0, 2.0), (float("nan"), 1.0)]:
        unordered = np.isnan(a) or np.isnan(b)
        base = {"eq": a == b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b, "ne": a != b}
        expected = [False] + [base[p[1:]] and not unordered for p in predicates[1:7]] + \
            [not unordered] + [base[p[1:]] or unordered for p in predicates[8:14]] + \
            [unordered, True]
        assert [bool(g) for g in run(src, "cmpf", a, b)] == expected  # type: ignore[union-attr]


MATH = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin,
        "cos": np.cos, "exp2": np.exp2, "log2": np.log2, "log1p": np.log1p,
        "rsqrt": lambda x: 1 / np.sqrt(x), "floor": np.floor, "ceil": np.ceil,
        "roundeven": np.rint}


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_math_on_host_scalars(run: Runner, t: str) -> None:
    lines = "\n".join(f"  %{name} = math.{name} %a : {t}" for name in MATH)
    src = f"""
    func.func @math(%a: {t}, %b: {t}) -> ({", ".join([t] * (len(MATH) + 2))}) {{
    {lines}
      %pow = math.powf %a, %b : {t}
      %fma = math.fma %a, %b, %a : {t}
      return {", ".join("%" + n for n in MATH)}, %pow, %fma : {", ".join([t] * (len(MATH) + 2))}
    }}"""
    dtype = FLOAT_TYPES[t]
    a, b = dtype(2.37), dtype(-0.61)
    expected = [f(a) for f in MATH.values()] + [np.power(a, b), a * b + a]
    got = run(src, "math", float(a), float(b))
    # Tolerance: a few ulps of the type (transcendentals are not correctly rounded).
    np.testing.assert_allclose(np.array(got, np.float64), np.array(expected, np.float64),
                               rtol=4 * float(np.finfo(dtype).eps))


def test_casts_between_scalar_types(run: Runner) -> None:
    src = """
    func.func @casts(%i8: i8, %i32: i32, %f32: f32, %f16: f16, %f64: f64, %i16: i16)
        -> (i32, i32, i8, f32, f32, i16, i8, f64, bf16, i32, index, i16, f16) {
      %extsi = arith.extsi %i8 : i8 to i32
      %extui = arith.extui %i8 : i8 to i32
      %trunci = arith.trunci %i32 : i32 to i8
      %sitofp = arith.sitofp %i32 : i32 to f32
      %uitofp = arith.uitofp %i8 : i8 to f32
      %fptosi = arith.fptosi %f32 : f32 to i16
      %neg = arith.negf %f32 : f32
      %fptoui = arith.fptoui %neg : f32 to i8
      %extf = arith.extf %f16 : f16 to f64
      %truncf = arith.truncf %f64 : f64 to bf16
      %bitcast = arith.bitcast %f32 : f32 to i32
      %to_index = arith.index_cast %i32 : i32 to index
      %from_index = arith.index_cast %to_index : index to i16
      %half = arith.bitcast %i16 : i16 to f16
      return %extsi, %extui, %trunci, %sitofp, %uitofp, %fptosi, %fptoui, %extf, %truncf,
             %bitcast, %to_index, %from_index, %half
          : i32, i32, i8, f32, f32, i16, i8, f64, bf16, i32, index, i16, f16
    }"""
    got = run(src, "casts", -3, 70000, -7.75, 0.1, 3.14159265, 0x3C00)
    f32 = np.float32(-7.75)
    expected = [-3, 253, _wrap(70000, 8), 70000.0, 253.0, -7, 7, float(np.float16(0.1)),
                float(ml_dtypes.bfloat16(3.14159265)), int(f32.view(np.int32)), 70000,
                _wrap(70000, 16), 1.0]
    assert [g.item() for g in got] == expected  # type: ignore[union-attr]


def test_scalar_arguments_and_results_of_every_type(run: Runner) -> None:
    types = ["i1", "i8", "i16", "i32", "i64", "index", "f16", "bf16", "f32", "f64"]
    body = ["  %r0 = arith.xori %a0, %true : i1"]
    for k, t in enumerate(types[1:], start=1):
        if t.startswith("f") or t == "bf16":
            body.append(f"  %one{k} = arith.constant 1.0 : {t}")
            body.append(f"  %r{k} = arith.addf %a{k}, %one{k} : {t}")
        else:
            body.append(f"  %one{k} = arith.constant 1 : {t}")
            body.append(f"  %r{k} = arith.addi %a{k}, %one{k} : {t}")
    args = ", ".join(f"%a{k}: {t}" for k, t in enumerate(types))
    src = f"""
    func.func @each({args}) -> ({", ".join(types)}) {{
      %true = arith.constant true
    {chr(10).join(body)}
      return {", ".join(f"%r{k}" for k in range(len(types)))} : {", ".join(types)}
    }}"""
    inputs = [True, 127, -32768, 2**31 - 1, 2**63 - 1, 41, np.float16(0.5), 2.5,
              np.float32(1.25), 1e300]
    got = run(src, "each", *inputs)
    # An i1 result comes back as the i32 IREE's VM holds it in.
    dtypes = [np.int32, np.int8, np.int16, np.int32, np.int64, np.int64, np.float16,
              ml_dtypes.bfloat16, np.float32, np.float64]
    expected = [False, -128, -32767, -(2**31), -(2**63), 42, 1.5, 3.5, 2.25, 1e300 + 1]
    for g, dt, e in zip(got, dtypes, expected):  # type: ignore[call-overload]
        assert g.dtype == np.dtype(dt) and g == e


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64", "i8", "i32"])
def test_generic_body_uses_a_host_scalar(run: Runner, t: str) -> None:
    is_float = t in FLOAT_TYPES
    add, mul = ("arith.addf", "arith.mulf") if is_float else ("arith.addi", "arith.muli")
    one = "1.0" if is_float else "1"
    src = f"""
    func.func @scale(%x: tensor<8x{t}>, %s: {t}) -> tensor<8x{t}> {{
      %one = arith.constant {one} : {t}
      %k = {add} %s, %one : {t}
      %e = tensor.empty() : tensor<8x{t}>
      %0 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}}
          ins(%x : tensor<8x{t}>) outs(%e : tensor<8x{t}>) {{
      ^bb0(%v: {t}, %o: {t}):
        %y = {mul} %v, %k : {t}
        linalg.yield %y : {t}
      }} -> tensor<8x{t}>
      return %0 : tensor<8x{t}>
    }}"""
    dtype = FLOAT_TYPES.get(t) or INT_TYPES[t]
    if is_float:
        x = RNG.standard_normal(8).astype(dtype)
        s = dtype(1.7)
        k = np.float32(s) + np.float32(1) if t in ("f16", "bf16") else s + dtype(1)
        expected = (np.float32(x) * np.float32(dtype(k))).astype(dtype) if t in ("f16", "bf16") \
            else x * dtype(k)
        got = run(src, "scale", x, float(s))
    else:
        x = RNG.integers(-100, 100, 8).astype(dtype)
        expected = (x.astype(np.int64) * 101).astype(dtype)  # wraps like the kernel
        got = run(src, "scale", x, 100)
    assert got.dtype == np.dtype(dtype)  # type: ignore[union-attr]
    np.testing.assert_array_equal(got, expected)


def test_fill_with_a_host_computed_value_of_dynamic_size(run: Runner) -> None:
    src = """
    func.func @fill(%n: index, %a: f32, %b: f32) -> tensor<?xf32> {
      %v = arith.mulf %a, %b : f32
      %e = tensor.empty(%n) : tensor<?xf32>
      %0 = linalg.fill ins(%v : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }"""
    np.testing.assert_array_equal(run(src, "fill", 5, 1.5, -3.0), np.full(5, -4.5, np.float32))


def test_splat_of_a_host_scalar_feeds_elementwise_math(run: Runner) -> None:
    src = """
    func.func @splat(%x: tensor<2x3xi16>, %s: i16) -> tensor<2x3xi16> {
      %two = arith.constant 2 : i16
      %t = arith.shli %s, %two : i16
      %sp = tensor.splat %t : tensor<2x3xi16>
      %0 = arith.subi %x, %sp : tensor<2x3xi16>
      return %0 : tensor<2x3xi16>
    }"""
    x = np.arange(6, dtype=np.int16).reshape(2, 3) - 32767
    np.testing.assert_array_equal(run(src, "splat", x, 3), (x.astype(np.int32) - 12)
                                  .astype(np.int16))


def test_extract_drives_a_host_loop(run: Runner) -> None:
    src = """
    func.func @grow(%a: tensor<4xf32>, %limit: f32) -> (tensor<4xf32>, i32, f32) {
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %r:2 = scf.while (%x = %a, %n = %zero) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32) {
        %e = tensor.extract %x[%c0] : tensor<4xf32>
        %go = arith.cmpf olt, %e, %limit : f32
        scf.condition(%go) %x, %n : tensor<4xf32>, i32
      } do {
      ^bb0(%y: tensor<4xf32>, %m: i32):
        %z = arith.addf %y, %y : tensor<4xf32>
        %m1 = arith.addi %m, %one : i32
        scf.yield %z, %m1 : tensor<4xf32>, i32
      }
      %c3 = arith.constant 3 : index
      %last = tensor.extract %r#0[%c3] : tensor<4xf32>
      return %r#0, %r#1, %last : tensor<4xf32>, i32, f32
    }"""
    a = np.array([3, 1, 2, 4], np.float32)
    out, count, last = run(src, "grow", a, 100.0)  # type: ignore[misc]
    np.testing.assert_array_equal(out, a * 64)
    assert count == 6 and last == 256.0


def test_insert_and_from_elements_with_host_positions(run: Runner) -> None:
    src = """
    func.func @build(%t: tensor<3x4xi32>, %i: index, %j: index, %v: i32, %w: i32)
        -> (tensor<3x4xi32>, tensor<2x2xi32>) {
      %ins = tensor.insert %v into %t[%i, %j] : tensor<3x4xi32>
      %c7 = arith.constant 7 : i32
      %sum = arith.addi %v, %w : i32
      %fe = tensor.from_elements %v, %w, %c7, %sum : tensor<2x2xi32>
      return %ins, %fe : tensor<3x4xi32>, tensor<2x2xi32>
    }"""
    t = np.arange(12, dtype=np.int32).reshape(3, 4)
    ins, fe = run(src, "build", t, 2, 1, -5, 2**31 - 1)  # type: ignore[misc]
    expected = t.copy()
    expected[2, 1] = -5
    np.testing.assert_array_equal(ins, expected)
    np.testing.assert_array_equal(fe, [[-5, 2**31 - 1], [7, 2**31 - 6]])


def test_extract_from_every_dimension_of_a_dynamic_tensor(run: Runner) -> None:
    src = """
    func.func @pick(%t: tensor<?x?x2xi8>, %i: index, %j: index, %k: index) -> i8 {
      %0 = tensor.extract %t[%i, %j, %k] : tensor<?x?x2xi8>
      return %0 : i8
    }"""
    t = np.arange(-60, 0, dtype=np.int8).reshape(5, 6, 2)
    assert run(src, "pick", t, 3, 4, 1) == t[3, 4, 1]


def test_a_wrong_scalar_argument_is_one_clear_error() -> None:
    src = """
    func.func @f(%x: tensor<2xf32>, %n: i8, %s: f16) -> i8 {
      return %n : i8
    }"""
    f = weir.load([weir.compile_string(src, "f.mlir")], device="local-sync").lookup_function("f")
    x = np.zeros(2, np.float32)
    assert f(x, 255, 0.5) == -1  # signless: the unsigned reading of the bits is accepted
    with pytest.raises(InputError, match=r"argument 1 \(%input1\) expects i8, got float 2.5"):
        f(x, 2.5, 0.5)
    with pytest.raises(InputError, match=r"argument 1 \(%input1\) expects i8, got int 300"):
        f(x, 300, 0.5)
    with pytest.raises(InputError, match=r"argument 2 \(%input2\) expects f16, got a 2xfloat32"):
        f(x, 1, x)
    with pytest.raises(InputError, match=r"argument 2 \(%input2\) expects f16, got str"):
        f(x, 1, "0.5")


def test_host_comparison_selects_inside_a_dispatch(run: Runner) -> None:
    src = """
    func.func @clamp(%x: tensor<6xi64>, %lo: i64, %hi: i64) -> tensor<6xi64> {
      %swap = arith.cmpi sgt, %lo, %hi : i64
      %e = tensor.empty() : tensor<6xi64>
      %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}
          ins(%x : tensor<6xi64>) outs(%e : tensor<6xi64>) {
      ^bb0(%v: i64, %o: i64):
        %a = arith.select %swap, %hi, %lo : i64
        %b = arith.select %swap, %lo, %hi : i64
        %m = arith.maxsi %v, %a : i64
        %y = arith.minsi %m, %b : i64
        linalg.yield %y : i64
      } -> tensor<6xi64>
      return %0 : tensor<6xi64>
    }"""
    x = np.array([-2**62, -5, 0, 3, 9, 2**62], np.int64)
    np.testing.assert_array_equal(run(src, "clamp", x, -4, 8), np.clip(x, -4, 8))
    np.testing.assert_array_equal(run(src, "clamp", x, 8, -4), np.clip(x, -4, 8))


def test_float_to_constant_integer_powers_are_products(run: Runner) -> None:
    """math.fpowi by constants, as torch-mlir writes x**3 in GPT-2's GELU: the products MLIR's
    expansion multiplies, bit for bit (x * (x * x), torch's cube too), on every target."""
    src = """
    func.func @powers(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
      %c3 = arith.constant 3 : i64
      %cm2 = arith.constant -2 : i64
      %c0 = arith.constant 0 : i64
      %e = tensor.empty() : tensor<8xf32>
      %r:3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                              affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                             iterator_types = ["parallel"]}
          ins(%x : tensor<8xf32>) outs(%e, %e, %e : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
      ^bb0(%a: f32, %o0: f32, %o1: f32, %o2: f32):
        %p3 = math.fpowi %a, %c3 : f32, i64
        %pm2 = math.fpowi %a, %cm2 : f32, i64
        %p0 = math.fpowi %a, %c0 : f32, i64
        linalg.yield %p3, %pm2, %p0 : f32, f32, f32
      } -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
      return %r#0, %r#1, %r#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    }"""
    x = np.array([-1.5, 2.0, 0.1, 3.3e12, -7e-20, np.inf, np.nan, 0.0], np.float32)
    cube, inverse_square, unit = (np.asarray(r) for r in run(src, "powers", x))  # type: ignore[union-attr]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(cube, x * (x * x))
        np.testing.assert_array_equal(inverse_square, np.float32(1) / (x * x))
    np.testing.assert_array_equal(unit, np.ones(8, np.float32))


def test_float_to_integer_power_on_tensors(run: Runner) -> None:
    """math.fpowi in a generic body (torch-mlir writes x**3 so): negative bases keep the sign
    of odd powers, a zero exponent gives 1."""
    src = """
    func.func @fpowi(%x: tensor<6xf32>, %n: tensor<6xi64>) -> tensor<6xf32> {
      %e = tensor.empty() : tensor<6xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                            affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}
          ins(%x, %n : tensor<6xf32>, tensor<6xi64>) outs(%e : tensor<6xf32>) {
      ^bb0(%a: f32, %b: i64, %o: f32):
        %p = math.fpowi %a, %b : f32, i64
        linalg.yield %p : f32
      } -> tensor<6xf32>
      return %r : tensor<6xf32>
    }"""
    x = np.array([-1.5, 2.0, -3.0, 0.5, -2.0, 7.0], np.float32)
    n = np.array([3, 3, 2, -2, 0, 1], np.int64)
    got = run(src, "fpowi", x, n)
    np.testing.assert_allclose(np.asarray(got), x.astype(np.float64) ** n, rtol=4e-7)
