// Checks that --hoist-sliced-matmuls turns a loop's product of each step's slice of a tensor
// from outside the loop by constant weights into one product of all the steps' rows before
// the loop, each step reading its rows; and that a slice of the loop's own state, weights that
// are not a constant and a product accumulated onto something else are left in the loop.
// RUN: weir-opt --split-input-file --hoist-sliced-matmuls %s | filecheck %s

// CHECK-LABEL: func.func @input_projection(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x2x3xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0 : i64, 1 : i64], [2 : i64]] : tensor<4x2x3xf32> into tensor<8x3xf32>
// CHECK-NEXT: %[[W:.*]] = arith.constant dense_resource<weights> : tensor<3x5xf32>
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<8x5xf32>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<8x5xf32>)
// CHECK-NEXT: %[[P:.*]] = linalg.matmul ins(%[[ROWS]], %[[W]] : tensor<8x3xf32>, tensor<3x5xf32>) outs(%[[F]] : tensor<8x5xf32>)
// CHECK-NEXT: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NOT: linalg.matmul
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[AT:.*]] = arith.muli %[[I]], %[[TWO]] : index
// CHECK-NEXT: %[[MINE:.*]] = tensor.extract_slice %[[P]][%[[AT]], 0] [2, 5] [1, 1] : tensor<8x5xf32> to tensor<2x5xf32>
// CHECK: tensor.insert_slice %[[MINE]]
func.func @input_projection(%x: tensor<4x2x3xf32>) -> tensor<4x2x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x2x5xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (tensor<4x2x5xf32>) {
    %s = tensor.extract_slice %x[%i, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<4x2x3xf32> to tensor<1x2x3xf32>
    %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<1x2x3xf32> into tensor<2x3xf32>
    %w = arith.constant dense_resource<weights> : tensor<3x5xf32>
    %e = tensor.empty() : tensor<2x5xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
    %p = linalg.matmul ins(%c, %w : tensor<2x3xf32>, tensor<3x5xf32>) outs(%z : tensor<2x5xf32>) -> tensor<2x5xf32>
    %pe = tensor.expand_shape %p [[0, 1], [2]] output_shape [1, 2, 5] : tensor<2x5xf32> into tensor<1x2x5xf32>
    %n = tensor.insert_slice %pe into %acc[%i, 0, 0] [1, 2, 5] [1, 1, 1] : tensor<1x2x5xf32> into tensor<4x2x5xf32>
    scf.yield %n : tensor<4x2x5xf32>
  }
  return %r : tensor<4x2x5xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @left_in_the_loop(
// CHECK: scf.for
// CHECK-COUNT-3: linalg.matmul
func.func @left_in_the_loop(%x: tensor<4x2x3xf32>, %h0: tensor<4x2x3xf32>, %wv: tensor<3x3xf32>) -> tensor<4x2x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %w = arith.constant dense<0.5> : tensor<3x3xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0) -> (tensor<4x2x3xf32>) {
    %e = tensor.empty() : tensor<2x3xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    %o = linalg.fill ins(%one : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    // A slice of the loop's own state.
    %s = tensor.extract_slice %h[%i, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<4x2x3xf32> to tensor<1x2x3xf32>
    %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<1x2x3xf32> into tensor<2x3xf32>
    %a = linalg.matmul ins(%c, %w : tensor<2x3xf32>, tensor<3x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>
    // Weights that are an argument.
    %sx = tensor.extract_slice %x[%i, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<4x2x3xf32> to tensor<1x2x3xf32>
    %cx = tensor.collapse_shape %sx [[0, 1], [2]] : tensor<1x2x3xf32> into tensor<2x3xf32>
    %b = linalg.matmul ins(%cx, %wv : tensor<2x3xf32>, tensor<3x3xf32>) outs(%a : tensor<2x3xf32>) -> tensor<2x3xf32>
    // Accumulated onto a fill of 1.
    %d = linalg.matmul ins(%cx, %w : tensor<2x3xf32>, tensor<3x3xf32>) outs(%o : tensor<2x3xf32>) -> tensor<2x3xf32>
    %sum = arith.addf %b, %d : tensor<2x3xf32>
    %se = tensor.expand_shape %sum [[0, 1], [2]] output_shape [1, 2, 3] : tensor<2x3xf32> into tensor<1x2x3xf32>
    %n = tensor.insert_slice %se into %h[%i, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<1x2x3xf32> into tensor<4x2x3xf32>
    scf.yield %n : tensor<4x2x3xf32>
  }
  return %r : tensor<4x2x3xf32>
}
