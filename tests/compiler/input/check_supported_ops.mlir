// Checks that an op weir cannot compile is rejected at its own location, naming the op.
// RUN: not weir-opt --check-supported-ops %s 2>&1 | filecheck %s

func.func @uses_atan(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: check_supported_ops.mlir:[[# @LINE + 1]]:3: error: 'math.atan' is not supported
  %0 = math.atan %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
