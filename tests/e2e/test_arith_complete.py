"""Every op of MLIR's arith dialect (ArithOps.td: constant, addi, addui_extended, subi, muli,
mulsi_extended, mului_extended, divui, divsi, ceildivui, ceildivsi, floordivsi, remui, remsi,
andi, ori, xori, shli, shrui, shrsi, negf, addf, subf, maximumf, maxnumf, maxsi, maxui,
minimumf, minnumf, minsi, minui, mulf, divf, remf, extui, extsi, extf, scaling_extf, trunci,
truncf, scaling_truncf, uitofp, sitofp, fptoui, fptosi, index_cast, index_castui, bitcast, cmpi,
cmpf, select), on host scalars and elementwise on tensors, on every target and driver (the `run`
fixture). Expected values are computed here from MLIR's definitions with Python integers and
floats, at the edges where implementations part ways: negative operands of floor/ceil division,
MIN / -1, shifts by the width or more, NaN and signed zeros in min/max, out-of-range
float-to-integer conversions, double rounding in float truncation. Where MLIR leaves a result
undefined, the expected value is the one weir/format/kernel_description.py defines. This file has
the integer ops, select, constants and flags; test_arith_complete_floats.py the float ops and
every cast."""

from __future__ import annotations

from typing import Any, Callable

import ml_dtypes
import numpy as np
import pytest
from arith_reference import (
    array,
    as_int,
    as_ints,
    INF,
    INT_BITS,
    NP_INT,
    program,
    same_float,
    scalar,
    scalar_and_tensor,
    tensor_type,
    unsigned,
    wrap,
)

from weir.errors import RuntimeFault

Runner = Callable[..., Any]  # the `run` fixture (conftest.py)


# --- integers -----------------------------------------------------------------------------------

INT_BINARY = ["addi", "subi", "muli", "divsi", "divui", "ceildivsi", "ceildivui", "floordivsi",
              "remsi", "remui", "andi", "ori", "xori", "shli", "shrsi", "shrui", "maxsi", "maxui",
              "minsi", "minui"]


