// Checks that --fold-zero-products replaces a product of a constant zero by a constant with
// finite elements with its accumulator (a recurrent net's first step from h0 = 0), on either
// side and for batch products, and keeps the product where a weight is not finite, a factor is
// not constant, or the accumulator may hold a negative zero.
// RUN: weir-opt --split-input-file --fold-zero-products %s | filecheck %s
// RUN: weir-opt --split-input-file --fold-zero-products %s | weir-opt --split-input-file - | filecheck %s

// CHECK-LABEL: func.func @first_step(
// CHECK-SAME: %[[BIAS:.*]]: tensor<2x4xf32>
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK-NOT: linalg.matmul
// CHECK: %[[SUM:.*]] = arith.addf %[[FILL]], %[[BIAS]] : tensor<2x4xf32>
// CHECK: func.return %[[SUM]]
func.func @first_step(%bias: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %h0 = arith.constant dense<0.0> : tensor<2x3xf32>
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [-1.0, -2.0, -3.0, -4.0]]> : tensor<3x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %p = linalg.matmul ins(%h0, %w : tensor<2x3xf32>, tensor<3x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = arith.addf %p, %bias : tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @zero_on_the_right_batched(
// CHECK: %[[ACC:.*]] = arith.constant dense<1.500000e+00> : tensor<2x2x2xf32>
// CHECK-NOT: linalg.batch_matmul
// CHECK: func.return %[[ACC]]
func.func @zero_on_the_right_batched() -> tensor<2x2x2xf32> {
  %a = arith.constant dense<3.0> : tensor<2x2x5xf32>
  %b = arith.constant dense<0.0> : tensor<2x5x2xf32>
  %acc = arith.constant dense<1.5> : tensor<2x2x2xf32>
  %p = linalg.batch_matmul ins(%a, %b : tensor<2x2x5xf32>, tensor<2x5x2xf32>) outs(%acc : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  return %p : tensor<2x2x2xf32>
}

// -----

// 0 * inf is NaN: the product stays.
// CHECK-LABEL: func.func @infinite_weight(
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: func.return %[[P]]
func.func @infinite_weight() -> tensor<1x2xf32> {
  %h0 = arith.constant dense<0.0> : tensor<1x2xf32>
  %w = arith.constant dense<[[1.0, 0x7F800000], [2.0, 3.0]]> : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %p = linalg.matmul ins(%h0, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %p : tensor<1x2xf32>
}

// -----

// A weight given at run time may hold anything: the product stays.
// CHECK-LABEL: func.func @weight_argument(
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: func.return %[[P]]
func.func @weight_argument(%w: tensor<2x2xf32>) -> tensor<1x2xf32> {
  %h0 = arith.constant dense<0.0> : tensor<1x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %p = linalg.matmul ins(%h0, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %p : tensor<1x2xf32>
}

// -----

// -0 + (+0) is +0: an accumulator filled with -0 is not the product's result.
// CHECK-LABEL: func.func @negative_zero_accumulator(
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: func.return %[[P]]
func.func @negative_zero_accumulator() -> tensor<1x2xf32> {
  %h0 = arith.constant dense<0.0> : tensor<1x2xf32>
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %nzero = arith.constant -0.0 : f32
  %e = tensor.empty() : tensor<1x2xf32>
  %acc = linalg.fill ins(%nzero : f32) outs(%e : tensor<1x2xf32>) -> tensor<1x2xf32>
  %p = linalg.matmul ins(%h0, %w : tensor<1x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %p : tensor<1x2xf32>
}
