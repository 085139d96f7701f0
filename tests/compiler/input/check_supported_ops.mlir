// Checks that an op weir cannot compile is rejected at its own location, naming the op, and so is
// a supported op in a form weir cannot compile (a truncf or scaling_truncf rounding mode other
// than to_nearest_even); the default mode, spelled or not, passes and is printed.
// RUN: not weir-opt --split-input-file --check-supported-ops %s 2>&1 >/dev/null | filecheck %s
// RUN: not weir-opt --split-input-file --check-supported-ops %s 2>/dev/null | filecheck %s --check-prefix=OUT

func.func @uses_trunc(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: check_supported_ops.mlir:[[# @LINE + 1]]:3: error: 'math.trunc' is not supported
  %0 = math.trunc %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @rounds_down(%a: f32) -> f16 {
  // CHECK: check_supported_ops.mlir:[[# @LINE + 1]]:3: error: 'arith.truncf' with rounding mode downward is not supported (only to_nearest_even)
  %0 = arith.truncf %a downward : f32 to f16
  return %0 : f16
}

// -----

func.func @scales_toward_zero(%a: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<4xbf16> {
  // CHECK: check_supported_ops.mlir:[[# @LINE + 1]]:3: error: 'arith.scaling_truncf' with rounding mode toward_zero is not supported (only to_nearest_even)
  %0 = arith.scaling_truncf %a, %s toward_zero : tensor<4xf32>, tensor<4xf32> to tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// OUT-LABEL: func.func @nearest_even
// OUT: arith.truncf %{{.*}} to_nearest_even : f32 to f16
// OUT: arith.scaling_truncf %{{.*}}, %{{.*}} : f32, f32 to bf16
func.func @nearest_even(%a: f32) -> (f16, bf16) {
  %0 = arith.truncf %a to_nearest_even : f32 to f16
  %1 = arith.scaling_truncf %a, %a : f32, f32 to bf16
  return %0, %1 : f16, bf16
}
