"""IREE's Winograd transforms (iree_linalg_ext.winograd.input/filter/output_transform) on every
target and driver: a convolution computed the Winograd way (transformed image times
transformed filter at each of the 8 x 8 tile positions, then the output transform) equals the
direct convolution computed with numpy, in the NHWC/HWCF and NCHW/FCHW layouts, for an image
whose tiles overrun it (the input transform pads with zeros), and for single rank-2 tiles."""

from __future__ import annotations

import numpy as np

from tests.e2e.conftest import Runner

RNG = np.random.default_rng(11)


def _conv(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Valid 2-D cross-correlation of NHWC `x` with HWCF `g`."""
    n, h, w, _ = x.shape
    k, _, _, f = g.shape
    out = np.zeros((n, h - k + 1, w - k + 1, f))
    for dy in range(k):
        for dx in range(k):
            out += np.einsum("nhwc,cf->nhwf", x[:, dy:dy + h - k + 1, dx:dx + w - k + 1],
                             g[dy, dx].astype(np.float64))
    return out


def _winograd_conv(image: str, filt: str, tiles: str, out: str, image_dims: str,
                   kernel_dims: str) -> str:
    return f"""
func.func @conv(%x: {image}, %g: {filt}) -> {out} {{
  %ei = tensor.empty() : tensor<8x8x{tiles}xf32>
  %u = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions({image_dims})
       ins(%x : {image}) outs(%ei : tensor<8x8x{tiles}xf32>) -> tensor<8x8x{tiles}xf32>
  %ef = tensor.empty() : tensor<8x8x2x3xf32>
  %v = iree_linalg_ext.winograd.filter_transform output_tile_size(6) kernel_size(3) kernel_dimensions({kernel_dims})
       ins(%g : {filt}) outs(%ef : tensor<8x8x2x3xf32>) -> tensor<8x8x2x3xf32>
  %zero = arith.constant 0.0 : f32
  %em = tensor.empty() : tensor<8x8x1x2x2x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%em : tensor<8x8x1x2x2x3xf32>) -> tensor<8x8x1x2x2x3xf32>
  %m = linalg.generic {{indexing_maps = [
      affine_map<(i, j, n, th, tw, f, c) -> (i, j, n, th, tw, c)>,
      affine_map<(i, j, n, th, tw, f, c) -> (i, j, c, f)>,
      affine_map<(i, j, n, th, tw, f, c) -> (i, j, n, th, tw, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}}
      ins(%u, %v : tensor<8x8x1x2x2x2xf32>, tensor<8x8x2x3xf32>) outs(%z : tensor<8x8x1x2x2x3xf32>) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> tensor<8x8x1x2x2x3xf32>
  %eo = tensor.empty() : {out}
  %y = iree_linalg_ext.winograd.output_transform output_tile_size(6) kernel_size(3) image_dimensions({image_dims})
       ins(%m : tensor<8x8x1x2x2x3xf32>) outs(%eo : {out}) -> {out}
  return %y : {out}
}}"""


def test_winograd_convolution_is_the_direct_convolution_nhwc(run: Runner) -> None:
    # 14 x 10 pixels: 12 x 8 outputs in 2 x 2 tiles of 6; the second column of tiles reads
    # 4 columns past the image, which the input transform pads with zeros.
    x = RNG.standard_normal((1, 14, 10, 2)).astype(np.float32)
    g = RNG.standard_normal((3, 3, 2, 3)).astype(np.float32)
    src = _winograd_conv("tensor<1x14x10x2xf32>", "tensor<3x3x2x3xf32>", "1x2x2x2",
                         "tensor<1x12x12x3xf32>", "[1, 2]", "[0, 1]")
    y = np.asarray(run(src, "conv", x, g))
    padded = np.pad(x, ((0, 0), (0, 0), (0, 4), (0, 0)))
    np.testing.assert_allclose(y, _conv(padded, g), rtol=1e-4, atol=1e-4)


def test_winograd_convolution_is_the_direct_convolution_nchw(run: Runner) -> None:
    x = RNG.standard_normal((1, 2, 14, 14)).astype(np.float32)
    g = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    src = _winograd_conv("tensor<1x2x14x14xf32>", "tensor<3x2x3x3xf32>", "1x2x2x2",
                         "tensor<1x3x12x12xf32>", "[2, 3]", "[2, 3]")
    y = np.asarray(run(src, "conv", x, g))
    expected = _conv(x.transpose(0, 2, 3, 1), g.transpose(2, 3, 1, 0)).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


def test_winograd_single_tiles(run: Runner) -> None:
    # Rank-2 forms: an 8 x 8 tile and a 3 x 3 kernel; their transforms' elementwise product
    # transformed back is the 6 x 6 correlation.
    src = """
func.func @tile(%d: tensor<8x8xf32>, %g: tensor<3x3xf32>) -> tensor<6x6xf32> {
  %e8 = tensor.empty() : tensor<8x8xf32>
  %u = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions([0, 1])
       ins(%d : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %v = iree_linalg_ext.winograd.filter_transform output_tile_size(6) kernel_size(3) kernel_dimensions([0, 1])
       ins(%g : tensor<3x3xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = arith.mulf %u, %v : tensor<8x8xf32>
  %e6 = tensor.empty() : tensor<6x6xf32>
  %y = iree_linalg_ext.winograd.output_transform output_tile_size(6) kernel_size(3) image_dimensions([0, 1])
       ins(%m : tensor<8x8xf32>) outs(%e6 : tensor<6x6xf32>) -> tensor<6x6xf32>
  return %y : tensor<6x6xf32>
}"""
    d = RNG.standard_normal((8, 8)).astype(np.float32)
    g = RNG.standard_normal((3, 3)).astype(np.float32)
    y = np.asarray(run(src, "tile", d, g))
    expected = _conv(d[None, :, :, None], g[:, :, None, None])[0, :, :, 0]
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
