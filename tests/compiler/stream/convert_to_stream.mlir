// Checks that host tensors become resources with explicit, sized allocations, that the dispatch
// runs in a stream.cmd.execute ordered by timepoints, and that the result is awaited before export.
// RUN: weir-opt --split-input-file --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-execution-model=async-external --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s --check-prefix=ASYNC

// CHECK-LABEL: func.func @simple_mul(
// CHECK: %[[A:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input0", affinity = #hal.device.affinity<@__device_0>}> : (!hal.buffer_view) -> !stream.resource<external>
// CHECK: %[[B:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input1", affinity = #hal.device.affinity<@__device_0>}>
// CHECK: %[[SIZE:.*]] = "stream.tensor.sizeof"() <{encoding = tensor<4xf32>}> : () -> index
// CHECK: %[[OUT:.*]], %[[ALLOCATED:.*]] = "stream.resource.alloca"(%[[SIZE]]) <{affinity = #hal.device.affinity<@__device_0>}> : (index) -> (!stream.resource<external>, !stream.timepoint)
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"(%[[ALLOCATED]]) <{affinity = #hal.device.affinity<@__device_0>}> ({
// CHECK-NEXT: "stream.cmd.dispatch"(%[[A]], %[[B]], %[[OUT]]) <{entry_point = @simple_mul_dispatch_0::@simple_mul_dispatch_0, access = ["ro", "ro", "wo"]
// CHECK: "stream.timepoint.await"(%[[DONE]])
// CHECK: %[[VIEW:.*]] = "stream.tensor.export"(%[[OUT]]) <{encoding = tensor<4xf32>, affinity = #hal.device.affinity<@__device_0>}>
// CHECK: func.return %[[VIEW]]

// With async-external the inputs are ready at the caller's wait fence and the result's readiness
// is chained onto the caller's signal fence: no host wait is left.
// ASYNC-LABEL: func.func @simple_mul(
// ASYNC-SAME: %[[WAIT:[^:]*]]: !hal.fence, %[[SIGNAL:[^:]*]]: !hal.fence)
// ASYNC: %[[IN_READY:.*]] = "stream.timepoint.import"(%[[WAIT]])
// ASYNC-NOT: "stream.timepoint.import"
// ASYNC: %[[JOINED:.*]] = "stream.timepoint.join"(%[[IN_READY]], %{{.*}})
// ASYNC: %[[DONE:.*]] = "stream.cmd.execute"(%[[JOINED]])
// ASYNC-NOT: "stream.timepoint.await"
// ASYNC: "stream.timepoint.chain_external"(%[[DONE]], %[[SIGNAL]])
// ASYNC-NOT: "stream.timepoint.await"
// ASYNC: "stream.tensor.export"
func.func @simple_mul(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that the argument of a coarse-fences call leaves without a host wait (its readiness is
// chained onto the call's wait fence) and that its result is ready at the call's signal fence.
func.func private @custom.call.async(tensor<4xf32>) -> tensor<4xf32> attributes {
  iree.abi.model = "coarse-fences", nosideeffects
}

// CHECK-LABEL: func.func @call_async(
// CHECK: %[[SQUARED:.*]] = "stream.cmd.execute"
// CHECK: %[[WAIT:.*]] = "hal.fence.create"
// CHECK: %[[SIGNAL:.*]] = "hal.fence.create"
// CHECK: "stream.timepoint.chain_external"(%[[SQUARED]], %[[WAIT]])
// CHECK-NOT: "stream.timepoint.await"
// CHECK: %[[ARG:.*]] = "stream.tensor.export"
// CHECK: %[[R:.*]] = func.call @custom.call.async(%[[ARG]], %[[WAIT]], %[[SIGNAL]])
// CHECK: "stream.tensor.import"(%[[R]])
// CHECK: %[[R_READY:.*]] = "stream.timepoint.import"(%[[SIGNAL]])
// CHECK: %[[JOINED:.*]] = "stream.timepoint.join"(%[[R_READY]], %{{.*}})
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"(%[[JOINED]])
// CHECK: "stream.timepoint.await"(%[[DONE]])
func.func @call_async(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %x, %x : tensor<4xf32>
  %1 = call @custom.call.async(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = arith.mulf %1, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Checks that a result placed in caller storage (iree.abi.output) is copied into that storage
// once computed, and that the export waits for the copy.
// CHECK-LABEL: func.func @mul_into(
// CHECK-SAME: %{{[^:]*}}: !hal.buffer_view, %[[OUT:[^:]*]]: !hal.buffer_view)
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"
// CHECK: %[[STORAGE:.*]] = "stream.tensor.import"(%[[OUT]]) <{encoding = tensor<4xf32>, name = "output storage", affinity = #hal.device.affinity<@__device_0>}>
// CHECK: %[[COPIED:.*]] = "stream.cmd.execute"(%[[DONE]]) <{affinity = #hal.device.affinity<@__device_0>}> ({
// CHECK-NEXT: "stream.cmd.copy"(%{{.*}}, %[[STORAGE]], %{{.*}})
// CHECK: "stream.timepoint.await"(%[[COPIED]])
// CHECK: "stream.tensor.export"(%[[STORAGE]])
func.func @mul_into(%x: tensor<4xf32>, %out: tensor<4xf32> {iree.abi.output = 0 : index}) -> tensor<4xf32> {
  %0 = arith.mulf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
