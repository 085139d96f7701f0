"""A root fused with an elementwise epilogue keeps the root's own grid on llvm-cpu (each
workgroup finishes the tiles it wrote), rather than running as one workgroup: the fused dispatch
splits its work exactly as the root alone does. A sum whose epilogue reads its input again (a
softmax's division) keeps that input in the output for the epilogue instead of computing it twice."""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np
from lowered import lowered_entry

import weir.api as weir
from weir.format.module_file import deserialize
from weir.format.native_executable import NativeEntry, decode_native_executable

OPTIONS = weir.CompilerOptions(target_backends=("llvm-cpu",))
RELU = """
      %zeros = arith.constant dense<0.0> : {ty}
      %y = arith.maximumf %r, %zeros : {ty}
      return %y : {ty}"""


def _entry(src: str) -> NativeEntry:
    image = deserialize(weir.compile_string(src, "epilogue.mlir", OPTIONS))
    (executable,) = image.executables
    variant = executable.variants[0]
    (entry,) = decode_native_executable(image.segments[variant.segment]).entries
    return entry


def _pair(body: str, ty: str, args: str) -> tuple[NativeEntry, NativeEntry]:
    """(the root alone, the root with a relu epilogue)."""
    head = f"func.func @f({args}) -> {ty} {{\n  %zero = arith.constant 0.0 : f32\n{body}"
    return _entry(head + f"\n      return %r : {ty}\n}}"), \
        _entry(head + RELU.format(ty=ty) + "\n}")


def test_matmul_epilogue_keeps_the_matmul_grid() -> None:
    ty = "tensor<512x256xf32>"
    body = f"""
      %e = tensor.empty() : {ty}
      %acc = linalg.fill ins(%zero : f32) outs(%e : {ty}) -> {ty}
      %r = linalg.matmul ins(%x, %w : tensor<512x128xf32>, tensor<128x256xf32>) outs(%acc : {ty}) -> {ty}"""
    plain, fused = _pair(body, ty, "%x: tensor<512x128xf32>, %w: tensor<128x256xf32>")
    assert (fused.grid_extent, fused.grid_tile) == (plain.grid_extent, plain.grid_tile)
    assert isinstance(plain.grid_extent, int) and plain.grid_extent > plain.grid_tile


def test_reduction_epilogue_keeps_the_reduction_grid() -> None:
    ty = "tensor<4096xf32>"
    body = f"""
      %e = tensor.empty() : {ty}
      %acc = linalg.fill ins(%zero : f32) outs(%e : {ty}) -> {ty}
      %r = linalg.reduce ins(%x : tensor<4096x64xf32>) outs(%acc : {ty}) dimensions = [1]
        (%in: f32, %a: f32) {{
          %s = arith.addf %in, %a : f32
          linalg.yield %s : f32
        }}"""
    plain, fused = _pair(body, ty, "%x: tensor<4096x64xf32>")
    assert (fused.grid_extent, fused.grid_tile) == (plain.grid_extent, plain.grid_tile)
    assert isinstance(plain.grid_extent, int) and plain.grid_extent > plain.grid_tile


def test_conv_epilogue_keeps_the_conv_grid() -> None:
    ty = "tensor<1x62x62x32xf32>"
    body = f"""
      %e = tensor.empty() : {ty}
      %acc = linalg.fill ins(%zero : f32) outs(%e : {ty}) -> {ty}
      %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x64x64x16xf32>, tensor<3x3x16x32xf32>) outs(%acc : {ty}) -> {ty}"""
    plain, fused = _pair(body, ty, "%x: tensor<1x64x64x16xf32>, %w: tensor<3x3x16x32xf32>")
    assert (fused.grid_extent, fused.grid_tile) == (plain.grid_extent, plain.grid_tile)
    assert isinstance(plain.grid_extent, int) and plain.grid_extent > plain.grid_tile


SOFTMAX_TAIL = """
func.func @f(%x: tensor<8x1000xf32>) -> tensor<8x1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1000xf32>
  %exp = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x1000xf32>) outs(%e : tensor<8x1000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<8x1000xf32>
  %se = tensor.empty() : tensor<8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<8x1000xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<8x1000xf32>, tensor<8xf32>) outs(%e : tensor<8x1000xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<8x1000xf32>
  return %r : tensor<8x1000xf32>
}"""


def test_softmax_epilogue_reads_the_exponentials_the_sum_kept() -> None:
    # The sum stores each exp it computes in the output, and the division reads it back there:
    # one exp per element in the code, not one for the sum and another for the division.
    module = lowered_entry(SOFTMAX_TAIL, "weir_sm").module
    # Each f32 exp emitted clamps its argument to at most 89 first (a compare and a select).
    clamp = str(ir.Constant(ir.FloatType(), 89.0)).split(" ", 1)[1]
    assert str(module).count(clamp) == 2
    x = np.random.default_rng(3).standard_normal((8, 1000)).astype(np.float32)
    ctx = weir.load([weir.compile_string(SOFTMAX_TAIL, "softmax.mlir", OPTIONS)])
    got = np.asarray(ctx.lookup_function("f")(x))
    want = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=2e-6)


def test_epilogue_reading_the_sums_across_computes_its_input_again() -> None:
    # out[i, j] = exp(x[i, j]) / sum[j], sum[i] being row i's: the block finished after sum[r]
    # is column r, whose exps other rows' sums compute later, so none can be read back there.
    across = SOFTMAX_TAIL.replace("8x1000", "64x64").replace("8xf32", "64xf32").replace(
        "(d0)>, affine_map<(d0, d1) -> (d0, d1)>]", "(d1)>, affine_map<(d0, d1) -> (d0, d1)>]")
    assert across.count("-> (d1)>") == 1
    x = np.random.default_rng(4).standard_normal((64, 64)).astype(np.float32)
    options = weir.CompilerOptions(target_backends=("llvm-cpu",))
    ctx = weir.load([weir.compile_string(across, "across.mlir", options)])
    got = np.asarray(ctx.lookup_function("f")(x))
    np.testing.assert_allclose(got, np.exp(x) / np.exp(x).sum(1)[None, :], rtol=2e-6)
