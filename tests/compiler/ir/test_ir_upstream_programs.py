"""Programs in the forms upstream tools print compile and compute what MLIR means by them: a
generic with several results (a max with its index), IREE's util.func/util.call/util.return,
linalg.map and linalg.reduce in their short and long forms, batch_matmul with transposed and
broadcast indexing maps, scf.for with an unparenthesised result type, dense_resource blobs."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest

import weir.api as weir
from weir.ir import Blob


def _run(src: str, name: str, *args: Any, target: str = "reference") -> Any:
    data = weir.compile_string(src, "p.mlir", weir.CompilerOptions(target_backends=(target,)))
    with weir.load([data]) as ctx:
        return ctx.lookup_function(name)(*args)


X = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 7.5]], np.float32)

MAX_WITH_INDEX = """
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @max_index(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xi64>) {
  %lowest = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2xf32>
  %ei = tensor.empty() : tensor<2xi64>
  %m = linalg.fill ins(%lowest : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %mi = linalg.fill ins(%c0 : i64) outs(%ei : tensor<2xi64>) -> tensor<2xi64>
  %0:2 = linalg.generic {indexing_maps = [#map, #map1, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x3xf32>) outs(%m, %mi : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%in: f32, %out: f32, %out_0: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %gt = arith.cmpf ogt, %in, %out : f32
    %v = arith.select %gt, %in, %out : f32
    %w = arith.select %gt, %ki, %out_0 : i64
    linalg.yield %v, %w : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi64>
}
"""


@pytest.mark.parametrize("target", ["reference", "llvm-cpu"])
def test_generic_with_several_results(target: str) -> None:
    values, indices = _run(MAX_WITH_INDEX, "max_index", X, target=target)
    np.testing.assert_array_equal(values, [5.0, 7.5])
    np.testing.assert_array_equal(indices, [1, 2])


def test_util_func_call_and_return() -> None:
    src = """
module {
  util.func private @twice(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = arith.addf %arg0, %arg0 : tensor<3xf32>
    util.return %0 : tensor<3xf32>
  }
  util.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {iree.abi.stub} {
    %0 = util.call @twice(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
    %1 = arith.mulf %0, %arg1 : tensor<3xf32>
    util.return %0, %1 : tensor<3xf32>, tensor<3xf32>
  }
}
"""
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = np.array([4.0, 5.0, 6.0], np.float32)
    doubled, product = _run(src, "main", a, b)
    np.testing.assert_array_equal(doubled, 2 * a)
    np.testing.assert_array_equal(product, 2 * a * b)


def test_map_in_each_form() -> None:
    src = """
func.func @maps(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %e = tensor.empty() : tensor<3xf32>
  %0 = linalg.map { arith.subf } ins(%a, %b : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>)
  %1 = linalg.map ins(%a, %b : tensor<3xf32>, tensor<3xf32>) outs(%e : tensor<3xf32>)
    (%in: f32, %in_0: f32, %init: f32) {
      %s = arith.divf %in, %in_0 : f32
      linalg.yield %s : f32
    }
  %2 = linalg.map ins(%a : tensor<3xf32>) outs(%e : tensor<3xf32>)
    (%in: f32) {
      %s = arith.negf %in : f32
      linalg.yield %s : f32
    }
  %3 = linalg.map outs(%e : tensor<3xf32>)
    (%init: f32) {
      %c = arith.constant 4.0 : f32
      linalg.yield %c : f32
    }
  return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
"""
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = np.array([8.0, 4.0, 2.0], np.float32)
    sub, div, neg, const = _run(src, "maps", a, b)
    np.testing.assert_array_equal(sub, a - b)
    np.testing.assert_array_equal(div, a / b)
    np.testing.assert_array_equal(neg, -a)
    np.testing.assert_array_equal(const, [4.0, 4.0, 4.0])


def test_reduce_short_form_is_accumulator_first() -> None:
    src = """
func.func @r(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %hundred = arith.constant 100.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%hundred : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %0 = linalg.reduce { arith.subf } ins(%x : tensor<2x3xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
  return %0 : tensor<2xf32>
}
"""
    np.testing.assert_allclose(_run(src, "r", X), 100.0 - X.sum(axis=1))


BATCH_MATMUL = """
func.func @bmm(%a: LHS, %b: RHS) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x5xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %0 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> A>, affine_map<(d0, d1, d2, d3) -> B>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%a, %b : LHS, RHS) outs(%c : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}
"""


@pytest.mark.parametrize(("lhs_map", "lhs", "rhs_map", "rhs", "einsum"), [
    ("(d0, d3, d1)", (2, 3, 4), "(d0, d2, d3)", (2, 5, 3), "bkm,bnk->bmn"),
    ("(d0, d1, d3)", (2, 4, 3), "(d3, d2)", (3, 5), "bmk,kn->bmn"),
])
@pytest.mark.parametrize("target", ["reference", "llvm-cpu"])
def test_batch_matmul_with_indexing_maps(lhs_map: str, lhs: tuple[int, ...], rhs_map: str,
                                         rhs: tuple[int, ...], einsum: str, target: str) -> None:
    def tensor(shape: tuple[int, ...]) -> str:
        return "tensor<" + "x".join(map(str, shape)) + "xf32>"

    src = BATCH_MATMUL.replace("LHS", tensor(lhs)).replace("RHS", tensor(rhs)) \
        .replace("-> A>", f"-> {lhs_map}>").replace("-> B>", f"-> {rhs_map}>")
    rng = np.random.default_rng(7)
    a = rng.standard_normal(lhs).astype(np.float32)
    b = rng.standard_normal(rhs).astype(np.float32)
    np.testing.assert_allclose(_run(src, "bmm", a, b, target=target), np.einsum(einsum, a, b),
                               rtol=1e-5, atol=1e-5)


def test_scf_for_with_unparenthesised_result_type() -> None:
    src = """
func.func @loop(%a: tensor<3xf32>) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %0 = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %a) -> tensor<3xf32> {
    %1 = arith.addf %acc, %acc : tensor<3xf32>
    scf.yield %1 : tensor<3xf32>
  }
  return %0 : tensor<3xf32>
}
"""
    a = np.array([1.0, -2.0, 0.5], np.float32)
    np.testing.assert_array_equal(_run(src, "loop", a), 8 * a)


def test_dense_resource_constant() -> None:
    blob = Blob(struct.pack("<3f", 1.5, -2.0, 4.0)).to_hex()
    src = f"""
func.func @add_weights(%x: tensor<3xf32>) -> tensor<3xf32> {{
  %w = arith.constant dense_resource<weights> : tensor<3xf32>
  %0 = arith.addf %x, %w : tensor<3xf32>
  return %0 : tensor<3xf32>
}}
{{-#
  dialect_resources: {{
    builtin: {{
      weights: "{blob}"
    }}
  }}
#-}}
"""
    x = np.array([1.0, 1.0, 1.0], np.float32)
    np.testing.assert_array_equal(_run(src, "add_weights", x), [2.5, -1.0, 5.0])
