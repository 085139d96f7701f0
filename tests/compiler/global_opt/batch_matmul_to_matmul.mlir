// Checks that --batch-matmul-to-matmul turns a batch_matmul of one matrix broadcast over the
// batch (as a linalg.generic or a linalg.broadcast) into one matmul of the stacked rows,
// reshaped back, dropping the broadcast and the old init; that an init other than a fill is
// collapsed and accumulated into; and that other broadcasts and dynamic shapes are left alone.
// RUN: weir-opt --split-input-file --batch-matmul-to-matmul %s | filecheck %s

// CHECK-LABEL: func.func @broadcast_generic(
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.batch_matmul
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %x {{\[}}[0 : i64, 1 : i64], [2 : i64]] : tensor<4x8x16xf32> into tensor<32x16xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<32x32xf32>
// CHECK-NEXT: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<32x32xf32>)
// CHECK-NEXT: %[[P:.*]] = linalg.matmul ins(%[[ROWS]], %w : tensor<32x16xf32>, tensor<16x32xf32>) outs(%[[Z]] : tensor<32x32xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.expand_shape %[[P]] {{\[}}[0 : i64, 1 : i64], [2 : i64]] output_shape [4, 8, 32] : tensor<32x32xf32> into tensor<4x8x32xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @broadcast_generic(%x: tensor<4x8x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x8x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x32xf32>
  %bw = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<16x32xf32>) outs(%e : tensor<4x16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x16x32xf32>
  %o = tensor.empty() : tensor<4x8x32xf32>
  %z = linalg.fill ins(%cst : f32) outs(%o : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %r = linalg.batch_matmul ins(%x, %bw : tensor<4x8x16xf32>, tensor<4x16x32xf32>) outs(%z : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  return %r : tensor<4x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_op_into_init(
// CHECK-NOT: linalg.broadcast
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %x {{.*}} into tensor<6x5xf32>
// CHECK-NEXT: %[[ACC:.*]] = tensor.collapse_shape %c {{.*}} into tensor<6x7xf32>
// CHECK-NEXT: %[[P:.*]] = linalg.matmul ins(%[[ROWS]], %w : tensor<6x5xf32>, tensor<5x7xf32>) outs(%[[ACC]] : tensor<6x7xf32>)
// CHECK-NEXT: tensor.expand_shape %[[P]] {{.*}} output_shape [2, 3, 7]
func.func @broadcast_op_into_init(%x: tensor<2x3x5xf32>, %w: tensor<5x7xf32>, %c: tensor<2x3x7xf32>) -> tensor<2x3x7xf32> {
  %e = tensor.empty() : tensor<2x5x7xf32>
  %bw = linalg.broadcast ins(%w : tensor<5x7xf32>) outs(%e : tensor<2x5x7xf32>) dimensions = [0]
  %r = linalg.batch_matmul ins(%x, %bw : tensor<2x3x5xf32>, tensor<2x5x7xf32>) outs(%c : tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  return %r : tensor<2x3x7xf32>
}

// -----

// A broadcast along another dimension is not one matrix per batch: unchanged.
// CHECK-LABEL: func.func @broadcast_other_dim(
// CHECK: linalg.broadcast
// CHECK: linalg.batch_matmul
func.func @broadcast_other_dim(%x: tensor<2x3x5xf32>, %v: tensor<2x7xf32>, %c: tensor<2x3x7xf32>) -> tensor<2x3x7xf32> {
  %e = tensor.empty() : tensor<2x5x7xf32>
  %bv = linalg.broadcast ins(%v : tensor<2x7xf32>) outs(%e : tensor<2x5x7xf32>) dimensions = [1]
  %r = linalg.batch_matmul ins(%x, %bv : tensor<2x3x5xf32>, tensor<2x5x7xf32>) outs(%c : tensor<2x3x7xf32>) -> tensor<2x3x7xf32>
  return %r : tensor<2x3x7xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_batch(
// CHECK: linalg.batch_matmul
func.func @dynamic_batch(%x: tensor<?x3x5xf32>, %w: tensor<5x7xf32>, %c: tensor<?x3x7xf32>) -> tensor<?x3x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x5xf32>
  %e = tensor.empty(%n) : tensor<?x5x7xf32>
  %bw = linalg.broadcast ins(%w : tensor<5x7xf32>) outs(%e : tensor<?x5x7xf32>) dimensions = [0]
  %r = linalg.batch_matmul ins(%x, %bw : tensor<?x3x5xf32>, tensor<?x5x7xf32>) outs(%c : tensor<?x3x7xf32>) -> tensor<?x3x7xf32>
  return %r : tensor<?x3x7xf32>
}
