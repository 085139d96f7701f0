"""Matmuls by constant weights, which global-optimization stores in the llvm-cpu GEMM's panel
layout (pack_matmul_weights.py) and the microkernel reads in place, on every host target (the
`run` fixture, which loads module bytes, so the panels lie wherever the load put them) against
numpy: few rows with the columns split over workgroups (a recurrent step), many rows split over
workgroups, a depth of several blocks, a product into zeros and one into a bias with an
activation after it, and widths that are not whole panels (a classifier's 1000 columns; 40),
stored with the last panel padded with zeros."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(5)


def program(m: int, k: int, n: int, weights: np.ndarray, bias: bool) -> str:
    """@f(%x): x @ weights, or relu(bias + x @ weights) with bias = 0.25 * column index."""
    blob = "0x04000000" + weights.astype(np.float32).tobytes().hex().upper()
    xs, ws, os = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>"
    if bias:
        init = f"""%cols = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}} outs(%e : {os}) {{
      ^bb0(%out: f32):
        %j = linalg.index 1 : index
        %ji = arith.index_cast %j : index to i32
        %jf = arith.sitofp %ji : i32 to f32
        %q = arith.constant 0.25 : f32
        %v = arith.mulf %jf, %q : f32
        linalg.yield %v : f32
      }} -> {os}"""
        acc = "%cols"
    else:
        init = f"""%z = arith.constant 0.0 : f32
      %zeros = linalg.fill ins(%z : f32) outs(%e : {os}) -> {os}"""
        acc = "%zeros"
    tail = f"""%r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}} ins(%p : {os}) outs(%e : {os}) {{
      ^bb0(%in: f32, %out: f32):
        %zero = arith.constant 0.0 : f32
        %y = arith.maximumf %in, %zero : f32
        linalg.yield %y : f32
      }} -> {os}
      return %r : {os}""" if bias else f"return %p : {os}"
    return f"""
    func.func @f(%x: {xs}) -> {os} {{
      %w = arith.constant dense_resource<weights> : {ws}
      %e = tensor.empty() : {os}
      {init}
      %p = linalg.matmul ins(%x, %w : {xs}, {ws}) outs({acc} : {os}) -> {os}
      {tail}
    }}
    {{-#
      dialect_resources: {{ builtin: {{ weights: "{blob}" }} }}
    #-}}"""


CASES = [(8, 256, 1024, False), (300, 200, 64, True), (64, 784, 256, True),
         (40, 300, 1000, True), (8, 128, 40, False)]
IDS = ["few-rows-split-columns", "split-rows-bias-relu", "deep-bias-relu",
       "padded-last-panel-bias-relu", "padded-narrow"]


@pytest.mark.parametrize("m, k, n, bias", CASES, ids=IDS)
def test_matmul_by_constant_weights(run: Runner, m: int, k: int, n: int, bias: bool) -> None:
    weights = RNG.standard_normal((k, n)).astype(np.float32)
    x = RNG.standard_normal((m, k)).astype(np.float32)
    expected = x.astype(np.float64) @ weights.astype(np.float64)
    if bias:
        expected = np.maximum(expected + 0.25 * np.arange(n), 0.0)
    got = np.asarray(run(program(m, k, n, weights, bias), "f", x))
    assert got.shape == expected.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-4)


def test_llvm_cpu_reads_the_panels_in_place() -> None:
    """The module calls the microkernel's prepacked entry point, and carries the weights once:
    as panels, not also as the K x N matrix."""
    weights = RNG.standard_normal((256, 1024)).astype(np.float32)
    options = weir.CompilerOptions(target_backends=("llvm-cpu",))
    module = weir.compile_string(program(8, 256, 1024, weights, False), "t.mlir", options)
    assert b"weir_gemm_f32_f32_f32_prepacked" in module
    assert weights.tobytes() not in module


def test_llvm_cpu_reads_padded_panels_in_place() -> None:
    """1000 columns: the module carries the weights once, as whole panels whose last one is
    padded with zeros, and calls the prepacked entry point (its masked last tile) on them."""
    weights = RNG.standard_normal((64, 1000)).astype(np.float32)
    options = weir.CompilerOptions(target_backends=("llvm-cpu",))
    module = weir.compile_string(program(40, 64, 1000, weights, False), "t.mlir", options)
    assert b"weir_gemm_f32_f32_f32_prepacked" in module
    assert weights.tobytes() not in module
    padded = [np.pad(weights, [(0, 0), (0, -1000 % nr)]).reshape(64, -(-1000 // nr), nr)
              .transpose(1, 0, 2).tobytes() for nr in (16, 32)]
    assert any(panels in module for panels in padded)
