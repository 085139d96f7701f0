// Checks that elementwise arith/math on tensors becomes linalg.generic with identity maps, with
// one output per result of a two-result op and a scalar operand used in the body as it is.
// RUN: weir-opt --convert-elementwise-to-linalg %s | filecheck %s

// CHECK-LABEL: func.func @abs
func.func @abs(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x3xf32>
  // CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
  // CHECK-SAME: outs(%[[INIT]] : tensor<2x3xf32>)
  // CHECK: math.absf %{{.*}} : f32
  // CHECK: linalg.yield
  %0 = math.absf %a : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// An op with two results becomes one generic with an output per result.
// CHECK-LABEL: func.func @two_results
// CHECK-SAME: (%[[A:[^:]*]]: tensor<?xi32>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[N:.*]] = tensor.dim %[[A]], %[[C0]]
// CHECK: %[[LOW:.*]] = tensor.empty(%[[N]]) : tensor<?xi32>
// CHECK: %[[HIGH:.*]] = tensor.empty(%[[N]]) : tensor<?xi32>
// CHECK: %{{.*}}, %[[R:.*]] = linalg.generic
// CHECK-SAME: outs(%[[LOW]], %[[HIGH]] : tensor<?xi32>, tensor<?xi32>)
// CHECK: %[[L:.*]], %[[H:.*]] = arith.mulsi_extended %{{.*}}, %{{.*}} : i32
// CHECK: linalg.yield %[[L]], %[[H]] : i32, i32
// CHECK: return %[[R]] :
func.func @two_results(%a: tensor<?xi32>, %b: tensor<?xi32>) -> tensor<?xi32> {
  %low, %high = arith.mulsi_extended %a, %b : tensor<?xi32>
  return %high : tensor<?xi32>
}

// A select between whole tensors by a scalar condition: the condition is used in the body as
// it is, only the tensors are inputs.
// CHECK-LABEL: func.func @select_whole
// CHECK-SAME: (%[[C:[^:]*]]: i1, %[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]], %[[Y]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[XE:.*]]: f32, %[[YE:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.select %[[C]], %[[XE]], %[[YE]] : f32
func.func @select_whole(%c: i1, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.select %c, %x, %y : tensor<4xf32>
  return %0 : tensor<4xf32>
}
