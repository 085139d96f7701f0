// Checks that --convert-stream-to-hal gets one hal.device.get per device a function uses, in
// binding-ordinal order at its top (whatever order the work asked for them), runs each
// allocation, command buffer, executable lookup and queue submission on its own device's handle,
// and lowers a transfer that was not elided to an allocation on the target device plus a
// hal.device.queue.copy on the source device that waits on the producer's fence and signals the
// fence the consumer's submission waits on. ELIDED runs --elide-transfers first: no copies, and
// the consumer waits on the producer's fence directly.
// RUN: weir-opt --iree-hal-memoization=false --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --translate-executables --convert-stream-to-hal %s | filecheck %s
// RUN: weir-opt --iree-hal-memoization=false --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --elide-transfers --translate-executables --convert-stream-to-hal %s | filecheck %s --check-prefix=ELIDED
// RUN: weir-opt --iree-hal-memoization=false --split-input-file --iree-execution-model=async-external --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --translate-executables --convert-stream-to-hal %s | filecheck %s --check-prefix=ASYNC

// CHECK-LABEL: func.func @multi_device_mul(
// CHECK-NEXT: %[[DEV_A:.*]] = "hal.device.get"() <{ordinal = 0 : index}>
// CHECK-NEXT: %[[DEV_B:.*]] = "hal.device.get"() <{ordinal = 1 : index}>
// CHECK-NOT: "hal.device.get"
// Dispatch 0 on @device_a.
// CHECK: %[[IN:.*]] = "hal.buffer_view.buffer"
// CHECK: %[[CST_A:.*]] = "hal.allocator.import_rodata"(%[[DEV_A]])
// CHECK: %[[T_A:.*]] = "hal.allocator.allocate"(%[[DEV_A]], %{{.*}})
// CHECK: %[[CB0:.*]] = "hal.command_buffer.create"(%[[DEV_A]])
// CHECK: %[[EXE0:.*]] = "hal.executable.lookup"(%[[DEV_A]]) <{executable = @multi_device_mul_dispatch_0}>
// CHECK: "hal.command_buffer.dispatch"(%[[CB0]], %[[EXE0]], %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[CST_A]], %[[T_A]])
// CHECK: %[[D0_DONE:.*]] = "hal.fence.create"(%[[DEV_A]])
// CHECK: "hal.device.queue.execute"(%[[DEV_A]], %[[D0_DONE]], %[[CB0]])
// Transfer a -> b: the copy is on @device_a's queue, into a buffer from @device_b, after dispatch 0.
// CHECK: %[[SIZE:.*]] = arith.constant 16 : index
// CHECK: %[[T_B:.*]] = "hal.allocator.allocate"(%[[DEV_B]], %[[SIZE]])
// CHECK: %[[COPIED:.*]] = "hal.fence.create"(%[[DEV_A]])
// CHECK: "hal.device.queue.copy"(%[[DEV_A]], %[[D0_DONE]], %[[COPIED]], %[[T_A]], %[[T_B]], %[[SIZE]])
// Dispatch 1 on @device_b reads the copy once it is made.
// CHECK: %[[CST_B:.*]] = "hal.allocator.import_rodata"(%[[DEV_B]])
// CHECK: %[[R_B:.*]] = "hal.allocator.allocate"(%[[DEV_B]], %{{.*}})
// CHECK: %[[CB1:.*]] = "hal.command_buffer.create"(%[[DEV_B]])
// CHECK: %[[EXE1:.*]] = "hal.executable.lookup"(%[[DEV_B]]) <{executable = @multi_device_mul_dispatch_1}>
// CHECK: "hal.command_buffer.dispatch"(%[[CB1]], %[[EXE1]], %{{.*}}, %{{.*}}, %{{.*}}, %[[T_B]], %[[CST_B]], %[[R_B]])
// CHECK: %[[D1_DONE:.*]] = "hal.fence.create"(%[[DEV_B]])
// CHECK: "hal.device.queue.execute"(%[[DEV_B]], %[[COPIED]], %[[D1_DONE]], %[[CB1]])
// Transfer b -> a of the result, on @device_b's queue; the host waits for it and exports the copy.
// CHECK: %[[R_A:.*]] = "hal.allocator.allocate"(%[[DEV_A]], %{{.*}})
// CHECK: %[[BACK:.*]] = "hal.fence.create"(%[[DEV_B]])
// CHECK: "hal.device.queue.copy"(%[[DEV_B]], %[[D1_DONE]], %[[BACK]], %[[R_B]], %[[R_A]], %{{.*}})
// CHECK: "hal.fence.await"(%[[BACK]])
// CHECK: "hal.buffer_view.create"(%[[R_A]], %{{.*}}) <{element_type = f32}>

