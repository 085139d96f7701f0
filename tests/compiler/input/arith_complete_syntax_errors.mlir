// Checks that the arith ops weir defines or refines (index_cast, index_castui, extf, truncf,
// scaling_extf, scaling_truncf, addui_extended) reject what MLIR's verifiers reject, at the op's
// own location. Every chunk fails and nothing is printed.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// index_castui casts between index and an integer, not between two integers.
func.func @castui_without_index(%a: i32) -> i64 {
  // CHECK: arith_complete_syntax_errors.mlir:[[# @LINE + 1]]:3: error: 'arith.index_castui' op casts between index and an integer, not i32 to i64
  %0 = arith.index_castui %a : i32 to i64
  return %0 : i64
}

// -----

// Nor does index_cast.
func.func @cast_without_index(%a: tensor<4xi32>) -> tensor<4xi64> {
  // CHECK: arith_complete_syntax_errors.mlir:[[# @LINE + 1]]:3: error: 'arith.index_cast' op casts between index and an integer, not i32 to i64
  %0 = arith.index_cast %a : tensor<4xi32> to tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// extf widens.
func.func @narrowing_extf(%a: f32) -> f16 {
  // CHECK: arith_complete_syntax_errors.mlir:[[# @LINE + 1]]:3: error: 'arith.extf' op the result's bit width must be larger than the input's (f32 to f16)
  %0 = arith.extf %a : f32 to f16
  return %0 : f16
}

// -----

// truncf narrows.
func.func @widening_truncf(%a: bf16) -> f16 {
  // CHECK: arith_complete_syntax_errors.mlir:[[# @LINE + 1]]:3: error: 'arith.truncf' op the result's bit width must be smaller than the input's (bf16 to f16)
  %0 = arith.truncf %a : bf16 to f16
  return %0 : f16
}

// -----

// scaling_extf widens too.
func.func @narrowing_scaling_extf(%a: f32, %s: f32) -> f16 {
  // CHECK: arith_complete_syntax_errors.mlir:[[# @LINE + 1]]:3: error: 'arith.scaling_extf' op the result's bit width must be larger than the input's (f32 to f16)
  %0 = arith.scaling_extf %a, %s : f32, f32 to f16
  return %0 : f16
}

// -----

// The scale has the input's shape.
func.func @scale_shape(%a: tensor<4xf32>, %s: tensor<2xf32>) -> tensor<4xf16> {
  // CHECK: arith_complete_syntax_errors.mlir:[[# @LINE + 1]]:3: error: 'arith.scaling_truncf' op needs operands and result of one shape
  %0 = arith.scaling_truncf %a, %s : tensor<4xf32>, tensor<2xf32> to tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// The overflow of addui_extended is i1 (of the operands' shape).
func.func @wide_overflow(%a: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: arith_complete_syntax_errors.mlir:[[# @LINE + 1]]:3: error: 'arith.addui_extended' op needs operands and result of one shape
  %s, %o = arith.addui_extended %a, %a : tensor<4xi32>, tensor<2xi1>
  return %s : tensor<4xi32>
}
