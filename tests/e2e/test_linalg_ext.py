"""IREE's linalg extension ops (iree_linalg_ext) and torch-mlir's copies (tm_tensor) on every
target and driver, against numpy: sort (stable, several operands, lines of any length), topk,
scan (inclusive and exclusive), scatter (with a combining region and repeated indices, and a
mask), gather, arg_compare, attention (with a causal mask), online_attention, map_load and
map_store, and torch-mlir's exports of torch.topk, torch.cumsum and index_put (tests/e2e/linalg_ext)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.e2e.conftest import Runner, compiled
from weir.errors import CompileError
from weir.errors import RuntimeFault

INPUTS = Path(__file__).parent / "linalg_ext"
RNG = np.random.default_rng(7)


def _sort_source(rows: int, cols: int, dim: int, predicate: str) -> str:
    t = f"tensor<{rows}x{cols}xf32>"
    i = f"tensor<{rows}x{cols}xi32>"
    return f"""
func.func @sort(%v: {t}, %i: {i}) -> ({t}, {i}) {{
  %0:2 = iree_linalg_ext.sort dimension({dim}) outs(%v, %i : {t}, {i}) {{
  ^bb0(%a: f32, %b: f32, %c: i32, %d: i32):
    %r = arith.cmpf {predicate}, %a, %b : f32
    iree_linalg_ext.yield %r : i1
  }} -> {t}, {i}
  return %0#0, %0#1 : {t}, {i}
}}"""


def test_sort_is_stable_along_either_dimension(run: Runner) -> None:
    # Few distinct values, so most elements tie; lines of 37 and 5 (not powers of two).
    x = RNG.integers(0, 4, (5, 37)).astype(np.float32)
    for dim, predicate, key in ((1, "olt", x), (1, "oge", -x), (0, "ogt", -x)):
        ids = np.broadcast_to(np.arange(x.shape[dim], dtype=np.int32).reshape(
            [-1 if d == dim else 1 for d in range(2)]), x.shape).copy()
        values, order = run(_sort_source(5, 37, dim, predicate), "sort", x, ids)  # type: ignore[misc]
        expected = np.argsort(key, axis=dim, kind="stable").astype(np.int32)
        np.testing.assert_array_equal(order, expected)
        np.testing.assert_array_equal(values, np.take_along_axis(x, expected, dim))


def test_topk_merges_with_outputs_and_defaults_indices(run: Runner) -> None:
    source = """