def int_reference(op: str, a: int, b: int, bits: int) -> int:
    """MLIR's definition of each op on signed readings a, b of `bits`-bit values."""
    ua, ub = unsigned(a, bits), unsigned(b, bits)

    def toward_zero(x: int, y: int) -> int:
        q = abs(x) // abs(y)
        return q if (x < 0) == (y < 0) else -q

    def shift(kind: str) -> int:
        if ub >= bits:  # past the width: what shifting one bit at a time gives
            return -1 if kind == "shrsi" and a < 0 else 0
        return {"shli": a << ub, "shrsi": a >> ub, "shrui": ua >> ub}[kind]

    value = {
        "addi": lambda: a + b, "subi": lambda: a - b, "muli": lambda: a * b,
        "divsi": lambda: toward_zero(a, b), "divui": lambda: ua // ub,
        "ceildivsi": lambda: -((-a) // b), "ceildivui": lambda: -((-ua) // ub),
        "floordivsi": lambda: a // b, "remsi": lambda: a - b * toward_zero(a, b),
        "remui": lambda: ua % ub, "andi": lambda: a & b, "ori": lambda: a | b,
        "xori": lambda: a ^ b, "shli": lambda: shift("shli"), "shrsi": lambda: shift("shrsi"),
        "shrui": lambda: shift("shrui"), "maxsi": lambda: max(a, b), "maxui": lambda: max(ua, ub),
        "minsi": lambda: min(a, b), "minui": lambda: min(ua, ub),
    }[op]()
    return wrap(value, bits)


def int_pairs(bits: int) -> list[tuple[int, int]]:
    """Edge operand pairs, none with a zero divisor: signs of floor/ceil division, MIN / -1,
    MAX / -1, unsigned readings of negatives, shift amounts just below, at and past the width,
    and negative amounts (huge unsigned)."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    candidates = [(7, 2), (-7, 2), (7, -2), (-7, -2), (lo, -1), (lo, 1), (hi, -1), (hi, lo),
                  (0, 3), (-1, hi), (-5, bits - 1), (-5, bits), (3, bits + 1), (lo + 3, 5),
                  (6, 3), (-6, 3), (100, 7), (-100, -7)]
    pairs = [(wrap(a, bits), wrap(b, bits)) for a, b in candidates]
    return list(dict.fromkeys(p for p in pairs if p[1] != 0))


def int_program(ops: list[str], t: str, n: int) -> str:
    return scalar_and_tensor(
        [(op, f"%{op} = arith.{op} %a, %b : {{a}}") for op in ops], ["a", "b"],
        {"a": t, "b": t}, {op: t for op in ops}, n)


@pytest.mark.parametrize("t", ["i1", "i8", "i32", "i64"])
def test_integer_binary_ops(run: Runner, t: str) -> None:
    bits = INT_BITS[t]
    pairs = int_pairs(bits)
    source = int_program(INT_BINARY, t, len(pairs))
    expected = [[int_reference(op, a, b, bits) for a, b in pairs] for op in INT_BINARY]
    got = run(source, "tensors", array([a for a, _ in pairs], t), array([b for _, b in pairs], t))
    for op, e, g in zip(INT_BINARY, expected, got):
        assert g.dtype == np.dtype(NP_INT[t]), op
        assert as_ints(g, t) == e, (op, pairs)
    for k, (a, b) in enumerate(pairs):
        scalars = run(source, "scalars", scalar(a, t), scalar(b, t))
        assert [as_int(g, t) for g in scalars] == [e[k] for e in expected], (a, b)


def test_integer_binary_ops_on_index_scalars(run: Runner) -> None:
    source = program("f", [("a", "index"), ("b", "index")],
                     [f"%{op} = arith.{op} %a, %b : index" for op in INT_BINARY],
                     [(op, "index") for op in INT_BINARY])
    for a, b in int_pairs(64):
        got = run(source, "f", a, b)
        assert [int(g) for g in got] == [int_reference(op, a, b, 64) for op in INT_BINARY]


DIVISIONS = ["divsi", "divui", "ceildivsi", "ceildivui", "floordivsi", "remsi", "remui"]


def test_integer_division_by_zero_in_a_dispatch_gives_zero(run: Runner) -> None:
    source = int_program(DIVISIONS, "i32", 3)
    a, b = np.array([7, -7, -(2**31)], np.int32), np.zeros(3, np.int32)
    for op, g in zip(DIVISIONS, run(source, "tensors", a, b)):
        assert as_ints(g, "i32") == [0, 0, 0], op


@pytest.mark.parametrize("op", DIVISIONS)
def test_integer_division_by_zero_on_the_host_is_a_fault(run: Runner, op: str) -> None:
    source = program("f", [("a", "i16"), ("b", "i16")], [f"%r = arith.{op} %a, %b : i16"],
                     [("r", "i16")])
    assert int(run(source, "f", -9, 4)) == int_reference(op, -9, 4, 16)
    with pytest.raises(RuntimeFault, match=f"arith.{op}: i16 division by zero"):
        run(source, "f", -9, 0)


CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


def cmpi_reference(predicate: str, a: int, b: int, bits: int) -> bool:
    x, y = (a, b) if predicate[0] != "u" else (unsigned(a, bits), unsigned(b, bits))
    kind = predicate if predicate in ("eq", "ne") else predicate[1:]
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
            "ge": x >= y}[kind]


@pytest.mark.parametrize("t", ["i1", "i8", "i64"])
def test_cmpi_every_predicate(run: Runner, t: str) -> None:
    bits = INT_BITS[t]
    pairs = int_pairs(bits) + [(0, 0), (wrap(-1, bits), wrap(-1, bits))]
    source = scalar_and_tensor(
        [(p, f"%{p} = arith.cmpi {p}, %a, %b : {{a}}") for p in CMPI], ["a", "b"],
        {"a": t, "b": t}, {p: "i1" for p in CMPI}, len(pairs))
    got = run(source, "tensors", array([a for a, _ in pairs], t), array([b for _, b in pairs], t))
    for p, g in zip(CMPI, got):
        assert g.dtype == np.bool_
        assert list(g) == [cmpi_reference(p, a, b, bits) for a, b in pairs], p
    a, b = pairs[1]
    assert [bool(g) for g in run(source, "scalars", scalar(a, t), scalar(b, t))] == \
        [cmpi_reference(p, a, b, bits) for p in CMPI]


# --- extended arithmetic ------------------------------------------------------------------------

def extended_reference(a: int, b: int, bits: int) -> list[int]:
    """[addui sum, addui overflow (i1: -1 is true), mulsi low, mulsi high, mului low, mului high]."""
    ua, ub = unsigned(a, bits), unsigned(b, bits)
    total = ua + ub
    signed_product, unsigned_product = a * b, ua * ub
    return [wrap(total, bits), -1 if total >> bits else 0, wrap(signed_product, bits),
            wrap(signed_product >> bits, bits), wrap(unsigned_product, bits),
            wrap(unsigned_product >> bits, bits)]


EXTENDED_OPS = [
    ("sum", "%sum, %carry = arith.addui_extended %a, %b : {a}, {carry}"),
    ("carry", None),
    ("slow", "%slow, %shigh = arith.mulsi_extended %a, %b : {a}"),
    ("shigh", None),
    ("ulow", "%ulow, %uhigh = arith.mului_extended %a, %b : {a}"),
    ("uhigh", None),
]


def extended_program(t: str, n: int | None) -> str:
    ty = (lambda s: s) if n is None else (lambda s: tensor_type(s, n))
    lines = [line.format(a=ty(t), carry=ty("i1")) for _, line in EXTENDED_OPS if line]
    types = {r: ty("i1" if r == "carry" else t) for r, _ in EXTENDED_OPS}
    return program("f", [("a", ty(t)), ("b", ty(t))], lines, list(types.items()))


def extended_pairs(bits: int) -> list[tuple[int, int]]:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    raw = [(hi, hi), (lo, lo), (lo, hi), (-1, -1), (-1, 1), (3, -5), (hi, 1), (-1, 0),
           (123456789, -987654321), (lo, -1)]
    return list(dict.fromkeys((wrap(a, bits), wrap(b, bits)) for a, b in raw))


@pytest.mark.parametrize("t", ["i1", "i8", "i32", "i64"])
def test_extended_add_and_multiply_on_tensors(run: Runner, t: str) -> None:
    bits = INT_BITS[t]
    pairs = extended_pairs(bits)
    got = run(extended_program(t, len(pairs)), "f", array([a for a, _ in pairs], t),
              array([b for _, b in pairs], t))
    expected = [extended_reference(a, b, bits) for a, b in pairs]
    for k, (name, _) in enumerate(EXTENDED_OPS):
        kind = "i1" if name == "carry" else t
        assert as_ints(got[k], kind) == [e[k] for e in expected], (name, pairs)


@pytest.mark.parametrize("t", ["i8", "i32", "i64", "index"])
def test_extended_add_and_multiply_on_scalars(run: Runner, t: str) -> None:
    bits = INT_BITS[t]
    source = extended_program(t, None)
    for a, b in extended_pairs(bits):
        got = run(source, "f", a, b)
        kinds = ["i1" if name == "carry" else t for name, _ in EXTENDED_OPS]
        assert [as_int(g, k) for g, k in zip(got, kinds)] == extended_reference(a, b, bits), \
            (a, b)


# --- select, constants, flags, and the rest ------------------------------------------------------

def test_select_by_scalar_or_elementwise_condition(run: Runner) -> None:
    source = """
    func.func @pick(%c: i1, %cs: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>, %x: i8, %y: i8)
        -> (tensor<4xf32>, tensor<4xf32>, i8) {
      %whole = arith.select %c, %a, %b : tensor<4xf32>
      %each = arith.select %cs, %a, %b : tensor<4xi1>, tensor<4xf32>
      %s = arith.select %c, %x, %y : i8
      return %whole, %each, %s : tensor<4xf32>, tensor<4xf32>, i8
    }"""
    cs = np.array([True, False, False, True])
    a, b = np.arange(4, dtype=np.float32), -np.arange(4, dtype=np.float32) - 1
    for c in (True, False):
        whole, each, s = run(source, "pick", c, cs, a, b, -3, 9)
        np.testing.assert_array_equal(whole, a if c else b)
        np.testing.assert_array_equal(each, np.where(cs, a, b))
        assert int(s) == (-3 if c else 9)


def test_constants_of_every_type(run: Runner) -> None:
    source = """
    func.func @k() -> (i1, i8, i64, index, f16, bf16, f32, f64, tensor<2xi16>, tensor<2xf16>) {
      %t = arith.constant true
      %i8 = arith.constant -128 : i8
      %i64 = arith.constant -9223372036854775808 : i64
      %idx = arith.constant 42 : index
      %h = arith.constant -0.0 : f16
      %b = arith.constant 3.0e+38 : bf16
      %f = arith.constant 0.1 : f32
      %d = arith.constant -1.0e-300 : f64
      %ti = arith.constant dense<[-32768, 7]> : tensor<2xi16>
      %th = arith.constant dense<[65504.0, -2.5]> : tensor<2xf16>
      %ti2 = arith.addi %ti, %ti : tensor<2xi16>
      %th2 = arith.addf %th, %th : tensor<2xf16>
      return %t, %i8, %i64, %idx, %h, %b, %f, %d, %ti2, %th2
          : i1, i8, i64, index, f16, bf16, f32, f64, tensor<2xi16>, tensor<2xf16>
    }"""
    got = run(source, "k")
    assert [got[0], int(got[1]), int(got[2]), int(got[3])] == [True, -128, -(2**63), 42]
    assert same_float(got[4], np.float16(-0.0))
    assert same_float(got[5], ml_dtypes.bfloat16(3.0e38))
    assert same_float(got[6], np.float32(0.1)) and same_float(got[7], np.float64(-1e-300))
    np.testing.assert_array_equal(got[8], np.array([0, 14], np.int16))
    np.testing.assert_array_equal(got[9], np.array([INF, -5.0], np.float16))


def test_flags_leave_defined_results_unchanged(run: Runner) -> None:
    source = """
    func.func @flags(%a: i32, %b: i32, %x: f32, %h: f16, %t: tensor<3xi32>)
        -> (i32, i32, i32, i8, f32, f32, f16, tensor<3xi32>, tensor<3xi32>) {
      %0 = arith.divsi %a, %b exact : i32
      %1 = arith.shrui %a, %b exact : i32
      %2 = arith.addi %a, %b overflow<nsw, nuw> : i32
      %3 = arith.trunci %a overflow<nuw> : i32 to i8
      %4 = arith.addf %x, %x fastmath<fast> : f32
      %5 = arith.extf %h fastmath<nnan> : f16 to f32
      %6 = arith.truncf %x to_nearest_even fastmath<contract> : f32 to f16
      %7 = arith.divui %t, %t exact : tensor<3xi32>
      %8 = arith.shli %t, %t overflow<nsw> : tensor<3xi32>
      return %0, %1, %2, %3, %4, %5, %6, %7, %8
          : i32, i32, i32, i8, f32, f32, f16, tensor<3xi32>, tensor<3xi32>
    }"""
    t = np.array([1, 2, 3], np.int32)
    got = run(source, "flags", 96, 4, 1.5, 0.25, t)
    assert [int(g) for g in got[:4]] == [24, 6, 100, 96]
    assert [float(g) for g in got[4:7]] == [3.0, 0.25, 1.5]
    np.testing.assert_array_equal(got[7], [1, 1, 1])
    np.testing.assert_array_equal(got[8], [2, 8, 24])


