// Checks that --insert-dynamic-size-checks asserts, before each linalg extension op, the sizes it
// needs equal that dynamic types leave open: sort's operands, scan's input against its outputs,
// scatter's indices against its updates (batch dimensions), attention's operands by their maps.
// RUN: weir-opt --split-input-file --insert-dynamic-size-checks %s | filecheck %s

// CHECK-LABEL: func.func @sort(
// CHECK: "util.assert_eq"(%{{.*}}, %{{.*}}) <{message = "{{.*}}linalg_ext_size_checks.mlir:[[# @LINE + 2]]:3: 'iree_linalg_ext.sort' in @sort: dimension 0 of operand 0 (%v) differs from dimension 0 of operand 1 (%i)"}>
func.func @sort(%v: tensor<?xf32>, %i: tensor<?xi32>) -> tensor<?xi32> {
  %0:2 = iree_linalg_ext.sort dimension(0) outs(%v, %i : tensor<?xf32>, tensor<?xi32>) {
  ^bb0(%a: f32, %b: f32, %c: i32, %d: i32):
    %lt = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %lt : i1
  } -> tensor<?xf32>, tensor<?xi32>
  return %0#1 : tensor<?xi32>
}

// -----

// CHECK-LABEL: func.func @scan(
// CHECK: "util.assert_eq"{{.*}}dimension 0 of operand 0 (%x) differs from dimension 0 of operand 1 (%o)
// CHECK: "util.assert_eq"{{.*}}dimension 1 of operand 0 (%x) differs from dimension 0 of operand 2 (%acc)
// CHECK: tm_tensor.scan
func.func @scan(%x: tensor<?x?xi32>, %o: tensor<?x4xi32>, %acc: tensor<?xi32>) -> tensor<?x4xi32> {
  %0:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%x : tensor<?x?xi32>) outs(%o, %acc : tensor<?x4xi32>, tensor<?xi32>) {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    tm_tensor.yield %s : i32
  } -> tensor<?x4xi32>, tensor<?xi32>
  return %0#0 : tensor<?x4xi32>
}

// -----

// CHECK-LABEL: func.func @scatter(
// CHECK: "util.assert_eq"{{.*}}dimension 0 of operand 1 (%idx) differs from dimension 0 of operand 0 (%u)
func.func @scatter(%u: tensor<?x4xf32>, %idx: tensor<?x1xi64>, %kv: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true) ins(%u, %idx : tensor<?x4xf32>, tensor<?x1xi64>) outs(%kv : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    iree_linalg_ext.yield %a : f32
  } -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// CHECK-LABEL: func.func @attention(
// CHECK: "util.assert_eq"{{.*}}dimension 2 of operand 0 (%q) differs from dimension 2 of operand 1 (%k)
// CHECK: iree_linalg_ext.attention
func.func @attention(%q: tensor<1x3x?xf32>, %k: tensor<1x5x?xf32>, %v: tensor<1x5x2xf32>, %scale: f32, %o: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  %0 = iree_linalg_ext.attention {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>,
                     affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2)>,
                     affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>,
                     affine_map<(d0, d1, d2, d3, d4) -> ()>,
                     affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>]}
      ins(%q, %k, %v, %scale : tensor<1x3x?xf32>, tensor<1x5x?xf32>, tensor<1x5x2xf32>, f32) outs(%o : tensor<1x3x2xf32>) {
  ^bb0(%s: f32):
    iree_linalg_ext.yield %s : f32
  } -> tensor<1x3x2xf32>
  return %0 : tensor<1x3x2xf32>
}
