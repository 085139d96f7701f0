// Checks that a public function becomes a buffer-view stub with reflection around a private body.
// RUN: weir-opt --split-input-file --wrap-entry-points %s | filecheck %s

// CHECK-LABEL: func.func @simple_mul
// CHECK-SAME: (%[[A:.*]]: !hal.buffer_view, %[[B:.*]]: !hal.buffer_view) -> !hal.buffer_view
// CHECK-SAME: iree.abi.declaration = "sync func @simple_mul(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (%output0: tensor<4xf32>)"
// CHECK: %[[TA:.*]] = "hal.tensor.import"(%[[A]]) <{name = "input0"}>
// CHECK: %[[TB:.*]] = "hal.tensor.import"(%[[B]]) <{name = "input1"}>
// CHECK: %[[R:.*]] = func.call @_simple_mul(%[[TA]], %[[TB]])
// CHECK: %[[V:.*]] = "hal.tensor.export"(%[[R]]) <{name = "output0"
// CHECK: func.return %[[V]] : !hal.buffer_view
// CHECK: func.func private @_simple_mul
func.func @simple_mul(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that an argument marked iree.abi.output becomes the storage of the result's export.
// CHECK-LABEL: func.func @mul
// CHECK-SAME: (%{{.*}}: !hal.buffer_view, %{{.*}}: !hal.buffer_view, %[[OUT:.*]]: !hal.buffer_view)
// CHECK: "hal.tensor.export"(%{{.*}}, %[[OUT]]) <{name = "output0"
func.func @mul(%lhs: tensor<4xf32>, %rhs: tensor<4xf32>, %out: tensor<4xf32> {iree.abi.output = 0 : index}) -> tensor<4xf32> {
  %0 = arith.mulf %lhs, %rhs : tensor<4xf32>
  return %0 : tensor<4xf32>
}