// ELIDED-LABEL: func.func @multi_device_mul(
// ELIDED-NEXT: %[[DEV_A:.*]] = "hal.device.get"() <{ordinal = 0 : index}>
// ELIDED-NEXT: %[[DEV_B:.*]] = "hal.device.get"() <{ordinal = 1 : index}>
// ELIDED-NOT: "hal.device.queue.copy"
// ELIDED: %[[T:.*]] = "hal.allocator.allocate"(%[[DEV_A]], %{{.*}})
// ELIDED: "hal.command_buffer.create"(%[[DEV_A]])
// ELIDED: %[[D0_DONE:.*]] = "hal.fence.create"(%[[DEV_A]])
// ELIDED: "hal.device.queue.execute"(%[[DEV_A]], %[[D0_DONE]], %{{.*}})
// ELIDED-NOT: "hal.device.queue.copy"
// ELIDED: %[[CB1:.*]] = "hal.command_buffer.create"(%[[DEV_B]])
// ELIDED: %[[EXE1:.*]] = "hal.executable.lookup"(%[[DEV_B]]) <{executable = @multi_device_mul_dispatch_1}>
// ELIDED: "hal.command_buffer.dispatch"(%[[CB1]], %[[EXE1]], %{{.*}}, %{{.*}}, %{{.*}}, %[[T]], %{{.*}}, %[[R:[^)]*]])
// ELIDED: %[[D1_DONE:.*]] = "hal.fence.create"(%[[DEV_B]])
// ELIDED: "hal.device.queue.execute"(%[[DEV_B]], %[[D0_DONE]], %[[D1_DONE]], %[[CB1]])
// ELIDED-NOT: "hal.device.queue.copy"
// ELIDED: "hal.fence.await"(%[[D1_DONE]])
// ELIDED: "hal.buffer_view.create"(%[[R]], %{{.*}})

// With async-external dispatch 0 waits on the caller's wait fence and a barrier on @device_a
// signals the caller's fence once the copy back is done; the host waits for nothing.
// ASYNC-LABEL: func.func @multi_device_mul(
// ASYNC-SAME: %[[WAIT:[^:]*]]: !hal.fence, %[[SIGNAL:[^:]*]]: !hal.fence)
// ASYNC-NEXT: %[[DEV_A:.*]] = "hal.device.get"() <{ordinal = 0 : index}>
// ASYNC-NEXT: %[[DEV_B:.*]] = "hal.device.get"() <{ordinal = 1 : index}>
// ASYNC: %[[D0_DONE:.*]] = "hal.fence.create"(%[[DEV_A]])
// ASYNC: "hal.device.queue.execute"(%[[DEV_A]], %[[WAIT]], %[[D0_DONE]], %{{.*}})
// ASYNC: "hal.device.queue.copy"(%[[DEV_A]], %[[D0_DONE]], %[[COPIED:[^,]*]],
// ASYNC: "hal.device.queue.execute"(%[[DEV_B]], %[[COPIED]], %[[D1_DONE:[^,]*]],
// ASYNC: "hal.device.queue.copy"(%[[DEV_B]], %[[D1_DONE]], %[[BACK:[^,]*]],
// ASYNC-NOT: "hal.fence.await"
// ASYNC: "hal.device.queue.barrier"(%[[DEV_A]], %[[BACK]], %[[SIGNAL]])
// ASYNC-NOT: "hal.fence.await"
// ASYNC: "hal.buffer_view.create"
func.func public @multi_device_mul(
  %input_a: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
) -> (
  tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
) {
  %constant_a = arith.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %transient_a = arith.mulf %input_a, %constant_a : tensor<4xf32>
  %transient_b = flow.tensor.transfer %transient_a : tensor<4xf32> to #hal.device.promise<@device_b>
  %constant_b = arith.constant dense<[4.0, 5.0, 6.0, 7.0]> : tensor<4xf32>
  %result_b = arith.mulf %transient_b, %constant_b : tensor<4xf32>
  %result_a = flow.tensor.transfer %result_b : tensor<4xf32> to #hal.device.promise<@device_a>
  func.return %result_a : tensor<4xf32>
}

