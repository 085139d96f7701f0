"""Matmuls by what they accumulate into, on every target and driver against numpy: a fill with
+0 (which llvm-cpu computes by overwriting its output, tests/compiler/llvm_cpu/
test_contraction.py), a fill with another constant, an argument, and a bias broadcast along the
rows (which llvm-cpu's products start their tiles from); with sizes known and unknown at
compile time, rows above and below the few-rows bound, narrow and wide products, K = 0 at run
time (the result is then the init), i8 into i32, constant weights, and a batch."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import Runner

RNG = np.random.default_rng(41)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _dynamic(fill: str) -> str:
    return f"""
    func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %m = tensor.dim %a, %c0 : tensor<?x?xf32>
      %n = tensor.dim %b, %c1 : tensor<?x?xf32>
      %v = arith.constant {fill} : f32
      %e = tensor.empty(%m, %n) : tensor<?x?xf32>
      %acc = linalg.fill ins(%v : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
      %0 = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>)
                         outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    }}"""


@pytest.mark.parametrize("fill", [0.0, 1.5])
def test_dynamic_sizes(run: Runner, fill: float) -> None:
    src = _dynamic(repr(fill))
    for m, k, n in [(2, 7, 40), (9, 70, 40), (40, 33, 9), (13, 0, 37), (3, 0, 5), (6, 1, 1)]:
        a, b = _f32(m, k), _f32(k, n)
        got = np.asarray(run(src, "mm", a, b))
        assert got.shape == (m, n)
        np.testing.assert_allclose(got, fill + a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m, k, n", [(3, 40, 50), (30, 300, 70), (64, 100, 10)])
def test_static_sizes_into_zeros_and_into_an_argument(run: Runner, m: int, k: int,
                                                      n: int) -> None:
    ty = f"tensor<{m}x{n}xf32>"
    src = f"""
    func.func @f(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>, %c: {ty}) -> ({ty}, {ty}) {{
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : {ty}
      %acc = linalg.fill ins(%zero : f32) outs(%e : {ty}) -> {ty}
      %0 = linalg.matmul ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%acc : {ty}) -> {ty}
      %1 = linalg.matmul ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%c : {ty}) -> {ty}
      return %0, %1 : {ty}, {ty}
    }}"""
    a, b, c = _f32(m, k), _f32(k, n), _f32(m, n)
    zeros, onto = (np.asarray(x) for x in run(src, "f", a, b, c))  # type: ignore[union-attr]
    np.testing.assert_allclose(zeros, a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(onto, c + a @ b, rtol=1e-4, atol=1e-4)


def test_i8_into_i32_zeros_and_a_batch(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<20x45xi8>, %b: tensor<45x33xi8>, %x: tensor<3x9x16xf32>,
                 %y: tensor<3x16x24xf32>) -> (tensor<20x33xi32>, tensor<3x9x24xf32>) {
      %zi = arith.constant 0 : i32
      %ei = tensor.empty() : tensor<20x33xi32>
      %ai = linalg.fill ins(%zi : i32) outs(%ei : tensor<20x33xi32>) -> tensor<20x33xi32>
      %0 = linalg.matmul ins(%a, %b : tensor<20x45xi8>, tensor<45x33xi8>) outs(%ai : tensor<20x33xi32>) -> tensor<20x33xi32>
      %zf = arith.constant 0.0 : f32
      %ef = tensor.empty() : tensor<3x9x24xf32>
      %af = linalg.fill ins(%zf : f32) outs(%ef : tensor<3x9x24xf32>) -> tensor<3x9x24xf32>
      %1 = linalg.batch_matmul ins(%x, %y : tensor<3x9x16xf32>, tensor<3x16x24xf32>) outs(%af : tensor<3x9x24xf32>) -> tensor<3x9x24xf32>
      return %0, %1 : tensor<20x33xi32>, tensor<3x9x24xf32>
    }"""
    a = RNG.integers(-128, 128, (20, 45)).astype(np.int8)
    b = RNG.integers(-128, 128, (45, 33)).astype(np.int8)
    x, y = _f32(3, 9, 16), _f32(3, 16, 24)
    ints, batch = (np.asarray(v) for v in run(src, "f", a, b, x, y))  # type: ignore[union-attr]
    np.testing.assert_array_equal(ints, a.astype(np.int32) @ b.astype(np.int32))
    np.testing.assert_allclose(batch, x @ y, rtol=1e-4, atol=1e-4)


