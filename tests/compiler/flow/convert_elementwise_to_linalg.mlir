// Checks that elementwise arith/math on tensors becomes linalg.generic with identity maps.
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