func.func @topk(%x: tensor<3x20xf32>) -> (tensor<3x4xf32>, tensor<3x4xi32>) {
  %ev = tensor.empty() : tensor<3x4xf32>
  %ei = tensor.empty() : tensor<3x4xi32>
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i32
  %v = linalg.fill ins(%ninf : f32) outs(%ev : tensor<3x4xf32>) -> tensor<3x4xf32>
  %i = linalg.fill ins(%c0 : i32) outs(%ei : tensor<3x4xi32>) -> tensor<3x4xi32>
  %0:2 = iree_linalg_ext.topk dimension(1) ins(%x : tensor<3x20xf32>) outs(%v, %i : tensor<3x4xf32>, tensor<3x4xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<3x4xf32>, tensor<3x4xi32>
  return %0#0, %0#1 : tensor<3x4xf32>, tensor<3x4xi32>
}"""
    x = RNG.standard_normal((3, 20)).astype(np.float32)
    values, indices = run(source, "topk", x)  # type: ignore[misc]
    expected = np.argsort(-x, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(indices, expected)
    np.testing.assert_array_equal(values, np.take_along_axis(x, expected, 1))


def _iree_topk_v2(x: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """IREE's topk_v2 (ogt, is_sorted) along the last dimension, step by step as its scalar
    implementation runs: each element is inserted into outputs filled with (-inf, 0), passing
    a better one or an equal one with a larger index; then a bubble sort swaps neighbours unless
    the first is greater."""
    rows = x.shape[0]
    values, indices = np.full((rows, k), -np.inf, np.float32), np.zeros((rows, k), np.int32)
    for r in range(rows):
        ov, oi = values[r], indices[r]
        for v, i in zip(x[r], ids[r]):
            for j in range(k):
                passes = v > ov[j] or (not ov[j] > v and i < oi[j])
                if passes:
                    v, ov[j], i, oi[j] = ov[j], v, oi[j], i
        for p in range(k - 1):
            for j in range(k - 1 - p):
                if not ov[j] > ov[j + 1]:
                    ov[[j, j + 1]], oi[[j, j + 1]] = ov[[j + 1, j]], oi[[j + 1, j]]
    return values, indices


def _topk_v2_source(rows: int, cols: int, k: int, with_indices: bool) -> str:
    t, i = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}x{cols}xi32>"
    kt, ki = f"tensor<{rows}x{k}xf32>", f"tensor<{rows}x{k}xi32>"
    ins = f"%x, %i : {t}, {i}" if with_indices else f"%x : {t}"
    return f"""
func.func @topk(%x: {t}, %i: {i}) -> ({kt}, {ki}) {{
  %ev = tensor.empty() : {kt}
  %ei = tensor.empty() : {ki}
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i32
  %v = linalg.fill ins(%ninf : f32) outs(%ev : {kt}) -> {kt}
  %j = linalg.fill ins(%c0 : i32) outs(%ei : {ki}) -> {ki}
  %0:2 = iree_linalg_ext.topk_v2 dimension(1) is_sorted ins({ins}) outs(%v, %j : {kt}, {ki}) {{
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  }} -> {kt}, {ki}
  return %0#0, %0#1 : {kt}, {ki}
}}"""


def test_topk_v2_orders_equal_elements_as_iree(run: Runner) -> None:
    # Few distinct values, so runs of equal ones straddle every position of the k outputs; the
    # 80-long lines take the one-pass selection, the 23-long ones the whole sort.
    for cols, k, with_indices in ((23, 7, True), (80, 9, False)):
        x = RNG.integers(0, 4, (5, cols)).astype(np.float32)
        ids = RNG.integers(-3, 9, (5, cols)).astype(np.int32) if with_indices else \
            np.broadcast_to(np.arange(cols, dtype=np.int32), (5, cols)).copy()
        values, indices = run(_topk_v2_source(5, cols, k, with_indices), "topk", x, ids)  # type: ignore[misc]
        want_values, want_indices = _iree_topk_v2(x, ids, k)
        np.testing.assert_array_equal(indices, want_indices)
        np.testing.assert_array_equal(values, want_values)


def test_scan_exclusive_along_dimension_zero(run: Runner) -> None:
    source = """
func.func @scan(%x: tensor<9x3xi32>, %acc: tensor<3xi32>) -> (tensor<9x3xi32>, tensor<3xi32>) {
  %e = tensor.empty() : tensor<9x3xi32>
  %0:2 = iree_linalg_ext.scan dimension(0) inclusive(false) ins(%x : tensor<9x3xi32>) outs(%e, %acc : tensor<9x3xi32>, tensor<3xi32>) {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    iree_linalg_ext.yield %s : i32
  } -> tensor<9x3xi32>, tensor<3xi32>
  return %0#0, %0#1 : tensor<9x3xi32>, tensor<3xi32>
}"""
    x = RNG.integers(-50, 50, (9, 3)).astype(np.int32)
    acc = np.array([100, -100, 7], np.int32)
    out, last = run(source, "scan", x, acc)  # type: ignore[misc]
    expected = acc + np.concatenate([np.zeros((1, 3), np.int32), np.cumsum(x, 0)[:-1]])
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(last, expected[-1])


def test_scatter_adds_repeated_indices_in_order_and_skips_masked(run: Runner) -> None:
    source = """
func.func @scatter(%u: tensor<6x4xf32>, %idx: tensor<6x1xi32>, %m: tensor<6xi1>, %o: tensor<5x4xf32>) -> tensor<5x4xf32> {
  %0 = iree_linalg_ext.scatter dimension_map = [0] unique_indices(false) ins(%u, %idx, %m : tensor<6x4xf32>, tensor<6x1xi32>, tensor<6xi1>) outs(%o : tensor<5x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    iree_linalg_ext.yield %s : f32
  } -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}"""
    u = RNG.standard_normal((6, 4)).astype(np.float32)
    idx = np.array([[1], [3], [1], [0], [4], [1]], np.int32)
    mask = np.array([True, True, True, False, True, True])
    o = RNG.standard_normal((5, 4)).astype(np.float32)
    expected = o.copy()
    np.add.at(expected, idx[mask, 0], u[mask])
    np.testing.assert_allclose(run(source, "scatter", u, idx, mask, o), expected, rtol=1e-6)  # type: ignore[arg-type]


def test_gather_rows_by_two_coordinates(run: Runner) -> None:
    source = """
func.func @gather(%src: tensor<4x5x3xf32>, %idx: tensor<7x2xi64>) -> tensor<7x3xf32> {
  %e = tensor.empty() : tensor<7x3xf32>
  %0 = iree_linalg_ext.gather dimension_map = [1, 0] ins(%src, %idx : tensor<4x5x3xf32>, tensor<7x2xi64>) outs(%e : tensor<7x3xf32>) -> tensor<7x3xf32>
  return %0 : tensor<7x3xf32>
}"""
    src = RNG.standard_normal((4, 5, 3)).astype(np.float32)
    idx = np.stack([RNG.integers(0, 5, 7), RNG.integers(0, 4, 7)], 1).astype(np.int64)
    np.testing.assert_array_equal(run(source, "gather", src, idx), src[idx[:, 1], idx[:, 0]])  # type: ignore[arg-type]


def test_arg_compare_first_maximum_with_base(run: Runner) -> None:
    source = """
func.func @argmax(%x: tensor<4x9xf32>, %base: index) -> (tensor<4xf32>, tensor<4xi32>) {
  %ev = tensor.empty() : tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi32>
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i32
  %v = linalg.fill ins(%ninf : f32) outs(%ev : tensor<4xf32>) -> tensor<4xf32>
  %i = linalg.fill ins(%c0 : i32) outs(%ei : tensor<4xi32>) -> tensor<4xi32>
  %0:2 = iree_linalg_ext.arg_compare dimension(1) ins(%x : tensor<4x9xf32>) outs(%v, %i : tensor<4xf32>, tensor<4xi32>) index_base(%base : index) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<4xf32>, tensor<4xi32>
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xi32>
}"""
    x = RNG.integers(0, 3, (4, 9)).astype(np.float32)  # ties: the first maximum wins
    values, indices = run(source, "argmax", x, 10)  # type: ignore[misc]
    np.testing.assert_array_equal(indices, np.argmax(x, 1) + 10)
    np.testing.assert_array_equal(values, x.max(1))


def test_attention_with_causal_mask(run: Runner) -> None:
    source = """
func.func @attention(%q: tensor<2x5x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x3xf32>, %m: tensor<2x5x6xi1>) -> tensor<2x5x3xf32> {
  %e = tensor.empty() : tensor<2x5x3xf32>
  %scale = arith.constant 0.5 : f32
  %0 = iree_linalg_ext.attention {indexing_maps = [
      affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2)>,
      affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> ()>,
      affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>]}
      ins(%q, %k, %v, %scale, %m : tensor<2x5x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, f32, tensor<2x5x6xi1>)
      outs(%e : tensor<2x5x3xf32>) {
  ^bb0(%s: f32):
    iree_linalg_ext.yield %s : f32
  } -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}"""
    q, k, v = (RNG.standard_normal(s).astype(np.float32) for s in ((2, 5, 4), (2, 6, 4), (2, 6, 3)))
    mask = np.broadcast_to(np.tril(np.ones((5, 6), bool)), (2, 5, 6)).copy()
    scores = np.where(mask, 0.5 * q @ k.transpose(0, 2, 1), -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    expected = (weights / weights.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(run(source, "attention", q, k, v, mask), expected, rtol=1e-5,  # type: ignore[arg-type]
                               atol=1e-6)


def test_torch_topk_cumsum_and_index_put(run: Runner) -> None:
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    values, indices = run((INPUTS / "torch_topk.mlir").read_text(), "main", x)  # type: ignore[misc]
    expected = np.argsort(-x, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(indices, expected)
    np.testing.assert_array_equal(values, np.take_along_axis(x, expected, 1))
    np.testing.assert_allclose(run((INPUTS / "torch_cumsum.mlir").read_text(), "main", x),  # type: ignore[arg-type]
                               np.cumsum(x, 1), rtol=1e-5, atol=1e-6)
    cache = RNG.standard_normal((8, 4)).astype(np.float32)
    rows = RNG.standard_normal((2, 4)).astype(np.float32)
    expected_cache = cache.copy()
    expected_cache[[1, 3]] = rows
    out = run((INPUTS / "torch_index_put.mlir").read_text(), "main", cache,
              np.array([1, 3], np.int64), rows)
    np.testing.assert_array_equal(out, expected_cache)  # type: ignore[arg-type]


def test_online_attention_over_two_halves_is_attention(run: Runner) -> None:
    maps = """indexing_maps = [
      affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2)>,
      affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> ()>,
      affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>,
      affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>]"""
    step = """iree_linalg_ext.online_attention {%s}
      ins(%%q, %%K, %%V, %%scale : tensor<1x3x4xf32>, tensor<1x2x4xf32>, tensor<1x2x5xf32>, f32)
      outs(%%A, %%M, %%S : tensor<1x3x5xf32>, tensor<1x3xf32>, tensor<1x3xf32>) {
  ^bb0(%%s: f32):
    iree_linalg_ext.yield %%s : f32
  } -> tensor<1x3x5xf32>, tensor<1x3xf32>, tensor<1x3xf32>""" % maps
    source = f"""
