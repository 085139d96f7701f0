// Checks that a dispatch region is outlined into a flow.executable called by flow.dispatch.
// RUN: weir-opt --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions %s | filecheck %s

// CHECK: "flow.executable"() <{sym_name = "simple_mul_dispatch_0"}>
// CHECK: "flow.executable.export"() <{sym_name = "simple_mul_dispatch_0", function_ref = @simple_mul_dispatch_0}>
// CHECK: func.func @simple_mul_dispatch_0(%{{[0-9]+}}: tensor<4xf32>, %{{[0-9]+}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK: arith.mulf
// CHECK-LABEL: func.func @simple_mul(
// CHECK: %[[R:.*]] = "flow.dispatch"(%arg0, %arg1) <{entry_point = @simple_mul_dispatch_0::@simple_mul_dispatch_0
// CHECK: func.return %[[R]]
func.func @simple_mul(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
