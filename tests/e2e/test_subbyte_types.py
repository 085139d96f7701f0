"""Sub-byte integers (i2, i4) and packed i1 end to end on every target and driver: i2/i4 tensors
at the ABI (ml_dtypes' int2/int4), casts to and from wider integers and floats, wrapping
arithmetic, comparisons, shifts and a reduction, all against numpy on the values' bits; and
`flow.tensor.bitcast` between bytes and packed i1/i2/i4, which must lay the elements out as IREE
does (the first element in the lowest bits)."""

from __future__ import annotations

from typing import Callable

import ml_dtypes
import numpy as np
import pytest

Runner = Callable[..., object]  # the `run` fixture (conftest.py)
SUB = {"i2": (ml_dtypes.int2, 2), "i4": (ml_dtypes.int4, 4)}
MAP1 = "affine_map<(d0) -> (d0)>"


def _all_values(bits: int) -> np.ndarray:
    """Every value of the width, each against every other (lhs, rhs as int64)."""
    values = np.arange(-(1 << (bits - 1)), 1 << (bits - 1))
    return np.array(np.meshgrid(values, values)).reshape(2, -1)


def _wrap(x: np.ndarray, bits: int) -> np.ndarray:
    """Two's complement wrap-around to `bits`, as signed values."""
    x = np.asarray(x, np.int64) & ((1 << bits) - 1)
    return np.where(x >= 1 << (bits - 1), x - (1 << bits), x)


def _unsigned(x: np.ndarray, bits: int) -> np.ndarray:
    return np.asarray(x, np.int64) & ((1 << bits) - 1)


def _generic(t: str, n: int, body: str, results: list[str]) -> str:
    outs = ", ".join(f"tensor<{n}x{r}>" for r in results)
    empties = "\n".join(f"%e{i} = tensor.empty() : tensor<{n}x{r}>" for i, r in enumerate(results))
    out_args = ", ".join(f"%o{i}: {r}" for i, r in enumerate(results))
    maps = ", ".join([MAP1] * (2 + len(results)))
    return f"""
    func.func @f(%a: tensor<{n}x{t}>, %b: tensor<{n}x{t}>) -> ({outs}) {{
      {empties}
      %r:{len(results)} = linalg.generic {{indexing_maps = [{maps}],
                          iterator_types = ["parallel"]}}
          ins(%a, %b : tensor<{n}x{t}>, tensor<{n}x{t}>)
          outs({", ".join(f"%e{i}" for i in range(len(results)))} : {outs}) {{
      ^bb0(%x: {t}, %y: {t}, {out_args}):
        {body}
      }} -> ({outs})
      return {", ".join(f"%r#{i}" for i in range(len(results)))} : {outs}
    }}"""


@pytest.mark.parametrize("t", SUB)
def test_arithmetic_wraps_to_the_width(run: Runner, t: str) -> None:
    dtype, bits = SUB[t]
    lhs, rhs = _all_values(bits)
    n = lhs.size
    body = f"""
        %s = arith.addi %x, %y : {t}
        %d = arith.subi %x, %y : {t}
        %p = arith.muli %x, %y : {t}
        %m = arith.maxsi %x, %y : {t}
        %u = arith.minui %x, %y : {t}
        %q = arith.divsi %x, %y : {t}
        %x8 = arith.xori %x, %y : {t}
        linalg.yield %s, %d, %p, %m, %u, %q, %x8 : {", ".join([t] * 7)}"""
    results = run(_generic(t, n, body, [t] * 7), "f", lhs.astype(dtype), rhs.astype(dtype))
    safe = np.where(rhs == 0, 1, rhs)
    quotient = np.where(rhs == 0, 0, np.trunc(lhs / safe)).astype(np.int64)
    expected = [lhs + rhs, lhs - rhs, lhs * rhs, np.maximum(lhs, rhs),
                np.minimum(_unsigned(lhs, bits), _unsigned(rhs, bits)), quotient, lhs ^ rhs]
    for name, got, want in zip(("addi", "subi", "muli", "maxsi", "minui", "divsi", "xori"),
                               results, expected):  # type: ignore[call-overload]
        assert got.dtype == np.dtype(dtype), name
        np.testing.assert_array_equal(got.astype(np.int64), _wrap(want, bits), err_msg=name)


@pytest.mark.parametrize("t", SUB)
def test_casts_compares_and_shifts(run: Runner, t: str) -> None:
    dtype, bits = SUB[t]
    lhs, rhs = _all_values(bits)
    n = lhs.size
    body = f"""
        %si = arith.extsi %x : {t} to i32
        %ui = arith.extui %x : {t} to i8
        %f = arith.sitofp %x : {t} to f32
        %uf = arith.uitofp %x : {t} to f32
        %lt = arith.cmpi slt, %x, %y : {t}
        %ult = arith.cmpi ult, %x, %y : {t}
        %sh = arith.shli %x, %y : {t}
        %sr = arith.shrsi %x, %y : {t}
        %wide = arith.muli %si, %si : i32
        %back = arith.trunci %wide : i32 to {t}
        linalg.yield %si, %ui, %f, %uf, %lt, %ult, %sh, %sr, %back
            : i32, i8, f32, f32, i1, i1, {t}, {t}, {t}"""
    got = run(_generic(t, n, body, ["i32", "i8", "f32", "f32", "i1", "i1", t, t, t]), "f",
              lhs.astype(dtype), rhs.astype(dtype))
    ulhs, urhs = _unsigned(lhs, bits), _unsigned(rhs, bits)
    shl = np.where(urhs >= bits, 0, ulhs << np.minimum(urhs, bits))
    shr = np.where(urhs >= bits, np.where(lhs < 0, -1, 0), lhs >> np.minimum(urhs, bits - 1))
    expected = [lhs, ulhs, lhs.astype(np.float32), ulhs.astype(np.float32), lhs < rhs,
                ulhs < urhs, _wrap(shl, bits), _wrap(shr, bits), _wrap(lhs * lhs, bits)]
    for i, (g, w) in enumerate(zip(got, expected)):  # type: ignore[call-overload]
        np.testing.assert_array_equal(np.asarray(g).astype(np.float64),
                                      np.asarray(w).astype(np.float64), err_msg=f"result {i}")


