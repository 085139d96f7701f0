"""Matmuls of a few rows (a decoding step: one token times a layer's weights), which llvm-cpu
runs without packing B (gemv.py), on every host target against numpy: M = 1..5 with odd N and
K and a fused bias epilogue, B as a transposed weight, attention's keys transposed through a
reshape (a batch matmul), a slice of a cache as B, columns split over workgroups, and dynamic M
at both sides of the few-rows bound."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import Runner

RNG = np.random.default_rng(23)


def t(shape: tuple[int, ...], ty: str = "f32") -> str:
    return f"tensor<{'x'.join('?' if d < 0 else str(d) for d in shape)}x{ty}>"


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def linear(m: int, k: int, n: int, transposed: bool) -> str:
    """x @ w + bias, w given k x n, or n x k and transposed in the program (a linear layer)."""
    w_type = t((n, k) if transposed else (k, n))
    weight = "%w"
    transpose = ""
    if transposed:
        transpose = f"""%wt0 = tensor.empty() : {t((k, n))}
  %wt = linalg.transpose ins(%w : {w_type}) outs(%wt0 : {t((k, n))}) permutation = [1, 0]"""
        weight = "%wt"
    return f"""
func.func @f(%x: {t((m, k))}, %w: {w_type}, %bias: {t((n,))}) -> {t((m, n))} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {t((m, n))}
  {transpose}
  %acc = linalg.fill ins(%zero : f32) outs(%e : {t((m, n))}) -> {t((m, n))}
  %mm = linalg.matmul ins(%x, {weight} : {t((m, k))}, {t((k, n))}) outs(%acc : {t((m, n))}) -> {t((m, n))}
  %b = linalg.broadcast ins(%bias : {t((n,))}) outs(%e : {t((m, n))}) dimensions = [0]
  %out = arith.addf %mm, %b : {t((m, n))}
  return %out : {t((m, n))}
}}"""


@pytest.mark.parametrize("transposed", [False, True], ids=["b", "bt"])
@pytest.mark.parametrize("m, k, n", [(1, 37, 131), (2, 300, 77), (3, 129, 1001), (4, 64, 70),
                                     (5, 33, 200), (1, 256, 3000)])
def test_linear_with_bias(run: Runner, m: int, k: int, n: int, transposed: bool) -> None:
    x, w, bias = normal(m, k), normal(n, k) if transposed else normal(k, n), normal(n)
    got = np.asarray(run(linear(m, k, n, transposed), "f", x, w, bias))
    np.testing.assert_allclose(got, x @ (w.T if transposed else w) + bias, rtol=1e-4, atol=1e-4)


# One head group of a decoding step: the new query against 129 cached keys (transposed through
# a reshape), then the weights against the cached values.
ATTENTION = f"""
func.func @f(%q: {t((4, 1, 64))}, %keys: {t((1, 4, 129, 64))}, %values: {t((4, 129, 64))}) -> {t((4, 1, 64))} {{
  %zero = arith.constant 0.0 : f32
  %kt0 = tensor.empty() : {t((1, 4, 64, 129))}
  %kt = linalg.transpose ins(%keys : {t((1, 4, 129, 64))}) outs(%kt0 : {t((1, 4, 64, 129))}) permutation = [0, 1, 3, 2]
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : {t((1, 4, 64, 129))} into {t((4, 64, 129))}
  %s0 = tensor.empty() : {t((4, 1, 129))}
  %s1 = linalg.fill ins(%zero : f32) outs(%s0 : {t((4, 1, 129))}) -> {t((4, 1, 129))}
  %scores = linalg.batch_matmul ins(%q, %k3 : {t((4, 1, 64))}, {t((4, 64, 129))}) outs(%s1 : {t((4, 1, 129))}) -> {t((4, 1, 129))}
  %o0 = tensor.empty() : {t((4, 1, 64))}
  %o1 = linalg.fill ins(%zero : f32) outs(%o0 : {t((4, 1, 64))}) -> {t((4, 1, 64))}
  %out = linalg.batch_matmul ins(%scores, %values : {t((4, 1, 129))}, {t((4, 129, 64))}) outs(%o1 : {t((4, 1, 64))}) -> {t((4, 1, 64))}
  return %out : {t((4, 1, 64))}
}}"""


def test_attention_step_with_transposed_keys(run: Runner) -> None:
    q, keys, values = normal(4, 1, 64), normal(1, 4, 129, 64), normal(4, 129, 64)
    scores = q @ np.swapaxes(keys[0], 1, 2)
    np.testing.assert_allclose(np.asarray(run(ATTENTION, "f", q, keys, values)),
                               scores @ values, rtol=1e-4, atol=1e-4)


# B as every other column of rows 3..74 of a cache (columns not contiguous: copied), and as the
# transpose of a window of rows (read in place). Big enough not to be plain loops (DIRECT_MACS).
SLICES = f"""
func.func @f(%x: {t((2, 72))}, %cache: {t((80, 66))}, %keys: {t((30, 72))}) -> ({t((2, 33))}, {t((2, 20))}) {{
  %zero = arith.constant 0.0 : f32
  %w = tensor.extract_slice %cache[3, 0] [72, 33] [1, 2] : {t((80, 66))} to {t((72, 33))}
  %e = tensor.empty() : {t((2, 33))}
  %acc = linalg.fill ins(%zero : f32) outs(%e : {t((2, 33))}) -> {t((2, 33))}
  %y = linalg.matmul ins(%x, %w : {t((2, 72))}, {t((72, 33))}) outs(%acc : {t((2, 33))}) -> {t((2, 33))}
  %rows = tensor.extract_slice %keys[5, 0] [20, 72] [1, 1] : {t((30, 72))} to {t((20, 72))}
  %kt0 = tensor.empty() : {t((72, 20))}
  %kt = linalg.transpose ins(%rows : {t((20, 72))}) outs(%kt0 : {t((72, 20))}) permutation = [1, 0]
  %e2 = tensor.empty() : {t((2, 20))}
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : {t((2, 20))}) -> {t((2, 20))}
  %z = linalg.matmul ins(%x, %kt : {t((2, 72))}, {t((72, 20))}) outs(%acc2 : {t((2, 20))}) -> {t((2, 20))}
  return %y, %z : {t((2, 33))}, {t((2, 20))}
}}"""


def test_slices_as_b(run: Runner) -> None:
    x, cache, keys = normal(2, 72), normal(80, 66), normal(30, 72)
    y, z = run(SLICES, "f", x, cache, keys)  # type: ignore[misc]
    np.testing.assert_allclose(np.asarray(y), x @ cache[3:75, 0:66:2], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(z), x @ keys[5:25].T, rtol=1e-4, atol=1e-4)


DYNAMIC = f"""
func.func @f(%x: {t((-1, 37))}, %w: {t((37, 301))}) -> {t((-1, 301))} {{
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : {t((-1, 37))}
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : {t((-1, 301))}
  %acc = linalg.fill ins(%zero : f32) outs(%e : {t((-1, 301))}) -> {t((-1, 301))}
  %y = linalg.matmul ins(%x, %w : {t((-1, 37))}, {t((37, 301))}) outs(%acc : {t((-1, 301))}) -> {t((-1, 301))}
  return %y : {t((-1, 301))}
}}"""


def test_dynamic_rows_either_side_of_the_bound(run: Runner) -> None:
    w = normal(37, 301)
    for m in (1, 4, 5, 40):
        x = normal(m, 37)
        np.testing.assert_allclose(np.asarray(run(DYNAMIC, "f", x, w)), x @ w, rtol=1e-4,
                                   atol=1e-4)
