// Checks that --scalar-operands-as-tensors gives each scalar input of a linalg.generic as a 0-d
// tensor built by tensor.from_elements, keeping its map and body, and leaves tensor inputs and
// generics without scalars alone.
// RUN: weir-opt --split-input-file --scalar-operands-as-tensors %s | filecheck %s

// CHECK-LABEL: func.func @scalars(
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<3x5xi32>
// CHECK-NEXT: %[[Z:.*]] = tensor.from_elements %z : tensor<i32>
// CHECK-NEXT: %[[Y:.*]] = tensor.from_elements %y : tensor<i32>
// CHECK-NEXT: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m, %[[Z]], %[[Y]] : tensor<3x5xi32>, tensor<i32>, tensor<i32>) outs(%[[E]] : tensor<3x5xi32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32):
func.func @scalars(%m: tensor<3x5xi32>, %z: i32, %y: i32) -> tensor<3x5xi32> {
  %e = tensor.empty() : tensor<3x5xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%m, %z, %y : tensor<3x5xi32>, i32, i32) outs(%e : tensor<3x5xi32>) {
  ^bb0(%a: i32, %c: i32, %d: i32, %o: i32):
    %1 = arith.muli %a, %c : i32
    %2 = arith.addi %1, %d : i32
    linalg.yield %2 : i32
  } -> tensor<3x5xi32>
  return %r : tensor<3x5xi32>
}

// -----

// CHECK-LABEL: func.func @tensors_only(
// CHECK-NOT: tensor.from_elements
// CHECK: linalg.generic
func.func @tensors_only(%m: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%m : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
