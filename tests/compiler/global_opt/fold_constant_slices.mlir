// Checks that --fold-constant-slices stores a static slice of a constant (inline dense or
// dense_resource, strided, rank-reducing) as a new resource, drops the source once nothing
// reads it, keeps it when something does, and leaves dynamic slices and splats alone.
// RUN: weir-opt --split-input-file --fold-constant-slices %s | filecheck %s

// CHECK-LABEL: func.func @rows_of_a_resource(
// CHECK-NOT: tensor.extract_slice
// CHECK-DAG: %[[A:.*]] = arith.constant dense_resource<[[NA:weight_slice[_0-9]*]]> : tensor<1x2xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense_resource<[[NB:weight_slice[_0-9]*]]> : tensor<1x2xf32>
// CHECK-NOT: dense_resource<weight>
// CHECK: func.return %[[A]], %[[B]]
// The source's rows [1, 2] and [3, 4], one each:
// CHECK-DAG: [[NA]]: "0x040000000000803F00000040"
// CHECK-DAG: [[NB]]: "0x040000000000404000008040"
func.func @rows_of_a_resource() -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %w = arith.constant dense_resource<weight> : tensor<2x2xf32>
  %a = tensor.extract_slice %w[0, 0] [1, 2] [1, 1] : tensor<2x2xf32> to tensor<1x2xf32>
  %b = tensor.extract_slice %w[1, 0] [1, 2] [1, 1] : tensor<2x2xf32> to tensor<1x2xf32>
  return %a, %b : tensor<1x2xf32>, tensor<1x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      weight: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// CHECK-LABEL: func.func @strided_rank_reducing(
// CHECK: %[[S:.*]] = arith.constant dense_resource<[[NAME:constant_slice[_0-9]*]]> : tensor<2xi32>
// CHECK-NEXT: func.return %[[S]]
// Column 1 of rows 0 and 2 of [[1, 2], [3, 4], [5, 6]]: 2 and 6.
// CHECK: [[NAME]]: "0x040000000200000006000000"
func.func @strided_rank_reducing() -> tensor<2xi32> {
  %c = arith.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>
  %s = tensor.extract_slice %c[0, 1] [2, 1] [2, 1] : tensor<3x2xi32> to tensor<2xi32>
  return %s : tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @source_kept_for_another_reader(
// CHECK: %[[C:.*]] = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
// CHECK: %[[S:.*]] = arith.constant dense_resource<{{.*}}> : tensor<2xi32>
// CHECK: func.return %[[S]], %[[C]]
func.func @source_kept_for_another_reader() -> (tensor<2xi32>, tensor<4xi32>) {
  %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %s = tensor.extract_slice %c[2] [2] [1] : tensor<4xi32> to tensor<2xi32>
  return %s, %c : tensor<2xi32>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @dynamic_and_splat_kept(
// CHECK: tensor.extract_slice %{{.*}}[%i] [2] [1]
// CHECK: tensor.extract_slice %{{.*}}[1] [2] [1]
func.func @dynamic_and_splat_kept(%i: index) -> (tensor<2xi32>, tensor<2xf32>) {
  %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %d = tensor.extract_slice %c[%i] [2] [1] : tensor<4xi32> to tensor<2xi32>
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %s = tensor.extract_slice %z[1] [2] [1] : tensor<4xf32> to tensor<2xf32>
  return %d, %s : tensor<2xi32>, tensor<2xf32>
}
