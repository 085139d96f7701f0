// Checks that calls to functions of the same module are inlined and the private bodies removed.
// RUN: weir-opt --inline-internal-calls %s | filecheck %s

// CHECK-LABEL: func.func @outer
// CHECK-NOT: func.call
// CHECK: arith.addf
// CHECK-NOT: func.func private @helper
func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @outer(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @helper(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
