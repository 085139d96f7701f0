// Checks that host control flow stays structured through the HAL conversion: carried resources
// become buffers, carried timepoints fences (a timepoint already reached crossing a boundary is a
// fence with no points, from an empty hal.fence.join), and queue work in a loop waits on the
// carried fence instead of the host waiting every iteration.
// RUN: weir-opt --iree-hal-memoization=false --split-input-file --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --translate-executables --convert-stream-to-hal %s | filecheck %s

// Checks scf.for: the argument's buffer and a reached fence enter the loop, the body's execute
// waits on the carried fence and yields its signal fence, the host awaits only after the loop.
// CHECK-LABEL: func.func @loop(
// CHECK: %[[DEVICE:.*]] = "hal.device.get"
// CHECK: %[[A:.*]] = "hal.buffer_view.buffer"
// CHECK: %[[REACHED:.*]] = "hal.fence.join"() : () -> !hal.fence
// CHECK: %[[R:.*]], %[[R_READY:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[A]], %[[ACC_READY:.*]] = %[[REACHED]]) -> (!hal.buffer, !hal.fence) {
// CHECK: %[[OUT:.*]] = "hal.allocator.allocate"(%[[DEVICE]], %{{.*}})
// CHECK: "hal.command_buffer.dispatch"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ACC]], %[[A]], %[[OUT]])
// CHECK: %[[SIGNAL:.*]] = "hal.fence.create"(%[[DEVICE]])
// CHECK: "hal.device.queue.execute"(%[[DEVICE]], %[[ACC_READY]], %[[SIGNAL]], %{{.*}})
// CHECK-NOT: "hal.fence.await"
// CHECK: scf.yield %[[OUT]], %[[SIGNAL]] : !hal.buffer, !hal.fence
// CHECK: "hal.fence.await"(%[[R_READY]])
// CHECK: "hal.buffer_view.create"(%[[R]]
func.func @loop(%a: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    %s = arith.addf %acc, %a : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}


// -----

// Checks that the dynamic dims of a carried tensor cross as index values, sizing the allocation
// in the loop and the buffer view after it.
// CHECK-LABEL: func.func @grow(
// CHECK: %[[D0:.*]] = "hal.buffer_view.dim"
// CHECK: %[[R:.*]], %{{.*}}, %[[R_DIM:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[D:.*]] = %[[D0]]) -> (!hal.buffer, !hal.fence, index) {
// CHECK: %[[D1:.*]] = arith.addi %[[D]], %{{.*}} : index
// CHECK: %[[BYTES:.*]] = arith.muli %{{.*}}, %[[D1]] : index
// CHECK: %[[E:.*]] = "hal.allocator.allocate"(%{{.*}}, %[[BYTES]])
// CHECK: %[[E_READY:.*]] = "hal.fence.join"() : () -> !hal.fence
// CHECK: scf.yield %[[E]], %[[E_READY]], %[[D1]] : !hal.buffer, !hal.fence, index
// CHECK: "hal.buffer_view.create"(%[[R]], %[[R_DIM]])
func.func @grow(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<?xf32>) {
    %d = tensor.dim %acc, %c0 : tensor<?xf32>
    %d1 = arith.addi %d, %c1 : index
    %e = tensor.empty(%d1) : tensor<?xf32>
    scf.yield %e : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}


// -----

// Checks scf.if: each region yields its buffer and the fence its queue work signals.
// CHECK-LABEL: func.func @pick(
// CHECK: %[[R:.*]], %[[R_READY:.*]] = scf.if %{{.*}} -> (!hal.buffer, !hal.fence) {
// CHECK: %[[T:.*]] = "hal.allocator.allocate"
// CHECK: %[[T_READY:.*]] = "hal.fence.create"
// CHECK: scf.yield %[[T]], %[[T_READY]] : !hal.buffer, !hal.fence
// CHECK: } else {
// CHECK: %[[K:.*]] = "hal.allocator.import_rodata"
// CHECK: %[[E:.*]] = "hal.allocator.allocate"
// CHECK: "hal.command_buffer.copy_buffer"(%{{.*}}, %[[K]], %[[E]], %{{.*}})
// CHECK: %[[E_READY:.*]] = "hal.fence.create"
// CHECK: scf.yield %[[E]], %[[E_READY]] : !hal.buffer, !hal.fence
// CHECK: "hal.fence.await"(%[[R_READY]])
// CHECK: "hal.buffer_view.create"(%[[R]]
func.func @pick(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    %d = arith.addf %a, %a : tensor<4xf32>
    scf.yield %d : tensor<4xf32>
  } else {
    %k = arith.constant dense<1.0> : tensor<4xf32>
    scf.yield %k : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
