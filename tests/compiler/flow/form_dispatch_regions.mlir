// Checks that a chain of four elementwise ops is fused into exactly one dispatch region.
// RUN: weir-opt --convert-elementwise-to-linalg --form-dispatch-regions %s | filecheck %s

// CHECK-LABEL: func.func @chain
// CHECK: "flow.dispatch.region"
// CHECK-COUNT-4: linalg.generic
// CHECK: "flow.return"
// CHECK-NOT: "flow.dispatch.region"
func.func @chain(%a: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<16xf32> {
  %0 = math.absf %a : tensor<16xf32>
  %1 = arith.mulf %0, %b : tensor<16xf32>
  %2 = arith.addf %1, %a : tensor<16xf32>
  %3 = math.exp %2 : tensor<16xf32>
  return %3 : tensor<16xf32>
}
