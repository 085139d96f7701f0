// Checks that --propagate-transposes carries an NHWC value's transpose to NCHW past the ops that
// read it: an elementwise generic (its maps permuted, a per-channel constant's map following the
// channel), a pad with static sizes, a concat of such transposes; that a transpose of a transpose
// composes, to nothing when they undo each other; and that other transposes, generics that
// reduce or read their indices, and programs without the llvm-cpu target are left alone.
// RUN: weir-opt --split-input-file --iree-hal-target-backends=llvm-cpu --propagate-transposes %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-hal-target-backends=reference --propagate-transposes %s | filecheck %s --check-prefix=REF

// A ReLU and a per-channel scale after a channels-last convolution, then the next convolution's
// transpose back to NHWC: everything stays NHWC and no transpose is left.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[V:.*]]: tensor<1x6x6x8xf32>, %[[S:.*]]: tensor<8x1x1xf32>
// CHECK-NOT: linalg.transpose
// CHECK: %[[RELU:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}}} ins(%[[V]] : tensor<1x6x6x8xf32>) outs(%{{.*}} : tensor<1x6x6x8xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SCALED:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}}} ins(%[[RELU]], %[[S]] : tensor<1x6x6x8xf32>, tensor<8x1x1xf32>) outs(%{{.*}} : tensor<1x6x6x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: func.return %[[SCALED]] : tensor<1x6x6x8xf32>
// REF-LABEL: func.func @chain(
// REF-COUNT-2: linalg.transpose
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @chain(%v: tensor<1x6x6x8xf32>, %s: tensor<8x1x1xf32>) -> tensor<1x6x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %t = linalg.transpose ins(%v : tensor<1x6x6x8xf32>) outs(%e : tensor<1x8x6x6xf32>) permutation = [0, 3, 1, 2]
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<1x8x6x6xf32>) outs(%e : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x6x6xf32>
  %sc = linalg.generic {indexing_maps = [#id, #chan, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %s : tensor<1x8x6x6xf32>, tensor<8x1x1xf32>) outs(%e : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<1x8x6x6xf32>
  %e2 = tensor.empty() : tensor<1x6x6x8xf32>
  %back = linalg.transpose ins(%sc : tensor<1x8x6x6xf32>) outs(%e2 : tensor<1x6x6x8xf32>) permutation = [0, 2, 3, 1]
  return %back : tensor<1x6x6x8xf32>
}

// -----

// A pad of H and W becomes a pad of dimensions 1 and 2, then transposed for its NCHW reader.
// CHECK-LABEL: func.func @pad(
// CHECK-SAME: %[[V:.*]]: tensor<1x6x6x8xf32>
// CHECK: %[[P:.*]] = tensor.pad %[[V]] low[0, 1, 2, 0] high[0, 3, 4, 0]
// CHECK: } : tensor<1x6x6x8xf32> to tensor<1x10x12x8xf32>
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[P]]:tensor<1x10x12x8xf32>) outs(%{{.*}}:tensor<1x8x10x12xf32>) permutation = [0, 3, 1, 2]
// CHECK: func.return %[[R]]
func.func @pad(%v: tensor<1x6x6x8xf32>) -> tensor<1x8x10x12xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %t = linalg.transpose ins(%v : tensor<1x6x6x8xf32>) outs(%e : tensor<1x8x6x6xf32>) permutation = [0, 3, 1, 2]
  %p = tensor.pad %t low[0, 0, 1, 2] high[0, 0, 3, 4] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x8x6x6xf32> to tensor<1x8x10x12xf32>
  return %p : tensor<1x8x10x12xf32>
}

// -----

// CHECK-LABEL: func.func @concat(
// CHECK-SAME: %[[A:.*]]: tensor<1x4x4x8xf32>, %[[B:.*]]: tensor<1x4x4x2xf32>
// CHECK: %[[C:.*]] = tensor.concat dim(3) %[[A]], %[[B]] : (tensor<1x4x4x8xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x10xf32>
// CHECK: linalg.transpose ins(%[[C]]:tensor<1x4x4x10xf32>) {{.*}} permutation = [0, 3, 1, 2]
func.func @concat(%a: tensor<1x4x4x8xf32>, %b: tensor<1x4x4x2xf32>) -> tensor<1x10x4x4xf32> {
  %ea = tensor.empty() : tensor<1x8x4x4xf32>
  %ta = linalg.transpose ins(%a : tensor<1x4x4x8xf32>) outs(%ea : tensor<1x8x4x4xf32>) permutation = [0, 3, 1, 2]
  %eb = tensor.empty() : tensor<1x2x4x4xf32>
  %tb = linalg.transpose ins(%b : tensor<1x4x4x2xf32>) outs(%eb : tensor<1x2x4x4xf32>) permutation = [0, 3, 1, 2]
  %c = tensor.concat dim(1) %ta, %tb : (tensor<1x8x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x10x4x4xf32>
  return %c : tensor<1x10x4x4xf32>
}

// -----

// Left alone: a transpose of another permutation, a reduction (a global average pool reads the
// NHWC value through the transpose), a generic reading its indices.
// CHECK-LABEL: func.func @left_alone(
// CHECK: %[[T:.*]] = linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<1x8x6x6xf32>) outs(%{{.*}} : tensor<1x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<1x8x6x6xf32>) outs(%{{.*}} : tensor<1x8x6x6xf32>)
// CHECK: linalg.index 1
// CHECK: %[[O:.*]] = linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
// CHECK: linalg.generic {{.*}} ins(%[[O]] : tensor<1x6x6x8xf32>)
func.func @left_alone(%v: tensor<1x6x6x8xf32>) -> (tensor<1x8xf32>, tensor<1x8x6x6xf32>, tensor<1x6x6x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %t = linalg.transpose ins(%v : tensor<1x6x6x8xf32>) outs(%e : tensor<1x8x6x6xf32>) permutation = [0, 3, 1, 2]
  %e1 = tensor.empty() : tensor<1x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%t : tensor<1x8x6x6xf32>) outs(%f : tensor<1x8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<1x8xf32>
  %ix = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<1x8x6x6xf32>) outs(%e : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i64
    %cf = arith.sitofp %c : i64 to f32
    %m = arith.mulf %in, %cf : f32
    linalg.yield %m : f32
  } -> tensor<1x8x6x6xf32>
  %e2 = tensor.empty() : tensor<1x6x6x8xf32>
  %o = linalg.transpose ins(%v : tensor<1x6x6x8xf32>) outs(%e2 : tensor<1x6x6x8xf32>) permutation = [0, 2, 1, 3]
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : tensor<1x6x6x8xf32>) outs(%e2 : tensor<1x6x6x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x6x6x8xf32>
  return %sum, %ix, %n : tensor<1x8xf32>, tensor<1x8x6x6xf32>, tensor<1x6x6x8xf32>
}
