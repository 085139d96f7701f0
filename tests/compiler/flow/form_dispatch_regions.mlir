// Checks that a chain of four elementwise ops is fused into exactly one dispatch region, and that
// convolution and pooling are dispatch roots that take their linalg.fill init along.
// RUN: weir-opt --split-input-file --convert-elementwise-to-linalg --form-dispatch-regions %s | filecheck %s

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

// -----

// A convolution and the fill of its init form one region; the host keeps no tensor math.
// CHECK-LABEL: func.func @conv
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[EMPTY:.*]] = tensor.empty() : tensor<1x54x54x64xf32>
// CHECK-NEXT: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<1x54x54x64xf32>)
// CHECK-NEXT: %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%x, %w : tensor<1x56x56x64xf32>, tensor<3x3x64x64xf32>) outs(%[[ACC]] : tensor<1x54x54x64xf32>)
// CHECK-NEXT: "flow.return"(%[[CONV]])
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @conv(%x: tensor<1x56x56x64xf32>, %w: tensor<3x3x64x64xf32>) -> tensor<1x54x54x64xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1x54x54x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x54x54x64xf32>) -> tensor<1x54x54x64xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x56x56x64xf32>, tensor<3x3x64x64xf32>) outs(%acc : tensor<1x54x54x64xf32>) -> tensor<1x54x54x64xf32>
  return %0 : tensor<1x54x54x64xf32>
}

// -----

// Max pooling with a -inf fill and an empty window operand: one region holding all of them.
// CHECK-LABEL: func.func @max_pool
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK-DAG: %[[WIN:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK-DAG: %[[ACC:.*]] = linalg.fill
// CHECK: %[[POOL:.*]] = linalg.pooling_nchw_max {{.*}} ins(%x, %[[WIN]] : tensor<1x4x8x8xf32>, tensor<2x2xf32>) outs(%[[ACC]] : tensor<1x4x4x4xf32>)
// CHECK-NEXT: "flow.return"(%[[POOL]])
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @max_pool(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %init = tensor.empty() : tensor<1x4x4x4xf32>
  %acc = linalg.fill ins(%ninf : f32) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %0 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x4x8x8xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
