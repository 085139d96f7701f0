// Checks that a flow.tensor.dynamic_constant whose value is not a tensor constant, or whose
// result type is not the value's type with some sizes made dynamic, is rejected at its location.
// The valid forms are in lower_dynamic_constants.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

func.func @scalar() {
  // ERR: dynamic_constant_errors.mlir:[[# @LINE + 1]]:37: error: flow.tensor.dynamic_constant takes a tensor constant (dense<...> : tensor<...>), got 1 : i32
  %c = flow.tensor.dynamic_constant 1 : i32 -> tensor<?xi32>
  return
}

// -----

func.func @other_size() {
  // ERR: dynamic_constant_errors.mlir:[[# @LINE + 1]]:3: error: 'flow.tensor.dynamic_constant' op the result type tensor<?x4xf32> is not the constant's type tensor<2x3xf32> with some sizes made dynamic
  %c = flow.tensor.dynamic_constant dense<1.0> : tensor<2x3xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @other_element() {
  // ERR: dynamic_constant_errors.mlir:[[# @LINE + 1]]:3: error: 'flow.tensor.dynamic_constant' op the result type tensor<?xf16> is not the constant's type tensor<2xf32> with some sizes made dynamic
  %c = flow.tensor.dynamic_constant dense<1.0> : tensor<2xf32> -> tensor<?xf16>
  return
}
