// Checks that an execute region becomes a command buffer submitted to the device queue with a
// signal fence, and that the await becomes a fence wait before the result view is created.
// RUN: weir-opt --iree-hal-memoization=false --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --translate-executables --convert-stream-to-hal %s | filecheck %s
// RUN: weir-opt --iree-hal-memoization=false --iree-execution-model=async-external --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --translate-executables --convert-stream-to-hal %s | filecheck %s --check-prefix=ASYNC

// CHECK-LABEL: func.func @simple_mul(
// CHECK: %[[DEV:.*]] = "hal.device.get"() <{ordinal = 0 : index}>
// CHECK: "hal.buffer_view.assert"(%{{.*}}) <{message = "input0", element_type = f32, shape = [4 : index]}>
// CHECK: %[[OUT:.*]] = "hal.allocator.allocate"(%[[DEV]], %{{.*}})
// CHECK: %[[CB:.*]] = "hal.command_buffer.create"(%[[DEV]])
// CHECK: %[[EXE:.*]] = "hal.executable.lookup"(%[[DEV]]) <{executable = @simple_mul_dispatch_0}>
// CHECK: "hal.command_buffer.dispatch"(%[[CB]], %[[EXE]], {{.*}}, %[[OUT]]) <{entry_point = 0 : index
// CHECK: "hal.command_buffer.finalize"(%[[CB]])
// CHECK: %[[FENCE:.*]] = "hal.fence.create"(%[[DEV]])
// CHECK: "hal.device.queue.execute"(%[[DEV]], %[[FENCE]], %[[CB]])
// CHECK: "hal.fence.await"(%[[FENCE]])
// CHECK: "hal.buffer_view.create"(%[[OUT]], %{{.*}}) <{element_type = f32}>

// With async-external the first submission waits on the caller's wait fence, and a queue barrier
// (no host wait) signals the caller's signal fence once the dispatch is done.
// ASYNC-LABEL: func.func @simple_mul(
// ASYNC-SAME: %[[WAIT:[^:]*]]: !hal.fence, %[[SIGNAL:[^:]*]]: !hal.fence)
// ASYNC: %[[DEV:.*]] = "hal.device.get"()
// ASYNC: %[[DONE:.*]] = "hal.fence.create"(%[[DEV]])
// ASYNC: "hal.device.queue.execute"(%[[DEV]], %[[WAIT]], %[[DONE]], %{{.*}})
// ASYNC-NOT: "hal.fence.await"
// ASYNC: "hal.device.queue.barrier"(%[[DEV]], %[[DONE]], %[[SIGNAL]])
// ASYNC-NOT: "hal.fence.await"
// ASYNC: "hal.buffer_view.create"
func.func @simple_mul(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
