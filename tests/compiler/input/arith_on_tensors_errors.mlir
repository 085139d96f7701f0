// Checks that arith casts and select on tensors reject mismatched shapes and widths at the op's
// own location. Every chunk fails and nothing is printed.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// A cast may not change the shape.
func.func @reshaping_cast(%a: tensor<4xi8>) -> tensor<2xi32> {
  // CHECK: arith_on_tensors_errors.mlir:[[# @LINE + 1]]:3: error: 'arith.extsi' op needs operands and result of one shape
  %0 = arith.extsi %a : tensor<4xi8> to tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// extsi on tensors still has to widen.
func.func @narrowing_extsi(%a: tensor<4xi32>) -> tensor<4xi8> {
  // CHECK: arith_on_tensors_errors.mlir:[[# @LINE + 1]]:3: error: 'arith.extsi' op the result's bit width must be larger than the input's (i32 to i8)
  %0 = arith.extsi %a : tensor<4xi32> to tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// A tensor condition must have the shape of the values it selects between.
func.func @select_shapes(%c: tensor<3xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: arith_on_tensors_errors.mlir:[[# @LINE + 1]]:3: error: 'arith.select' op needs operands and result of one shape
  %0 = arith.select %c, %a, %a : tensor<3xi1>, tensor<4xf32>
  return %0 : tensor<4xf32>
}
