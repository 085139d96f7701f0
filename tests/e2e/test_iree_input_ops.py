"""IREE's input ops that tests and exporters use to steer the compiler, compiled and run on every
host target (the `run` fixture) against numpy: util.optimization_barrier (values pass through
unchanged, constants behind it reach dispatches as data), flow.tensor.dynamic_constant (the
data of the constant, through kernels compiled for dynamic sizes), flow.tensor.bitcast, and the
named ops linalg.negf and linalg.batch_matvec; and float literals past f16's range read as inf."""

from __future__ import annotations

from typing import Callable

import numpy as np

Runner = Callable[..., object]  # the `run` fixture (conftest.py)
RNG = np.random.default_rng(21)


def test_barrier_passes_values_through(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<4xf32>, %n: i32) -> (tensor<4xf32>, i32) {
      %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %s = arith.constant dense<0.5> : tensor<4xf32>
      %e = math.exp %x : tensor<4xf32>
      %b:4 = util.optimization_barrier %c, %s, %e, %n : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, i32
      %m = arith.mulf %b#0, %b#1 : tensor<4xf32>
      %r = arith.addf %m, %b#2 : tensor<4xf32>
      return %r, %b#3 : tensor<4xf32>, i32
    }"""
    x = RNG.standard_normal(4).astype(np.float32)
    out, n = run(src, "f", x, np.int32(7))  # type: ignore[misc]
    np.testing.assert_allclose(out, np.array([1, 2, 3, 4], np.float32) * 0.5 + np.exp(x),
                               rtol=1e-6)
    assert int(n) == 7


def test_dynamic_constants_through_dynamic_kernels(run: Runner) -> None:
    src = """
    func.func @f() -> tensor<?x3xf32> {
      %a = flow.tensor.dynamic_constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32> -> tensor<?xf32>
      %b = flow.tensor.dynamic_constant dense<[[1.0, 1.0, 1.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32> -> tensor<?x3xf32>
      %c0 = arith.constant 0 : index
      %n = tensor.dim %b, %c0 : tensor<?x3xf32>
      %e = tensor.empty(%n) : tensor<?x3xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<?xf32>, tensor<?x3xf32>) outs(%e : tensor<?x3xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %s = arith.mulf %x, %y : f32
        linalg.yield %s : f32
      } -> tensor<?x3xf32>
      return %r : tensor<?x3xf32>
    }"""
    np.testing.assert_array_equal(run(src, "f"), np.array([[1, 2, 3], [4, 10, 18]], np.float32))


def test_dynamic_splat_constant(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<4xi32>) -> tensor<?xi32> {
      %c = flow.tensor.dynamic_constant dense<5> : tensor<4xi32> -> tensor<?xi32>
      %d = tensor.cast %x : tensor<4xi32> to tensor<?xi32>
      %r = arith.addi %c, %d : tensor<?xi32>
      return %r : tensor<?xi32>
    }"""
    x = RNG.integers(-100, 100, 4).astype(np.int32)
    np.testing.assert_array_equal(run(src, "f", x), x + 5)


def test_tensor_bitcast(run: Runner) -> None:
    src = """
    func.func @f(%i: tensor<4xi32>, %j: tensor<?xi16>) -> (tensor<2x2xf32>, tensor<?xf16>) {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %j, %c0 : tensor<?xi16>
      %f = flow.tensor.bitcast %i : tensor<4xi32> -> tensor<2x2xf32>
      %g = flow.tensor.bitcast %j : tensor<?xi16>{%n} -> tensor<?xf16>{%n}
      return %f, %g : tensor<2x2xf32>, tensor<?xf16>
    }"""
    f32 = np.array([1.0, -2.5, 3.0, np.inf], np.float32)
    f16 = np.array([1.0, -2.0, 65504.0], np.float16)
    a, b = run(src, "f", f32.view(np.int32), f16.view(np.int16))  # type: ignore[misc]
    np.testing.assert_array_equal(a, f32.reshape(2, 2))
    np.testing.assert_array_equal(b, f16)


def test_negf_and_batch_matvec(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<5xf32>, %a: tensor<2x3x4xi8>, %v: tensor<2x4xi8>) -> (tensor<5xf32>, tensor<2x3xi32>) {
      %e = tensor.empty() : tensor<5xf32>
      %n = linalg.negf ins(%x : tensor<5xf32>) outs(%e : tensor<5xf32>) -> tensor<5xf32>
      %z = arith.constant 0 : i32
      %o = tensor.empty() : tensor<2x3xi32>
      %acc = linalg.fill ins(%z : i32) outs(%o : tensor<2x3xi32>) -> tensor<2x3xi32>
      %r = linalg.batch_matvec ins(%a, %v : tensor<2x3x4xi8>, tensor<2x4xi8>) outs(%acc : tensor<2x3xi32>) -> tensor<2x3xi32>
      return %n, %r : tensor<5xf32>, tensor<2x3xi32>
    }"""
    x = np.array([1.5, -2.0, 0.0, np.inf, -0.0], np.float32)
    a = RNG.integers(-128, 128, (2, 3, 4)).astype(np.int8)
    v = RNG.integers(-128, 128, (2, 4)).astype(np.int8)
    n, r = run(src, "f", x, a, v)  # type: ignore[misc]
    np.testing.assert_array_equal(np.signbit(n), np.signbit(-x))
    np.testing.assert_array_equal(n, -x)
    np.testing.assert_array_equal(r, np.einsum("bmk,bk->bm", a.astype(np.int32), v.astype(np.int32)))


def test_f16_literals_past_the_range_are_inf(run: Runner) -> None:
    src = """
    func.func @f() -> tensor<4xf16> {
      %c = arith.constant dense<[1.0, 70000.0, -1.0e6, 65519.0]> : tensor<4xf16>
      %b = util.optimization_barrier %c : tensor<4xf16>
      %s = arith.constant 70000.0 : f16
      %e = tensor.empty() : tensor<4xf16>
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%b : tensor<4xf16>) outs(%e : tensor<4xf16>) {
      ^bb0(%x: f16, %o: f16):
        %m = arith.minimumf %x, %s : f16
        linalg.yield %m : f16
      } -> tensor<4xf16>
      return %r : tensor<4xf16>
    }"""
    np.testing.assert_array_equal(run(src, "f"),
                                  np.array([1.0, np.inf, -np.inf, 65504.0], np.float16))
