"""Reductions over the same rows in one dispatch (flow's fuse-row-reductions), run row by row on
llvm-cpu (row_pipeline.py) and in order on the reference target: softmax over rows whose length
is off the vector width, over the last dimension of a 3-D tensor, of linalg.reduce and
linalg.broadcast, a layernorm whose mean and
variance are two reductions with keepdim reshapes between them, and a program whose second
reduction reads the first's result at other rows (two dispatches, as before). Compared with
numpy on every host target and driver; the dispatch counts and llvm-cpu's split of the rows
into workgroups are checked on the compiled module."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import weir.api as weir
from weir.format.module_file import deserialize
from weir.format.native_executable import decode_native_executable

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(7)


def _softmax_source(shape: tuple[int, ...]) -> str:
    """Softmax over the last dimension, spelled as exporters leave it: max, exp(x - max), sum,
    division, each a generic."""
    rank = len(shape)
    dims = ", ".join(f"d{i}" for i in range(rank))
    rows = ", ".join(f"d{i}" for i in range(rank - 1))
    full = f"tensor<{'x'.join(map(str, shape))}xf32>"
    part = f"tensor<{'x'.join(map(str, shape[:-1]))}xf32>"
    ident = f"affine_map<({dims}) -> ({dims})>"
    row = f"affine_map<({dims}) -> ({rows})>"
    red = ", ".join(['"parallel"'] * (rank - 1) + ['"reduction"'])
    par = ", ".join(['"parallel"'] * rank)
    return f"""
