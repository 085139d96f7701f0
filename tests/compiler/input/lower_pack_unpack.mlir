// Checks that linalg.pack / linalg.unpack print in MLIR's form and parse back unchanged
// (ROUNDTRIP), and that --lower-pack-unpack makes a pack a pad to whole tiles (fill +
// insert_slice, only where the tiles may not divide), an expand_shape and a transpose into the
// dest, and an unpack a transpose, a collapse_shape and an extract_slice dropping the padding.
// Errors are in lower_pack_unpack_errors.mlir.
// RUN: weir-opt --split-input-file %s | weir-opt --split-input-file - | filecheck %s --check-prefix=ROUNDTRIP
// RUN: weir-opt --split-input-file --lower-pack-unpack %s | filecheck %s

// ROUNDTRIP-LABEL: func.func @pack_static(
// ROUNDTRIP-NEXT: linalg.pack %x inner_dims_pos = [0, 1] inner_tiles = [2, 2] into %d : tensor<4x4xi32> -> tensor<2x2x2x2xi32>
// CHECK-LABEL: func.func @pack_static(
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %x {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] output_shape [2, 2, 2, 2] : tensor<4x4xi32> into tensor<2x2x2x2xi32>
// CHECK-NEXT: %[[T:.*]] = linalg.transpose ins(%[[E]]:tensor<2x2x2x2xi32>) outs(%d:tensor<2x2x2x2xi32>) permutation = [0, 2, 1, 3]
// CHECK-NEXT: func.return %[[T]]
func.func @pack_static(%x: tensor<4x4xi32>, %d: tensor<2x2x2x2xi32>) -> tensor<2x2x2x2xi32> {
  %0 = linalg.pack %x inner_dims_pos = [0, 1] inner_tiles = [2, 2] into %d : tensor<4x4xi32> -> tensor<2x2x2x2xi32>
  return %0 : tensor<2x2x2x2xi32>
}

// -----

// Padding, swapped outer dimensions and swapped tiles: the 1x9 source padded to 4x16.
// ROUNDTRIP-LABEL: func.func @pack_padded(
// ROUNDTRIP-NEXT: linalg.pack %x padding_value(%z : i8) outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [8, 4] into %d : tensor<1x9xi8> -> tensor<2x1x8x4xi8>
// CHECK-LABEL: func.func @pack_padded(
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x16xi8>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%z : i8) outs(%[[E]] : tensor<4x16xi8>) -> tensor<4x16xi8>
// CHECK-NEXT: %[[P:.*]] = tensor.insert_slice %x into %[[F]][0, 0] [1, 9] [1, 1] : tensor<1x9xi8> into tensor<4x16xi8>
// CHECK-NEXT: %[[X:.*]] = tensor.expand_shape %[[P]] {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] output_shape [1, 4, 2, 8] : tensor<4x16xi8> into tensor<1x4x2x8xi8>
// CHECK-NEXT: %[[T:.*]] = linalg.transpose ins(%[[X]]:tensor<1x4x2x8xi8>) outs(%d:tensor<2x1x8x4xi8>) permutation = [2, 0, 3, 1]
// CHECK-NEXT: func.return %[[T]]
func.func @pack_padded(%x: tensor<1x9xi8>, %z: i8, %d: tensor<2x1x8x4xi8>) -> tensor<2x1x8x4xi8> {
  %0 = linalg.pack %x padding_value(%z : i8) outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [8, 4] into %d : tensor<1x9xi8> -> tensor<2x1x8x4xi8>
  return %0 : tensor<2x1x8x4xi8>
}

// -----

// A dynamic tile: outer sizes are ceil-divisions on the host, the expand takes the tile value.
// ROUNDTRIP-LABEL: func.func @pack_dynamic_tile(
// ROUNDTRIP-NEXT: linalg.pack %x inner_dims_pos = [0] inner_tiles = [%t] into %d : tensor<?x3xf32> -> tensor<?x3x?xf32>
// CHECK-LABEL: func.func @pack_dynamic_tile(
// CHECK: %[[N:.*]] = tensor.dim %x, %{{.*}} : tensor<?x3xf32>
// CHECK-NEXT: %[[O:.*]] = arith.ceildivui %[[N]], %t : index
// CHECK: %[[E:.*]] = tensor.expand_shape %x {{\[}}[0 : i64, 1 : i64], [2 : i64]] output_shape [%[[O]], %t, 3] : tensor<?x3xf32> into tensor<?x?x3xf32>
// CHECK-NEXT: linalg.transpose ins(%[[E]]:tensor<?x?x3xf32>) outs(%d:tensor<?x3x?xf32>) permutation = [0, 2, 1]
func.func @pack_dynamic_tile(%x: tensor<?x3xf32>, %t: index, %d: tensor<?x3x?xf32>) -> tensor<?x3x?xf32> {
  %0 = linalg.pack %x inner_dims_pos = [0] inner_tiles = [%t] into %d : tensor<?x3xf32> -> tensor<?x3x?xf32>
  return %0 : tensor<?x3x?xf32>
}

// -----

// ROUNDTRIP-LABEL: func.func @unpack_sliced(
// ROUNDTRIP-NEXT: linalg.unpack %x outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [3, 3] into %d : tensor<2x2x3x3xi32> -> tensor<4x5xi32>
// CHECK-LABEL: func.func @unpack_sliced(
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<2x3x2x3xi32>
// CHECK-NEXT: %[[T:.*]] = linalg.transpose ins(%x:tensor<2x2x3x3xi32>) outs(%[[E]]:tensor<2x3x2x3xi32>) permutation = [1, 2, 0, 3]
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %[[T]] {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] : tensor<2x3x2x3xi32> into tensor<6x6xi32>
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[C]][0, 0] [4, 5] [1, 1] : tensor<6x6xi32> to tensor<4x5xi32>
// CHECK-NEXT: func.return %[[S]]
func.func @unpack_sliced(%x: tensor<2x2x3x3xi32>, %d: tensor<4x5xi32>) -> tensor<4x5xi32> {
  %0 = linalg.unpack %x outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [3, 3] into %d : tensor<2x2x3x3xi32> -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}
