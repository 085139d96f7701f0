// Checks that --fold-constant-transposes stores a transposed constant (inline dense or
// dense_resource, 2-D and 3-D) as a new resource in the permuted order, keeps the source when
// something else reads it, and leaves transposes of non-constants (a barrier's result) alone.
// RUN: weir-opt --split-input-file --fold-constant-transposes %s | filecheck %s

// CHECK-LABEL: func.func @inline_dense(
// CHECK-NOT: linalg.transpose
// CHECK-NOT: dense<
// CHECK: %[[T:.*]] = arith.constant dense_resource<[[NAME:transposed[_0-9]*]]> : tensor<3x2xi32>
// CHECK-NEXT: func.return %[[T]]
// [[1, 4], [2, 5], [3, 6]] after the 4-byte alignment header:
// CHECK: [[NAME]]: "0x04000000010000000400000002000000050000000300000006000000"
func.func @inline_dense() -> tensor<3x2xi32> {
  %c = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %e = tensor.empty() : tensor<3x2xi32>
  %t = linalg.transpose ins(%c : tensor<2x3xi32>) outs(%e : tensor<3x2xi32>) permutation = [1, 0]
  return %t : tensor<3x2xi32>
}

// -----

// CHECK-LABEL: func.func @resource_kept(
// CHECK: %[[W:.*]] = arith.constant dense_resource<weight> : tensor<2x2xf32>
// CHECK: %[[T:.*]] = arith.constant dense_resource<weight_transposed> : tensor<2x2xf32>
// CHECK: arith.addf %x, %[[W]]
// CHECK: func.return %[[T]]
// [[1, 2], [3, 4]] read back as [[1, 3], [2, 4]]:
// CHECK: weight: "0x040000000000803F000000400000404000008040"
// CHECK-NEXT: weight_transposed: "0x040000000000803F000040400000004000008040"
func.func @resource_kept(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = arith.constant dense_resource<weight> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %t = linalg.transpose ins(%w : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) permutation = [1, 0]
  %s = arith.addf %x, %w : tensor<2x2xf32>
  return %t, %s : tensor<2x2xf32>, tensor<2x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      weight: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @three_dims(
// CHECK: %[[T:.*]] = arith.constant dense_resource<{{.*}}> : tensor<2x2x1xi8>
// CHECK-NEXT: func.return %[[T]]
// [[[1, 2]], [[3, 4]]] permuted by [2, 0, 1] is [[[1], [3]], [[2], [4]]]: bytes 1 3 2 4.
// CHECK: "0x0400000001030204"
func.func @three_dims() -> tensor<2x2x1xi8> {
  %c = arith.constant dense<[[[1, 2]], [[3, 4]]]> : tensor<2x1x2xi8>
  %e = tensor.empty() : tensor<2x2x1xi8>
  %t = linalg.transpose ins(%c : tensor<2x1x2xi8>) outs(%e : tensor<2x2x1xi8>) permutation = [2, 0, 1]
  return %t : tensor<2x2x1xi8>
}

// -----

// CHECK-LABEL: func.func @barrier_kept(
// CHECK: util.optimization_barrier
// CHECK: linalg.transpose

func.func @barrier_kept() -> tensor<2x1xf32> {
  %c = arith.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %b = util.optimization_barrier %c : tensor<1x2xf32>
  %e = tensor.empty() : tensor<2x1xf32>
  %t = linalg.transpose ins(%b : tensor<1x2xf32>) outs(%e : tensor<2x1xf32>) permutation = [1, 0]
  return %t : tensor<2x1xf32>
}
