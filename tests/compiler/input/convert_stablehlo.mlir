// Checks that the StableHLO ops weir reads parse in MLIR's generic form (attributes in either
// dictionary) and print back in a form that parses again (ROUNDTRIP), and that
// --convert-stablehlo writes stablehlo.slice as a strided tensor.extract_slice and
// stablehlo.reverse as a generic reading each element from its mirrored position. The errors
// are in convert_stablehlo_errors.mlir.
// RUN: weir-opt --split-input-file --check-supported-ops %s | weir-opt --split-input-file - | filecheck %s --check-prefix=ROUNDTRIP
// RUN: weir-opt --split-input-file --convert-stablehlo %s | filecheck %s

// ROUNDTRIP-LABEL: func.func @slice(
// ROUNDTRIP-NEXT: "stablehlo.slice"(%x) <{start_indices = array<i64: 0, 1, 0>, limit_indices = array<i64: 2, 4, 2>, strides = array<i64: 1, 2, 1>}> : (tensor<2x4x2xf32>) -> tensor<2x2x2xf32>
// CHECK-LABEL: func.func @slice(
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %x[0, 1, 0] [2, 2, 2] [1, 2, 1] : tensor<2x4x2xf32> to tensor<2x2x2xf32>
// CHECK-NEXT: func.return %[[S]]
func.func @slice(%x: tensor<2x4x2xf32>) -> tensor<2x2x2xf32> {
  %0 = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 1, 0>, limit_indices = array<i64: 2, 4, 2>, strides = array<i64: 1, 2, 1>} : (tensor<2x4x2xf32>) -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}

// -----

// A reversed dynamic dimension ends at its size - 1, computed on the host.
// ROUNDTRIP-LABEL: func.func @reverse(
// ROUNDTRIP-NEXT: "stablehlo.reverse"(%x) <{dimensions = array<i64: 1>}> : (tensor<3x?xi32>) -> tensor<3x?xi32>
// CHECK-LABEL: func.func @reverse(
// CHECK: %[[N:.*]] = tensor.dim %x, %{{.*}} : tensor<3x?xi32>
// CHECK: %[[LAST:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<3x?xi32>
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<3x?xi32>) {
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[K:.*]] = arith.subi %[[LAST]], %[[J]] : index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %x[%[[I]], %[[K]]] : tensor<3x?xi32>
// CHECK-NEXT: linalg.yield %[[V]] : i32
// CHECK-NOT: stablehlo
func.func @reverse(%x: tensor<3x?xi32>) -> tensor<3x?xi32> {
  %0 = "stablehlo.reverse"(%x) <{dimensions = array<i64: 1>}> : (tensor<3x?xi32>) -> tensor<3x?xi32>
  return %0 : tensor<3x?xi32>
}
