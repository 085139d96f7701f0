// Checks that a dispatch region is outlined into a flow.executable called by flow.dispatch, and
// that a convolution region is outlined the same way, its fill and init inside the executable.
// RUN: weir-opt --split-input-file --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions %s | filecheck %s

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

// -----

// CHECK: "flow.executable"() <{sym_name = "conv_dispatch_0"}>
// CHECK: func.func @conv_dispatch_0(%[[X:[0-9]+]]: tensor<1x9x9x3xi32>, %[[W:[0-9]+]]: tensor<3x3x3x8xi32>) -> tensor<1x4x4x8xi32>
// CHECK: %[[ACC:.*]] = linalg.fill
// CHECK: %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ACC]] : tensor<1x4x4x8xi32>)
// CHECK: func.return %[[CONV]]
// CHECK-LABEL: func.func @conv(
// CHECK-NOT: linalg.
// CHECK: %[[R:.*]] = "flow.dispatch"(%x, %w) <{entry_point = @conv_dispatch_0::@conv_dispatch_0
// CHECK: func.return %[[R]]
func.func @conv(%x: tensor<1x9x9x3xi32>, %w: tensor<3x3x3x8xi32>) -> tensor<1x4x4x8xi32> {
  %zero = arith.constant 0 : i32
  %init = tensor.empty() : tensor<1x4x4x8xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%init : tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32>
  %0 = linalg.conv_2d_nhwc_hwcf {strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x9x9x3xi32>, tensor<3x3x3x8xi32>) outs(%acc : tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32>
  return %0 : tensor<1x4x4x8xi32>
}