@pytest.mark.parametrize("t", SUB)
def test_float_to_sub_byte_saturates_and_constants(run: Runner, t: str) -> None:
    dtype, bits = SUB[t]
    src = f"""
    func.func @f(%x: tensor<6xf32>) -> (tensor<6x{t}>, tensor<{t}>) {{
      %c = arith.constant dense<[1, -1, 0, 1, -2, 1]> : tensor<6x{t}>
      %e = tensor.empty() : tensor<6x{t}>
      %r = linalg.generic {{indexing_maps = [{MAP1}, {MAP1}, {MAP1}],
                            iterator_types = ["parallel"]}}
          ins(%x, %c : tensor<6xf32>, tensor<6x{t}>) outs(%e : tensor<6x{t}>) {{
      ^bb0(%v: f32, %k: {t}, %o: {t}):
        %i = arith.fptosi %v : f32 to {t}
        %s = arith.addi %i, %k : {t}
        linalg.yield %s : {t}
      }} -> tensor<6x{t}>
      %z = arith.constant dense<0> : tensor<{t}>
      %sum = linalg.reduce ins(%r : tensor<6x{t}>) outs(%z : tensor<{t}>) dimensions = [0]
        (%in: {t}, %acc: {t}) {{
          %a = arith.addi %in, %acc : {t}
          linalg.yield %a : {t}
        }}
      return %r, %sum : tensor<6x{t}>, tensor<{t}>
    }}"""
    x = np.array([0.5, 100.0, -100.0, -1.9, 1.0, float("nan")], np.float32)
    r, total = run(src, "f", x)  # type: ignore[misc]
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    converted = np.where(np.isnan(x), 0, np.clip(np.trunc(np.nan_to_num(x)), lo, hi))
    want = _wrap(converted.astype(np.int64) + np.array([1, -1, 0, 1, -2, 1]), bits)
    assert r.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(r.astype(np.int64), want)
    assert int(np.asarray(total).astype(np.int64)) == int(_wrap(want.sum(), bits))


PACKED = [("i1", "#iree_encoding.packed_storage", 1), ("i2", "", 2), ("i4", "", 4)]


@pytest.mark.parametrize("t,enc,bits", PACKED)
def test_bitcast_unpacks_and_packs_lowest_bits_first(run: Runner, t: str, enc: str,
                                                     bits: int) -> None:
    per = 8 // bits
    packed_t = f"tensor<2x{per * 2}x{t}{', ' + enc if enc else ''}>"
    src = f"""
    func.func @f(%w: tensor<4xi8>, %v: tensor<2xi16>)
        -> (tensor<2x{per * 2}xi8>, tensor<2xi16>) {{
      %p = flow.tensor.bitcast %w : tensor<4xi8> -> {packed_t}
      %e = tensor.empty() : tensor<2x{per * 2}xi8>
      %x = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                             affine_map<(d0, d1) -> (d0, d1)>],
                            iterator_types = ["parallel", "parallel"]}}
          ins(%p : {packed_t}) outs(%e : tensor<2x{per * 2}xi8>) {{
      ^bb0(%in: {t}, %o: i8):
        %z = arith.extui %in : {t} to i8
        linalg.yield %z : i8
      }} -> tensor<2x{per * 2}xi8>
      %q = flow.tensor.bitcast %v : tensor<2xi16> -> {packed_t}
      %back = flow.tensor.bitcast %q : {packed_t} -> tensor<2xi16>
      return %x, %back : tensor<2x{per * 2}xi8>, tensor<2xi16>
    }}"""
    words = np.array([0x8C, 0x4D, 0x01, 0xF0], np.uint8).view(np.int8)
    halves = np.array([0x1234, -2], np.int16)
    unpacked, back = run(src, "f", words, halves)  # type: ignore[misc]
    lanes = [(int(w) >> (bits * j)) & ((1 << bits) - 1)
             for w in words.view(np.uint8) for j in range(per)]
    np.testing.assert_array_equal(unpacked, np.array(lanes, np.int8).reshape(2, per * 2))
    np.testing.assert_array_equal(back, halves)


def test_sub_byte_values_at_the_abi_round_trip(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<3xi4>, %b: tensor<2xi2>) -> (tensor<3xi4>, tensor<2xi2>) {
      return %a, %b : tensor<3xi4>, tensor<2xi2>
    }"""
    a = np.array([-8, 7, -1], ml_dtypes.int4)
    b = np.array([-2, 1], ml_dtypes.int2)
    ra, rb = run(src, "f", a, b)  # type: ignore[misc]
    assert ra.dtype == a.dtype and rb.dtype == b.dtype
    np.testing.assert_array_equal(ra.astype(np.int8), a.astype(np.int8))
    np.testing.assert_array_equal(rb.astype(np.int8), b.astype(np.int8))
