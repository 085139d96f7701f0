// Checks that static collapse_shape / expand_shape fuse into the region that reads them, so a
// transpose behind a reshape has no dispatch of its own, that a reshape nothing fuses stays on
// the host, and that a dynamic reshape is never fused.
// RUN: weir-opt --split-input-file --convert-elementwise-to-linalg --form-dispatch-regions %s | filecheck %s

// CHECK-LABEL: func.func @transpose_collapse_matmul
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[T:.*]] = linalg.transpose ins(%x
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[T]]
// CHECK: linalg.matmul ins(%[[C]], %w
// CHECK: "flow.return"
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @transpose_collapse_matmul(%x: tensor<1x16x64xf32>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<16x1x64xf32>
  %t = linalg.transpose ins(%x : tensor<1x16x64xf32>) outs(%t0 : tensor<16x1x64xf32>) permutation = [1, 0, 2]
  %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<16x1x64xf32> into tensor<16x64xf32>
  %e = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %mm = linalg.matmul ins(%c, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %mm : tensor<16x32xf32>
}

// -----

// The matmul's result is reshaped for the host's caller: the reshape stays on the host.
// CHECK-LABEL: func.func @reshape_on_the_host
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK-NOT: tensor.expand_shape
// CHECK: "flow.return"
// CHECK-NEXT: })
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[R]]
// CHECK-NEXT: func.return %[[E]]
func.func @reshape_on_the_host(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x6xf32>) outs(%acc : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r = tensor.expand_shape %mm [[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf32> into tensor<4x2x3xf32>
  return %r : tensor<4x2x3xf32>
}

// -----

// A reshape of a dynamic shape stays on the host; its reader's region captures the result.
// CHECK-LABEL: func.func @dynamic_reshape
// CHECK: %[[C:.*]] = tensor.collapse_shape %x
// CHECK: "flow.dispatch.region"
// CHECK-NOT: tensor.collapse_shape
// CHECK: math.exp
func.func @dynamic_reshape(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
  %y = math.exp %c : tensor<?xf32>
  return %y : tensor<?xf32>
}