func.func @online(%q: tensor<1x3x4xf32>, %k0: tensor<1x2x4xf32>, %v0: tensor<1x2x5xf32>,
                  %k1: tensor<1x2x4xf32>, %v1: tensor<1x2x5xf32>) -> (tensor<1x3x5xf32>, tensor<1x3xf32>) {{
  %scale = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ea = tensor.empty() : tensor<1x3x5xf32>
  %er = tensor.empty() : tensor<1x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ea : tensor<1x3x5xf32>) -> tensor<1x3x5xf32>
  %max = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x3xf32>) -> tensor<1x3xf32>
  %sum = linalg.fill ins(%zero : f32) outs(%er : tensor<1x3xf32>) -> tensor<1x3xf32>
  %a:3 = {step.replace('%K', '%k0').replace('%V', '%v0').replace('%A', '%acc').replace('%M', '%max').replace('%S', '%sum')}
  %b:3 = {step.replace('%K', '%k1').replace('%V', '%v1').replace('%A', '%a#0').replace('%M', '%a#1').replace('%S', '%a#2')}
  return %b#0, %b#2 : tensor<1x3x5xf32>, tensor<1x3xf32>
}}"""
    q = RNG.standard_normal((1, 3, 4)).astype(np.float32)
    k = RNG.standard_normal((1, 4, 4)).astype(np.float32)
    v = RNG.standard_normal((1, 4, 5)).astype(np.float32)
    acc, total = run(source, "online", q, k[:, :2], v[:, :2], k[:, 2:], v[:, 2:])  # type: ignore[misc]
    scores = 0.5 * q @ k.transpose(0, 2, 1)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    expected = (weights / weights.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(acc / total[..., None], expected, rtol=1e-5, atol=1e-6)


def test_map_load_pads_and_map_store_masks(run: Runner) -> None:
    source = """
