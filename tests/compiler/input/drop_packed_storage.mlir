// Checks that --drop-packed-storage removes #iree_encoding.packed_storage from every tensor type
// (results, block arguments, function signatures, constants) and leaves other types alone.
// RUN: weir-opt --split-input-file --drop-packed-storage %s | filecheck %s

// CHECK-LABEL: func.func @everywhere(%x: tensor<8xi1>) -> tensor<8xi1> {
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<true> : tensor<8xi1>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<8xi1>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {{.*}} ins(%x, %[[C]] : tensor<8xi1>, tensor<8xi1>) outs(%[[E]] : tensor<8xi1>) {
// CHECK-NEXT: ^bb0(%{{.*}}: i1, %{{.*}}: i1, %{{.*}}: i1):
// CHECK: } -> tensor<8xi1>
// CHECK-NEXT: func.return %[[R]] : tensor<8xi1>
func.func @everywhere(%x: tensor<8xi1, #iree_encoding.packed_storage>) -> tensor<8xi1, #iree_encoding.packed_storage> {
  %c = arith.constant dense<true> : tensor<8xi1, #iree_encoding.packed_storage>
  %e = tensor.empty() : tensor<8xi1, #iree_encoding.packed_storage>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x, %c : tensor<8xi1, #iree_encoding.packed_storage>, tensor<8xi1, #iree_encoding.packed_storage>) outs(%e : tensor<8xi1, #iree_encoding.packed_storage>) {
  ^bb0(%a: i1, %b: i1, %o: i1):
    %s = arith.xori %a, %b : i1
    linalg.yield %s : i1
  } -> tensor<8xi1, #iree_encoding.packed_storage>
  return %r : tensor<8xi1, #iree_encoding.packed_storage>
}

// -----

// CHECK-LABEL: func.func @untouched(%x: tensor<4xi4>) -> tensor<4xi4> {
// CHECK-NEXT: func.return %x : tensor<4xi4>
func.func @untouched(%x: tensor<4xi4>) -> tensor<4xi4> {
  return %x : tensor<4xi4>
}
