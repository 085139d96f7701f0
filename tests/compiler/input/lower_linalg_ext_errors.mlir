// Checks that a linalg extension op that --lower-linalg-ext cannot write as linalg (a Winograd
// transform of a dynamic shape: its tile counts are part of the types) is a located error
// naming the op. The lowerings are in lower_linalg_ext.mlir.
// RUN: not weir-opt --split-input-file --lower-linalg-ext %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

func.func @winograd_dynamic(%x: tensor<1x?x10x2xf32>, %u: tensor<8x8x1x?x2x2xf32>) -> tensor<8x8x1x?x2x2xf32> {
  // ERR: lower_linalg_ext_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.winograd.input_transform' needs static shapes, got tensor<1x?x10x2xf32>
  %0 = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions([1, 2]) ins(%x : tensor<1x?x10x2xf32>) outs(%u : tensor<8x8x1x?x2x2xf32>) -> tensor<8x8x1x?x2x2xf32>
  return %0 : tensor<8x8x1x?x2x2xf32>
}