// -----

// @device_b's handle is asked for first (the dispatch) and @device_a's later (the buffer the
// result is copied into for the caller), yet ordinal 0 is still got first.
// CHECK-LABEL: func.func @b_then_a(
// CHECK-NEXT: %[[DEV_A:.*]] = "hal.device.get"() <{ordinal = 0 : index}>
// CHECK-NEXT: %[[DEV_B:.*]] = "hal.device.get"() <{ordinal = 1 : index}>
// CHECK-NOT: "hal.device.get"
// CHECK: %[[OUT_B:.*]] = "hal.allocator.allocate"(%[[DEV_B]], %{{.*}})
// CHECK: "hal.executable.lookup"(%[[DEV_B]]) <{executable = @b_then_a_dispatch_0}>
// CHECK: %[[DONE:.*]] = "hal.fence.create"(%[[DEV_B]])
// CHECK: "hal.device.queue.execute"(%[[DEV_B]], %[[DONE]], %{{.*}})
// CHECK: %[[OUT_A:.*]] = "hal.allocator.allocate"(%[[DEV_A]], %{{.*}})
// CHECK: %[[COPIED:.*]] = "hal.fence.create"(%[[DEV_B]])
// CHECK: "hal.device.queue.copy"(%[[DEV_B]], %[[DONE]], %[[COPIED]], %[[OUT_B]], %[[OUT_A]], %{{.*}})
// CHECK: "hal.fence.await"(%[[COPIED]])
// CHECK: "hal.buffer_view.create"(%[[OUT_A]], %{{.*}})
func.func @b_then_a(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %0 = arith.mulf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A function whose work is all on @device_b gets only that device's handle.
// CHECK-LABEL: func.func @only_b(
// CHECK-NEXT: %[[DEV_B:.*]] = "hal.device.get"() <{ordinal = 1 : index}>
// CHECK-NOT: "hal.device.get"
// CHECK: "hal.allocator.allocate"(%[[DEV_B]], %{{.*}})
// CHECK: "hal.command_buffer.create"(%[[DEV_B]])
// CHECK: "hal.device.queue.execute"(%[[DEV_B]],
// ASYNC-LABEL: func.func @only_b(
// ASYNC-SAME: %[[WAIT:[^:]*]]: !hal.fence, %[[SIGNAL:[^:]*]]: !hal.fence)
// ASYNC-NEXT: %[[DEV_B:.*]] = "hal.device.get"() <{ordinal = 1 : index}>
// ASYNC-NOT: "hal.device.get"
// ASYNC: %[[DONE:.*]] = "hal.fence.create"(%[[DEV_B]])
// ASYNC: "hal.device.queue.execute"(%[[DEV_B]], %[[WAIT]], %[[DONE]], %{{.*}})
// ASYNC: "hal.device.queue.barrier"(%[[DEV_B]], %[[DONE]], %[[SIGNAL]])
func.func @only_b(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %0 = arith.mulf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
