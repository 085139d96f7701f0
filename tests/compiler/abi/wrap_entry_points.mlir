// Checks that a public function becomes a buffer-view stub with reflection around a private body.
// RUN: weir-opt --split-input-file --wrap-entry-points %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-execution-model=async-external --wrap-entry-points %s | filecheck %s --check-prefix=ASYNC

// CHECK-LABEL: func.func @simple_mul
// CHECK-SAME: (%[[A:.*]]: !hal.buffer_view, %[[B:.*]]: !hal.buffer_view) -> !hal.buffer_view
// CHECK-SAME: iree.abi.declaration = "sync func @simple_mul(%input0: tensor<4xf32>, %input1: tensor<4xf32>) -> (%output0: tensor<4xf32>)"
// CHECK: %[[TA:.*]] = "hal.tensor.import"(%[[A]]) <{name = "input0"
// CHECK: %[[TB:.*]] = "hal.tensor.import"(%[[B]]) <{name = "input1"
// CHECK: %[[R:.*]] = func.call @_simple_mul(%[[TA]], %[[TB]])
// CHECK: %[[V:.*]] = "hal.tensor.export"(%[[R]]) <{name = "output0"
// CHECK: func.return %[[V]] : !hal.buffer_view
// CHECK: func.func private @_simple_mul
func.func @simple_mul(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that an argument marked iree.abi.output becomes the storage the result is placed in
// (hal.tensor.alias) before it is exported.
// CHECK-LABEL: func.func @mul
// CHECK-SAME: (%{{.*}}: !hal.buffer_view, %{{.*}}: !hal.buffer_view, %[[OUT:.*]]: !hal.buffer_view)
// CHECK: %[[R:.*]] = func.call @_mul(
// CHECK: %[[PLACED:.*]] = "hal.tensor.alias"(%[[R]], %[[OUT]])
// CHECK: "hal.tensor.export"(%[[PLACED]]) <{name = "output0"

// With async-external the placed result is what the barrier reports ready.
// ASYNC-LABEL: func.func @mul
// ASYNC: %[[PLACED:.*]] = "hal.tensor.alias"
// ASYNC: %[[READY:.*]] = "hal.tensor.barrier"(%[[PLACED]], %{{.*}})
// ASYNC: "hal.tensor.export"(%[[READY]]) <{name = "output0"
func.func @mul(%lhs: tensor<4xf32>, %rhs: tensor<4xf32>, %out: tensor<4xf32> {iree.abi.output = 0 : index}) -> tensor<4xf32> {
  %0 = arith.mulf %lhs, %rhs : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that with async-external an export takes a wait and a signal fence: inputs are imported
// as valid once the wait fence is reached, and a barrier signals the signal fence when the results
// are ready, so nothing on the host waits.
// ASYNC-LABEL: func.func @square(
// ASYNC-SAME: %[[A:[^:]*]]: !hal.buffer_view, %[[WAIT:[^:]*]]: !hal.fence, %[[SIGNAL:[^:]*]]: !hal.fence) -> !hal.buffer_view
// ASYNC-SAME: iree.abi.declaration = "async func @square(%input0: tensor<?xi32>) -> (%output0: tensor<?xi32>)"
// ASYNC-SAME: iree.abi.model = "coarse-fences"
// ASYNC: %[[DIM:.*]] = "hal.buffer_view.dim"(%[[A]]) <{index = 0 : index}>
// ASYNC: %[[T:.*]] = "hal.tensor.import"(%[[A]], %[[DIM]], %[[WAIT]]) <{name = "input0"
// ASYNC: %[[R:.*]] = func.call @_square(%[[T]])
// ASYNC: %[[READY:.*]] = "hal.tensor.barrier"(%[[R]], %[[SIGNAL]])
// ASYNC: %[[V:.*]] = "hal.tensor.export"(%[[READY]], %{{.*}}) <{name = "output0"}>
// ASYNC: func.return %[[V]]
// The synchronous ABI has no fences at all.
// CHECK-LABEL: func.func @square(
// CHECK-SAME: %{{[^:]*}}: !hal.buffer_view) -> !hal.buffer_view
// CHECK-NOT: hal.fence
// CHECK: func.func private @_square
func.func @square(%x: tensor<?xi32>) -> tensor<?xi32> {
  %0 = arith.muli %x, %x : tensor<?xi32>
  return %0 : tensor<?xi32>
}