func.func @maps(%x: tensor<12xf32>, %o: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %pad = arith.constant -1.0 : f32
  %c10 = arith.constant 10 : index
  %0 = iree_linalg_ext.map_load %x into %o {
  ^bb0(%i: index, %j: index):
    %l = affine.linearize_index [%i, %j] by (4, 3) : index
    iree_linalg_ext.yield %l, %pad : index, f32
  } : tensor<12xf32> into tensor<4x5xf32> -> tensor<4x5xf32>
  %1 = iree_linalg_ext.map_store %x into %o {
  ^bb0(%i: index):
    %d:2 = affine.delinearize_index %i into (4, 3) : index, index
    %keep = arith.cmpi ult, %i, %c10 : index
    iree_linalg_ext.yield %d#0, %d#1, %keep : index, index, i1
  } : tensor<12xf32> into tensor<4x5xf32> -> tensor<4x5xf32>
  return %0, %1 : tensor<4x5xf32>, tensor<4x5xf32>
}"""
    x = np.arange(12, dtype=np.float32)
    o = np.full((4, 5), 7.0, np.float32)
    loaded, stored = run(source, "maps", x, o)  # type: ignore[misc]
    i, j = np.meshgrid(np.arange(4), np.arange(5), indexing="ij")
    linear = i * 3 + j  # j = 3, 4 run into the next row; past 11 is padding
    np.testing.assert_array_equal(loaded, np.where(linear < 12, linear, -1))  # x[k] == k
    expected = o.copy()
    for k in range(10):
        expected[k // 3, k % 3] = x[k]
    np.testing.assert_array_equal(stored, expected)


def test_sort_operands_of_different_dynamic_sizes_fail_before_the_dispatch(run: Runner) -> None:
    source = """
