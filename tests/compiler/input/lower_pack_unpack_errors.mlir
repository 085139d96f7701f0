// Checks that linalg.pack / linalg.unpack with inconsistent layouts are rejected by the
// verifier, and that a static pack whose tiles do not divide its source without a
// padding_value is a located error of --lower-pack-unpack. The valid forms are in
// lower_pack_unpack.mlir.
// RUN: not weir-opt --split-input-file --lower-pack-unpack %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

func.func @not_a_permutation(%x: tensor<4x4xi32>, %d: tensor<2x2x2x2xi32>) -> tensor<2x2x2x2xi32> {
  // ERR: lower_pack_unpack_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.pack' op outer_dims_perm [0, 0] is not a permutation of 2 dimensions
  %0 = linalg.pack %x outer_dims_perm = [0, 0] inner_dims_pos = [0, 1] inner_tiles = [2, 2] into %d : tensor<4x4xi32> -> tensor<2x2x2x2xi32>
  return %0 : tensor<2x2x2x2xi32>
}

// -----

func.func @tile_mismatch(%x: tensor<4x4xi32>, %d: tensor<2x2x2x2xi32>) -> tensor<2x2x2x2xi32> {
  // ERR: lower_pack_unpack_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.pack' op the packed type tensor<2x2x2x2xi32> has tile sizes that differ from inner_tiles [2, 3]
  %0 = linalg.pack %x inner_dims_pos = [0, 1] inner_tiles = [2, 3] into %d : tensor<4x4xi32> -> tensor<2x2x2x2xi32>
  return %0 : tensor<2x2x2x2xi32>
}

// -----

func.func @needs_padding(%x: tensor<5x4xi32>, %d: tensor<3x2x2x2xi32>) -> tensor<3x2x2x2xi32> {
  // ERR: lower_pack_unpack_errors.mlir:[[# @LINE + 1]]:3: error: linalg.pack of tensor<5x4xi32> into tiles [2, 2] needs a padding_value: the tiles do not divide the source
  %0 = linalg.pack %x inner_dims_pos = [0, 1] inner_tiles = [2, 2] into %d : tensor<5x4xi32> -> tensor<3x2x2x2xi32>
  return %0 : tensor<3x2x2x2xi32>
}
