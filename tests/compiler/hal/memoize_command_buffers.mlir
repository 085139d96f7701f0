// Checks that an execute whose recording is the same on every call becomes a memoized command
// buffer (recorded in a region that uses nothing from outside but its device's ordinal, with
// the bindings as slots, a packed transient as its slab at an offset) submitted with
// hal.device.queue.execute.indirect and the call's buffers in slot order; that constants are
// bound by the recording itself, imported there once for each set with the same bytes (one
// buffer at run time), and take no slot; that results made by one execute are awaited once;
// and that an execute whose push constants are only known at run time is still recorded on
// every call.
// RUN: weir-opt --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --schedule-execution --pack-transients --translate-executables --convert-stream-to-hal --split-input-file %s | filecheck %s

// CHECK-LABEL: func.func @three_matmuls(
// CHECK: %[[DEVICE:.*]] = "hal.device.get"() <{ordinal = 0 : index}>
// CHECK: %[[X:.*]] = "hal.buffer_view.buffer"(%{{.*}})
// CHECK: %[[W:.*]] = "hal.buffer_view.buffer"(%{{.*}})
// CHECK: %[[SLAB:.*]] = "hal.allocator.allocate"(%[[DEVICE]], %{{.*}})
// CHECK: %[[OUT:.*]] = "hal.allocator.allocate"(%[[DEVICE]], %{{.*}})
// CHECK: %[[CB:.*]] = "hal.command_buffer.memoize"(%[[DEVICE]]) ({
// CHECK-NEXT: ^{{.*}}(%[[REC:.*]]: !hal.command_buffer, %[[S0:.*]]: !hal.buffer, %[[S1:.*]]: !hal.buffer, %[[S2:.*]]: !hal.buffer, %[[S3:.*]]: !hal.buffer):
// CHECK-NEXT: %[[OWN:.*]] = "hal.device.get"() <{ordinal = 0 : index}>
// CHECK: %[[T0:.*]] = "hal.buffer.subspan"(%[[S2]], %{{.*}}, %{{.*}})
// CHECK: "hal.command_buffer.dispatch"(%[[REC]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S0]], %[[S1]], %[[T0]])
// CHECK: "hal.command_buffer.execution_barrier"(%[[REC]])
// CHECK: %[[T0_AGAIN:.*]] = "hal.buffer.subspan"(%[[S2]],
// CHECK: %[[T1:.*]] = "hal.buffer.subspan"(%[[S2]],
// CHECK: "hal.command_buffer.dispatch"(%[[REC]], {{.*}}, %[[T0_AGAIN]], %[[S1]], %[[T1]])
// CHECK: "hal.command_buffer.execution_barrier"(%[[REC]])
// CHECK: %[[T1_AGAIN:.*]] = "hal.buffer.subspan"(%[[S2]],
// CHECK: "hal.command_buffer.dispatch"(%[[REC]], {{.*}}, %[[T1_AGAIN]], %[[S1]], %[[S3]])
// CHECK-NEXT: "hal.command_buffer.finalize"(%[[REC]])
// CHECK-NEXT: }) : (!hal.device) -> !hal.command_buffer
// CHECK-NEXT: %[[SIGNAL:.*]] = "hal.fence.create"(%[[DEVICE]])
// CHECK-NEXT: "hal.device.queue.execute.indirect"(%[[DEVICE]], %[[SIGNAL]], %[[CB]], %[[X]], %[[W]], %[[SLAB]], %[[OUT]])
// CHECK-NOT: "hal.command_buffer.create"
// CHECK: "hal.fence.await"(%[[SIGNAL]])
func.func @three_matmuls(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %acc = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m0 = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%m0, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%m1, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m2 : tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT: "hal.command_buffer.memoize"
// CHECK: %[[CB:.*]] = "hal.command_buffer.create"
// CHECK: "hal.command_buffer.dispatch"(%[[CB]]
// CHECK: "hal.device.queue.execute"(%{{.*}}, %{{.*}}, %[[CB]])
func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.addf %a, %a : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @same_bytes(
// CHECK: %[[X:.*]] = "hal.buffer_view.buffer"
// CHECK-NOT: "hal.allocator.import_rodata"
// CHECK: %[[OUT0:.*]] = "hal.allocator.allocate"
// CHECK: %[[OUT1:.*]] = "hal.allocator.allocate"
// CHECK: "hal.command_buffer.memoize"
// CHECK-NEXT: ^{{.*}}(%[[REC:.*]]: !hal.command_buffer, %[[S0:.*]]: !hal.buffer, %[[S1:.*]]: !hal.buffer, %[[S2:.*]]: !hal.buffer):
// CHECK-NEXT: %[[OWN:.*]] = "hal.device.get"() <{ordinal = 0 : index}>
// CHECK: %[[W:.*]] = "hal.allocator.import_rodata"(%[[OWN]]) <{rodata = "[[KEY:.*]]"}>
// CHECK-NEXT: "hal.command_buffer.dispatch"(%[[REC]], {{.*}}, %[[S0]], %[[W]], %[[S1]])
// CHECK-NOT: "hal.allocator.import_rodata"
// CHECK: "hal.command_buffer.dispatch"(%[[REC]], {{.*}}, %[[S1]], %[[W]], %[[S2]])
// CHECK: %[[SIGNAL:.*]] = "hal.fence.create"
// CHECK-NEXT: "hal.device.queue.execute.indirect"(%{{.*}}, %[[SIGNAL]], %{{.*}}, %[[X]], %[[OUT0]], %[[OUT1]])
// CHECK-NEXT: "hal.fence.await"(%[[SIGNAL]])
// CHECK-NOT: "hal.fence.await"
// CHECK: func.return
func.func @same_bytes(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %acc = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %w1 = arith.constant dense_resource<first> : tensor<4x4xf32>
  %w2 = arith.constant dense_resource<second> : tensor<4x4xf32>
  %m0 = linalg.matmul ins(%x, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%m0, %w2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m0, %m1 : tensor<4x4xf32>, tensor<4x4xf32>
}
{-#
  dialect_resources: { builtin: {
    first: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F",
    second: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
  } }
#-}
