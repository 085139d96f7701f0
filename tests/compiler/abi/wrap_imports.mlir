// Checks that module.function declarations become buffer-view imports and their calls are
// wrapped in tensor export/import, keeping the declaration's attributes.
// RUN: weir-opt --split-input-file --wrap-imports %s | filecheck %s

// CHECK: func.func private @module_a.abs(!hal.buffer_view) -> !hal.buffer_view
func.func private @module_a.abs(tensor<8xf32>) -> tensor<8xf32>

// CHECK-LABEL: func.func @run
func.func @run(%x: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: %[[V:.*]] = "hal.tensor.export"(%{{.*}}) <{name = "module_a.abs:arg0"
  // CHECK: %[[R:.*]] = func.call @module_a.abs(%[[V]]) : (!hal.buffer_view) -> !hal.buffer_view
  // CHECK: "hal.tensor.import"(%[[R]]) <{name = "module_a.abs:result"
  %0 = call @module_a.abs(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Checks that a coarse-fences import is called with a wait fence that a barrier signals once the
// arguments are ready and a signal fence its result is imported behind; `nosideeffects` means
// the caller does not wait for that signal.
// CHECK: func.func private @custom.call.async(!hal.buffer_view, !hal.fence, !hal.fence) -> !hal.buffer_view
func.func private @custom.call.async(tensor<?xi32>) -> tensor<?xi32> attributes {
  iree.abi.model = "coarse-fences", nosideeffects
}

// CHECK-LABEL: func.func @call_async(
func.func @call_async(%x: tensor<?xi32>) -> tensor<?xi32> {
  // CHECK: %[[WAIT:.*]] = "hal.fence.create"
  // CHECK: %[[SIGNAL:.*]] = "hal.fence.create"
  // CHECK: %[[READY:.*]] = "hal.tensor.barrier"(%{{.*}}, %[[WAIT]])
  // CHECK: %[[V:.*]] = "hal.tensor.export"(%[[READY]], %{{.*}}) <{name = "custom.call.async:arg0"
  // CHECK: %[[R:.*]] = func.call @custom.call.async(%[[V]], %[[WAIT]], %[[SIGNAL]])
  // CHECK-NOT: hal.fence.await
  // CHECK: "hal.tensor.import"(%[[R]], %{{.*}}, %[[SIGNAL]]) <{name = "custom.call.async:result"
  %0 = call @custom.call.async(%x) : (tensor<?xi32>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

// Checks that without `nosideeffects` the caller waits on the callee's signal fence right after
// the call, since the callee may touch state the compiler cannot see.
func.func private @custom.effects(tensor<4xf32>) -> tensor<4xf32> attributes {
  iree.abi.model = "coarse-fences"
}

// CHECK-LABEL: func.func @call_with_effects(
func.func @call_with_effects(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[WAIT:.*]] = "hal.fence.create"
  // CHECK: %[[SIGNAL:.*]] = "hal.fence.create"
  // CHECK: func.call @custom.effects(%{{.*}}, %[[WAIT]], %[[SIGNAL]])
  // CHECK-NEXT: "hal.fence.await"(%[[SIGNAL]])
  %0 = call @custom.effects(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that an import marked iree.abi.model = "sync" is called like an unmarked one: no fences.
// CHECK: func.func private @other.fn(!hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.model = "sync"}
func.func private @other.fn(tensor<4xf32>) -> tensor<4xf32> attributes {iree.abi.model = "sync"}

// CHECK-LABEL: func.func @call_sync(
func.func @call_sync(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: hal.fence
  // CHECK: func.call @other.fn(%{{[^,]*}}) : (!hal.buffer_view) -> !hal.buffer_view
  %0 = call @other.fn(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that a coarse-fences import with argument attributes keeps one attribute dictionary per
// argument once its fences are added.
// CHECK: func.func private @module_b.mul(!hal.buffer_view, !hal.buffer_view {iree.abi.output = 0 : index}, !hal.fence, !hal.fence) -> !hal.buffer_view
func.func private @module_b.mul(%lhs: tensor<4xf32>, %out: tensor<4xf32> {iree.abi.output = 0 : index}) -> tensor<4xf32> attributes {
  iree.abi.model = "coarse-fences"
}
