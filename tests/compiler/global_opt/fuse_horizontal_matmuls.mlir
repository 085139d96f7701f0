// Checks that --fuse-horizontal-matmuls turns matmuls of one left operand by constant weights,
// each from a fill of +0, into one matmul by the weights side by side whose column slices
// replace the old results (in a loop body too); and that products from another init, of
// another left operand or by weights that are not constants are left alone.
// RUN: weir-opt --split-input-file --fuse-horizontal-matmuls %s | filecheck %s

// CHECK-LABEL: func.func @gates(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8x2xf32>
// CHECK: %[[W:.*]] = arith.constant dense_resource<[[NAME:.*_side_by_side_[0-9a-f]+]]> : tensor<2x7xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<8x7xf32>
// CHECK-NEXT: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<8x7xf32>)
// CHECK-NEXT: %[[P:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<8x2xf32>, tensor<2x7xf32>) outs(%[[Z]] : tensor<8x7xf32>)
// CHECK-NEXT: %[[A:.*]] = tensor.extract_slice %[[P]][0, 0] [8, 2] [1, 1] : tensor<8x7xf32> to tensor<8x2xf32>
// CHECK-NEXT: %[[B:.*]] = tensor.extract_slice %[[P]][0, 2] [8, 2] [1, 1] : tensor<8x7xf32> to tensor<8x2xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.extract_slice %[[P]][0, 4] [8, 3] [1, 1] : tensor<8x7xf32> to tensor<8x3xf32>
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] :
// CHECK: func.return %{{.*}}, %[[C]] : tensor<8x2xf32>, tensor<8x3xf32>
// CHECK: [[NAME]]: "0x0400000000000000000080BF0000000000004040000000000000A0400000803F0000803F0000004000000000000000000000C0C00000E04000000000"
func.func @gates(%x: tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<8x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %wa = arith.constant dense<[[0.0, -1.0], [1.0, 2.0]]> : tensor<2x2xf32>
  %wb = arith.constant dense<[[0.0, 3.0], [0.0, 0.0]]> : tensor<2x2xf32>
  %wc = arith.constant dense<[[0.0, 5.0, 1.0], [-6.0, 7.0, 0.0]]> : tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<8x2xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %a = linalg.matmul ins(%x, %wa : tensor<8x2xf32>, tensor<2x2xf32>) outs(%z2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %b = linalg.matmul ins(%x, %wb : tensor<8x2xf32>, tensor<2x2xf32>) outs(%z2 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<8x2xf32>, tensor<8x2xf32>) outs(%e2 : tensor<8x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.addf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<8x2xf32>
  %e3 = tensor.empty() : tensor<8x3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x3xf32>) -> tensor<8x3xf32>
  %c = linalg.matmul ins(%x, %wc : tensor<8x2xf32>, tensor<2x3xf32>) outs(%z3 : tensor<8x3xf32>) -> tensor<8x3xf32>
  return %s, %c : tensor<8x2xf32>, tensor<8x3xf32>
}

// -----

// CHECK-LABEL: func.func @recurrence(
// CHECK: scf.for
// CHECK: %[[W:.*]] = arith.constant dense_resource<{{.*}}_side_by_side_{{[0-9a-f]+}}> : tensor<4x8xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[H:.*]], %[[W]] : tensor<2x4xf32>, tensor<4x8xf32>)
// CHECK-NEXT: %[[I:.*]] = tensor.extract_slice %[[P]][0, 0] [2, 4] [1, 1]
// CHECK-NEXT: %[[F:.*]] = tensor.extract_slice %[[P]][0, 4] [2, 4] [1, 1]
// CHECK-NOT: linalg.matmul
// CHECK: ins(%[[I]], %[[F]] :
func.func @recurrence(%h0: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %wi = arith.constant dense<0.5> : tensor<4x4xf32>
  %wf = arith.constant dense<0.25> : tensor<4x4xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %h0) -> (tensor<2x4xf32>) {
    %e = tensor.empty() : tensor<2x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
    %gi = linalg.matmul ins(%h, %wi : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
    %gf = linalg.matmul ins(%h, %wf : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
    %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%gi, %gf : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %m = arith.mulf %in, %in_1 : f32
      linalg.yield %m : f32
    } -> tensor<2x4xf32>
    scf.yield %n : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-4: linalg.matmul
// CHECK-NOT: extract_slice
func.func @left_alone(%x: tensor<8x2xf32>, %y: tensor<8x2xf32>, %wv: tensor<2x2xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %w = arith.constant dense<2.0> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<8x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %o = linalg.fill ins(%one : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  // From a fill of 1: not a product alone.
  %a = linalg.matmul ins(%x, %w : tensor<8x2xf32>, tensor<2x2xf32>) outs(%o : tensor<8x2xf32>) -> tensor<8x2xf32>
  // Weights that are an argument.
  %b = linalg.matmul ins(%x, %wv : tensor<8x2xf32>, tensor<2x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  // One product of each left operand.
  %c = linalg.matmul ins(%x, %w : tensor<8x2xf32>, tensor<2x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %d = linalg.matmul ins(%y, %w : tensor<8x2xf32>, tensor<2x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  return %a, %b, %c, %d : tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>
}