func.func @softmax(%x: {full}) -> {full} {{
  %lowest = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : {part}
  %full = tensor.empty() : {full}
  %mi = linalg.fill ins(%lowest : f32) outs(%rows : {part}) -> {part}
  %max = linalg.generic {{indexing_maps = [{ident}, {row}], iterator_types = [{red}]}}
      ins(%x : {full}) outs(%mi : {part}) {{
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  }} -> {part}
  %exp = linalg.generic {{indexing_maps = [{ident}, {row}, {ident}], iterator_types = [{par}]}}
      ins(%x, %max : {full}, {part}) outs(%full : {full}) {{
  ^bb0(%in: f32, %m: f32, %out: f32):
    %s = arith.subf %in, %m : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  }} -> {full}
  %si = linalg.fill ins(%zero : f32) outs(%rows : {part}) -> {part}
  %sum = linalg.generic {{indexing_maps = [{ident}, {row}], iterator_types = [{red}]}}
      ins(%exp : {full}) outs(%si : {part}) {{
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }} -> {part}
  %0 = linalg.generic {{indexing_maps = [{ident}, {row}, {ident}], iterator_types = [{par}]}}
      ins(%exp, %sum : {full}, {part}) outs(%full : {full}) {{
  ^bb0(%e: f32, %s: f32, %out: f32):
    %d = arith.divf %e, %s : f32
    linalg.yield %d : f32
  }} -> {full}
  return %0 : {full}
}}"""


# The same with linalg.reduce and linalg.broadcast, as the StableHLO and TOSA paths leave it.
REDUCE_SOFTMAX = """
func.func @softmax(%x: tensor<40x300xf32>) -> tensor<40x300xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<40xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<40xf32>) -> tensor<40xf32>
  %max = linalg.reduce ins(%x : tensor<40x300xf32>) outs(%mi : tensor<40xf32>) dimensions = [1]
    (%a: f32, %m: f32) {
      %y = arith.maximumf %a, %m : f32
      linalg.yield %y : f32
    }
  %e1 = tensor.empty() : tensor<40x300xf32>
  %maxb = linalg.broadcast ins(%max : tensor<40xf32>) outs(%e1 : tensor<40x300xf32>) dimensions = [1]
  %d = arith.subf %x, %maxb : tensor<40x300xf32>
  %ex = math.exp %d : tensor<40x300xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e0 : tensor<40xf32>) -> tensor<40xf32>
  %sum = linalg.reduce ins(%ex : tensor<40x300xf32>) outs(%si : tensor<40xf32>) dimensions = [1]
    (%a: f32, %s: f32) {
      %y = arith.addf %a, %s : f32
      linalg.yield %y : f32
    }
  %sumb = linalg.broadcast ins(%sum : tensor<40xf32>) outs(%e1 : tensor<40x300xf32>) dimensions = [1]
  %r = arith.divf %ex, %sumb : tensor<40x300xf32>
  return %r : tensor<40x300xf32>
}"""


# A layernorm over the last dimension of 2x5x48, as torch exports it: the mean and the variance
# kept as 2x5x1, read back through (d0, d1, 0), the variance reduced from the centred values.
LAYERNORM = """
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#keep = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#chan = affine_map<(d0, d1, d2) -> (d2)>
func.func @layernorm(%x: tensor<2x5x48xf32>, %g: tensor<48xf32>, %b: tensor<48xf32>) -> tensor<2x5x48xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 48.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %k = tensor.empty() : tensor<2x5x1xf32>
  %full = tensor.empty() : tensor<2x5x48xf32>
  %z = linalg.fill ins(%zero : f32) outs(%k : tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %s = linalg.generic {indexing_maps = [#x3, #keep], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x5x48xf32>) outs(%z : tensor<2x5x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<2x5x1xf32>
  %mean = linalg.generic {indexing_maps = [#x3, #x3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x5x1xf32>) outs(%k : tensor<2x5x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %n : f32
    linalg.yield %d : f32
  } -> tensor<2x5x1xf32>
  %c = linalg.generic {indexing_maps = [#x3, #keep, #x3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %mean : tensor<2x5x48xf32>, tensor<2x5x1xf32>) outs(%full : tensor<2x5x48xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  } -> tensor<2x5x48xf32>
  %flat = tensor.collapse_shape %z [[0], [1, 2]] : tensor<2x5x1xf32> into tensor<2x5xf32>
  %q = linalg.generic {indexing_maps = [#x3, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c : tensor<2x5x48xf32>) outs(%flat : tensor<2x5xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %sq, %acc : f32
    linalg.yield %a : f32
  } -> tensor<2x5xf32>
  %var = tensor.expand_shape %q [[0], [1, 2]] output_shape [2, 5, 1] : tensor<2x5xf32> into tensor<2x5x1xf32>
  %0 = linalg.generic {indexing_maps = [#x3, #keep, #chan, #chan, #x3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c, %var, %g, %b : tensor<2x5x48xf32>, tensor<2x5x1xf32>, tensor<48xf32>, tensor<48xf32>) outs(%full : tensor<2x5x48xf32>) {
  ^bb0(%in: f32, %v: f32, %gi: f32, %bi: f32, %out: f32):
    %m = arith.divf %v, %n : f32
    %e = arith.addf %m, %eps : f32
    %r = math.rsqrt %e : f32
    %y = arith.mulf %in, %r : f32
    %t = arith.mulf %y, %gi : f32
    %o = arith.addf %t, %bi : f32
    linalg.yield %o : f32
  } -> tensor<2x5x48xf32>
  return %0 : tensor<2x5x48xf32>
}"""

# Each row divided by its sum, read back through a keepdim reshape: one reduction whose reader
# is no epilogue of it (the reshape between them), so its rows are stored after the row's sum.
NORMALIZE = """
func.func @normalize(%x: tensor<6x4x40xf32>) -> tensor<6x4x40xf32> {
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<6x4xf32>
  %full = tensor.empty() : tensor<6x4x40xf32>
  %z = linalg.fill ins(%zero : f32) outs(%rows : tensor<6x4xf32>) -> tensor<6x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<6x4x40xf32>) outs(%z : tensor<6x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<6x4xf32>
  %k = tensor.expand_shape %s [[0], [1, 2]] output_shape [6, 4, 1] : tensor<6x4xf32> into tensor<6x4x1xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %k : tensor<6x4x40xf32>, tensor<6x4x1xf32>) outs(%full : tensor<6x4x40xf32>) {
  ^bb0(%in: f32, %t: f32, %out: f32):
    %d = arith.divf %in, %t : f32
    linalg.yield %d : f32
  } -> tensor<6x4x40xf32>
  return %0 : tensor<6x4x40xf32>
}"""

# The column sums of exp(x - row max): each row of the sum needs every row of the exponentials.
COLUMNS = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @columns(%x: tensor<24x24xf32>) -> tensor<24xf32> {
  %lowest = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<24xf32>
  %full = tensor.empty() : tensor<24x24xf32>
  %mi = linalg.fill ins(%lowest : f32) outs(%rows : tensor<24xf32>) -> tensor<24xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<24x24xf32>) outs(%mi : tensor<24xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<24xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<24x24xf32>, tensor<24xf32>) outs(%full : tensor<24x24xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %s = arith.subf %in, %m : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  } -> tensor<24x24xf32>
  %si = linalg.fill ins(%zero : f32) outs(%rows : tensor<24xf32>) -> tensor<24xf32>
  %sum = linalg.generic {indexing_maps = [#tr, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<24x24xf32>) outs(%si : tensor<24xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<24xf32>
  return %sum : tensor<24xf32>
}"""


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("shape", [(64, 1000), (2, 3, 37), (3, 16)])
def test_softmax(run: Runner, shape: tuple[int, ...]) -> None:
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    y = np.asarray(run(_softmax_source(shape), "softmax", x))
    np.testing.assert_allclose(y, _softmax(x), rtol=2e-6, atol=1e-7)


def test_softmax_of_reduce_and_broadcast(run: Runner) -> None:
    x = (RNG.standard_normal((40, 300)) * 4).astype(np.float32)
    y = np.asarray(run(REDUCE_SOFTMAX, "softmax", x))
    np.testing.assert_allclose(y, _softmax(x), rtol=2e-6, atol=1e-7)


def test_layernorm(run: Runner) -> None:
    x = (RNG.standard_normal((2, 5, 48)) * 3 + 1).astype(np.float32)
    g = RNG.standard_normal(48).astype(np.float32)
    b = RNG.standard_normal(48).astype(np.float32)
    y = np.asarray(run(LAYERNORM, "layernorm", x, g, b))
    c = x - x.mean(axis=-1, keepdims=True)
    want = c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + 1e-5) * g + b
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_row_sums_through_a_reshape(run: Runner) -> None:
    x = RNG.random((6, 4, 40)).astype(np.float32) + 0.5
    y = np.asarray(run(NORMALIZE, "normalize", x))
    np.testing.assert_allclose(y, x / x.sum(axis=-1, keepdims=True), rtol=2e-6)


def test_reduction_of_other_rows(run: Runner) -> None:
    x = RNG.standard_normal((24, 24)).astype(np.float32)
    y = np.asarray(run(COLUMNS, "columns", x))
    np.testing.assert_allclose(y, np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=0),
                               rtol=1e-5)


def _flow(source: str) -> str:
    return weir.compile_to_phase(source, "rows.mlir", weir.CompilerOptions(
        target_backends=("llvm-cpu",)), "flow")


@pytest.mark.parametrize("source, dispatches", [
    (_softmax_source((64, 1000)), 1), (REDUCE_SOFTMAX, 1), (LAYERNORM, 1), (NORMALIZE, 1),
    (COLUMNS, 2)])
def test_dispatch_count(source: str, dispatches: int) -> None:
    assert _flow(source).count("flow.executable.export") == dispatches


@pytest.mark.parametrize("source, rows", [
    (_softmax_source((64, 1000)), 64), (REDUCE_SOFTMAX, 40), (LAYERNORM, 2), (NORMALIZE, 6)])
def test_rows_split_into_workgroups(source: str, rows: int) -> None:
    """llvm-cpu runs the joined dispatch row by row, its rows (the outermost row dimension)
    split among workgroups (as many as their work asks for: all in one for the small ones). The
    entry ran as one workgroup of extent 1 when the roots ran one after another, each over all
    rows, and then the stores."""
    options = weir.CompilerOptions(target_backends=("llvm-cpu",))
    image = deserialize(weir.compile_string(source, "rows.mlir", options))
    variant = image.executables[0].variants[0]
    (entry,) = decode_native_executable(image.segments[variant.segment]).entries
    assert entry.grid_extent == rows