func.func @sort(%v: tensor<?xf32>, %i: tensor<?xi32>) -> tensor<?xi32> {
  %0:2 = iree_linalg_ext.sort dimension(0) outs(%v, %i : tensor<?xf32>, tensor<?xi32>) {
  ^bb0(%a: f32, %b: f32, %c: i32, %d: i32):
    %lt = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %lt : i1
  } -> tensor<?xf32>, tensor<?xi32>
  return %0#1 : tensor<?xi32>
}"""
    with pytest.raises(RuntimeFault, match="'iree_linalg_ext.sort' in @sort: dimension 0 of "
                       r"operand 0 \(%v\) differs from dimension 0 of operand 1 \(%i\): 3 vs 2"):
        run(source, "sort", np.array([3, 1, 2], np.float32), np.array([0, 1], np.int32))


def _sort_prefix_source(rows: int, cols: int, dim: int, predicate: str, keep: int) -> str:
    """torch-mlir's top-k: a whole-line sort of which only the first `keep` elements are read."""
    t, i = f"tensor<{rows}x{cols}xf32>", f"tensor<{rows}x{cols}xi32>"
    kept = (rows, keep) if dim == 1 else (keep, cols)
    kt, ki = f"tensor<{kept[0]}x{kept[1]}xf32>", f"tensor<{kept[0]}x{kept[1]}xi32>"
    return f"""
func.func @topk(%v: {t}, %i: {i}) -> ({kt}, {ki}) {{
  %0:2 = tm_tensor.sort dimension({dim}) outs(%v, %i : {t}, {i}) {{
  ^bb0(%a: f32, %b: f32, %c: i32, %d: i32):
    %r = arith.cmpf {predicate}, %a, %b : f32
    tm_tensor.yield %r : i1
  }} -> {t}, {i}
  %s = tensor.extract_slice %0#0[0, 0] [{kept[0]}, {kept[1]}] [1, 1] : {t} to {kt}
  %j = tensor.extract_slice %0#1[0, 0] [{kept[0]}, {kept[1]}] [1, 1] : {i} to {ki}
  return %s, %j : {kt}, {ki}
}}"""


def test_sort_read_only_through_a_prefix_is_the_stable_sorts_prefix(run: Runner) -> None:
    # The global-optimization phase marks the sort (its results are read only up to `keep`),
    # and llvm-cpu then selects instead of sorting: ties must keep line order as the stable
    # sort does, along either dimension, with keep of 1 and of a quarter of the line.
    x = RNG.integers(0, 6, (4, 64)).astype(np.float32)
    for dim, predicate, key, keep in ((1, "oge", -x, 9), (1, "olt", x, 1), (0, "ogt", -x, 1)):
        src = _sort_prefix_source(4, 64, dim, predicate, keep)
        ids = np.broadcast_to(np.arange(x.shape[dim], dtype=np.int32).reshape(
            [-1 if d == dim else 1 for d in range(2)]), x.shape).copy()
        order = np.argsort(key, axis=dim, kind="stable")
        taken = order[:, :keep] if dim == 1 else order[:keep]
        values, indices = run(src, "topk", x, ids)
        np.testing.assert_array_equal(np.asarray(indices), taken)
        np.testing.assert_array_equal(np.asarray(values), np.take_along_axis(x, taken, dim))


