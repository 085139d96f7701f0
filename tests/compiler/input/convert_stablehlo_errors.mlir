// Checks that stablehlo.slice and stablehlo.reverse whose attributes disagree with their types
// are rejected at their location with a message naming what is wrong. The valid forms are in
// convert_stablehlo.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

func.func @slice_past_the_end(%x: tensor<4xf32>) -> tensor<2xf32> {
  // ERR: convert_stablehlo_errors.mlir:[[# @LINE + 1]]:3: error: 'stablehlo.slice' op dimension 0: [3, 5) by 1 is not a slice of a dimension of size 4
  %0 = "stablehlo.slice"(%x) {start_indices = array<i64: 3>, limit_indices = array<i64: 5>, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_result(%x: tensor<5xf32>) -> tensor<3xf32> {
  // ERR: convert_stablehlo_errors.mlir:[[# @LINE + 1]]:3: error: 'stablehlo.slice' op the result must be a tensor of shape [2] of the operand's element type, got tensor<3xf32>
  %0 = "stablehlo.slice"(%x) {start_indices = array<i64: 0>, limit_indices = array<i64: 4>, strides = array<i64: 2>} : (tensor<5xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reverse_dimension(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // ERR: convert_stablehlo_errors.mlir:[[# @LINE + 1]]:3: error: 'stablehlo.reverse' op dimensions [2] must be distinct dimensions of the rank-2 operand
  %0 = "stablehlo.reverse"(%x) {dimensions = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