def _bias_program(m: str, k: str, n: str, kind: str = "f32", acc: str = "f32") -> str:
    """@f(%a, %b, %bias): bias broadcast to every row, plus a @ b."""
    out = f"tensor<{m}x{n}x{acc}>"
    dims = "".join(f", %d{i}" for i, d in enumerate((m, n)) if d == "?")
    sizes = """
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %d0 = tensor.dim %a, %c0 : tensor<?x?xf32>
      %d1 = tensor.dim %b, %c1 : tensor<?x?xf32>""" if dims else ""
    empty = f"tensor.empty({dims[2:]})" if dims else "tensor.empty()"
    return f"""
    func.func @f(%a: tensor<{m}x{k}x{kind}>, %b: tensor<{k}x{n}x{kind}>, %bias: tensor<{n}x{acc}>) -> {out} {{{sizes}
      %e = {empty} : {out}
      %acc = linalg.broadcast ins(%bias : tensor<{n}x{acc}>) outs(%e : {out}) dimensions = [0]
      %0 = linalg.matmul ins(%a, %b : tensor<{m}x{k}x{kind}>, tensor<{k}x{n}x{kind}>) outs(%acc : {out}) -> {out}
      return %0 : {out}
    }}"""


@pytest.mark.parametrize("m, k, n", [(3, 40, 50), (30, 300, 70), (64, 100, 10), (40, 33, 9),
                                     (129, 17, 96)])
def test_into_a_bias_static(run: Runner, m: int, k: int, n: int) -> None:
    a, b, bias = _f32(m, k), _f32(k, n), _f32(n)
    got = np.asarray(run(_bias_program(str(m), str(k), str(n)), "f", a, b, bias))
    np.testing.assert_allclose(got, bias + a @ b, rtol=1e-4, atol=1e-4)


def test_into_a_bias_dynamic(run: Runner) -> None:
    src = _bias_program("?", "?", "?")
    for m, k, n in [(2, 7, 40), (9, 70, 40), (40, 33, 9), (13, 0, 37), (3, 0, 5), (6, 1, 1)]:
        a, b, bias = _f32(m, k), _f32(k, n), _f32(n)
        got = np.asarray(run(src, "f", a, b, bias))
        assert got.shape == (m, n)
        np.testing.assert_allclose(got, bias + a @ b, rtol=1e-4, atol=1e-4)


def test_into_a_bias_i8_into_i32(run: Runner) -> None:
    a = RNG.integers(-128, 128, (20, 45)).astype(np.int8)
    b = RNG.integers(-128, 128, (45, 33)).astype(np.int8)
    bias = RNG.integers(-1000, 1000, 33).astype(np.int32)
    got = np.asarray(run(_bias_program("20", "45", "33", "i8", "i32"), "f", a, b, bias))
    np.testing.assert_array_equal(got, bias + a.astype(np.int32) @ b.astype(np.int32))


def test_into_a_bias_with_constant_weights(run: Runner) -> None:
    """Weights large enough for global-optimization to store them packed: the prepacked
    microkernel starts from the bias too."""
    b = _f32(128, 96)
    weights = ", ".join(repr(float(x)) for x in b.ravel())
    src = f"""
    func.func @f(%a: tensor<50x128xf32>, %bias: tensor<96xf32>) -> tensor<50x96xf32> {{
      %w = arith.constant dense<[{weights}]> : tensor<12288xf32>
      %b = tensor.expand_shape %w [[0, 1]] output_shape [128, 96] : tensor<12288xf32> into tensor<128x96xf32>
      %e = tensor.empty() : tensor<50x96xf32>
      %acc = linalg.broadcast ins(%bias : tensor<96xf32>) outs(%e : tensor<50x96xf32>) dimensions = [0]
      %0 = linalg.matmul ins(%a, %b : tensor<50x128xf32>, tensor<128x96xf32>) outs(%acc : tensor<50x96xf32>) -> tensor<50x96xf32>
      return %0 : tensor<50x96xf32>
    }}"""
    a, bias = _f32(50, 128), _f32(96)
    np.testing.assert_allclose(np.asarray(run(src, "f", a, bias)), bias + a @ b, rtol=1e-4,
                               atol=1e-4)
