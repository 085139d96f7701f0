"""A root fused with an elementwise epilogue keeps the root's own grid on llvm-cpu (each
workgroup finishes the tiles it wrote), rather than running as one workgroup: the fused dispatch
splits its work exactly as the root alone does."""

from __future__ import annotations

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