def test_sort_prefix_of_long_lines_in_several_workgroups(run: Runner) -> None:
    # Lines long enough to be split over workgroups (a partial last one included) and read in
    # blocks; few distinct values, so many elements tie with the last kept one and must stay
    # behind it, in line order.
    for shape, dim, keep in (((5, 20000), 1, 40), ((20000, 3), 0, 7)):
        x = RNG.integers(0, 300, shape).astype(np.float32)
        src = _sort_prefix_source(*shape, dim, "oge", keep)
        ids = np.broadcast_to(np.arange(x.shape[dim], dtype=np.int32).reshape(
            [-1 if d == dim else 1 for d in range(2)]), x.shape).copy()
        order = np.argsort(-x, axis=dim, kind="stable")
        taken = order[:, :keep] if dim == 1 else order[:keep]
        values, indices = run(src, "topk", x, ids)
        np.testing.assert_array_equal(np.asarray(indices), taken)
        np.testing.assert_array_equal(np.asarray(values), np.take_along_axis(x, taken, dim))


_TOPK_V2_OF_A_CAST = """
func.func @topk(%x: tensor<10xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %d = tensor.cast %x : tensor<10xf32> to tensor<?xf32>
  %ev = tensor.empty() : tensor<3xf32>
  %ei = tensor.empty() : tensor<3xi32>
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i32
  %v = linalg.fill ins(%ninf : f32) outs(%ev : tensor<3xf32>) -> tensor<3xf32>
  %i = linalg.fill ins(%c0 : i32) outs(%ei : tensor<3xi32>) -> tensor<3xi32>
  %0:2 = iree_linalg_ext.topk_v2 dimension(0) is_sorted ins(%d : tensor<?xf32>) outs(%v, %i : tensor<3xf32>, tensor<3xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<3xf32>, tensor<3xi32>
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xi32>
}"""


def test_topk_v2_of_a_size_known_only_as_a_constant(run: Runner) -> None:
    # The merged line's size (3 + 10) is index arithmetic of constants that dispatch formation
    # clones into the dispatch: the kernel description folds it to the literal 13.
    x = np.array([4, 5, 8, 1, 2, 10, 7, 3, 9, 6], dtype=np.float32)
    values, indices = run(_TOPK_V2_OF_A_CAST, "topk", x)  # type: ignore[misc]
    np.testing.assert_array_equal(indices, [5, 8, 2])
    np.testing.assert_array_equal(values, [10, 9, 8])


def test_error_in_what_topk_becomes_points_at_the_topk() -> None:
    # The sort that lower-linalg-ext writes for a topk takes the topk's position, so a
    # comparator the sort kernel cannot run is reported at the topk (line 3), not at 1:1.
    source = """func.func @topk(%x: tensor<10xf32>, %t: tensor<2xf32>) -> tensor<3xf32> {
  %v = arith.constant dense<0xFF800000> : tensor<3xf32>
  %0 = iree_linalg_ext.topk_v2 dimension(0) is_sorted ins(%x : tensor<10xf32>) outs(%v : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %k = arith.constant 1 : index
    %w = tensor.extract %t[%k] : tensor<2xf32>
    %s = arith.mulf %a, %w : f32
    %gt = arith.cmpf ogt, %s, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<3xf32>
  return %0 : tensor<3xf32>
}"""
    for target in ("reference", "llvm-cpu"):
        with pytest.raises(CompileError, match=r"^test\.mlir:3:3: error: .*tensor\.extract"):
            compiled(source, target)
