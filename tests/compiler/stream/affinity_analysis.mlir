// Checks where --convert-to-stream places work across devices: every import, allocation, execute
// region and export carries the device it runs on, flow.tensor.transfer becomes a
// stream.async.transfer between the two devices ordered after its producer, a dispatch reading a
// value from another device gets an implicit transfer (one per value and device), an export whose
// value lives elsewhere gets one too, and a program with no affinities is all on the default device.
// RUN: weir-opt --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --iree-hal-target-device=device_c=local[2] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-execution-model=async-external --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --iree-hal-target-device=device_c=local[2] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s --check-prefix=ASYNC

// The seed program: dispatch 0 on @device_a, an explicit transfer a -> b behind it, dispatch 1 on
// @device_b behind the transfer, and an explicit transfer b -> a of the result (external: it is
// what the caller gets) that the host waits for before exporting on @device_a.
// CHECK-LABEL: func.func @multi_device_mul(
// CHECK: %[[IN:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input0", affinity = #hal.device.affinity<@device_a>}>
// CHECK: %[[CST_A:.*]] = "stream.resource.constant"() <{value = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>, affinity = #hal.device.affinity<@device_a>}>
// CHECK: %[[T_A:.*]], %[[T_A_READY:.*]] = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
// CHECK: %[[D0:.*]] = "stream.cmd.execute"(%[[T_A_READY]]) <{affinity = #hal.device.affinity<@device_a>}> ({
// CHECK-NEXT: "stream.cmd.dispatch"(%[[IN]], %[[CST_A]], %[[T_A]]) <{entry_point = @multi_device_mul_dispatch_0::@multi_device_mul_dispatch_0,
// CHECK: %[[SIZE0:.*]] = "stream.tensor.sizeof"() <{encoding = tensor<4xf32>}>
// CHECK-NEXT: %[[T_B:.*]], %[[T_B_READY:.*]] = "stream.async.transfer"(%[[T_A]], %[[SIZE0]], %[[D0]]) <{source_affinity = #hal.device.affinity<@device_a>, target_affinity = #hal.device.affinity<@device_b>}> : (!stream.resource<transient>, index, !stream.timepoint) -> (!stream.resource<transient>, !stream.timepoint)
// CHECK: %[[CST_B:.*]] = "stream.resource.constant"() <{value = dense<[4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]> : tensor<4xf32>, affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[R_B:.*]], %[[R_B_READY:.*]] = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[AFTER_T:.*]] = "stream.timepoint.join"(%[[T_B_READY]], %[[R_B_READY]])
// CHECK: %[[D1:.*]] = "stream.cmd.execute"(%[[AFTER_T]]) <{affinity = #hal.device.affinity<@device_b>}> ({
// CHECK-NEXT: "stream.cmd.dispatch"(%[[T_B]], %[[CST_B]], %[[R_B]]) <{entry_point = @multi_device_mul_dispatch_1::@multi_device_mul_dispatch_1,
// CHECK: %[[R_A:.*]], %[[R_A_READY:.*]] = "stream.async.transfer"(%[[R_B]], %{{.*}}, %[[D1]]) <{source_affinity = #hal.device.affinity<@device_b>, target_affinity = #hal.device.affinity<@device_a>}> : (!stream.resource<external>, index, !stream.timepoint) -> (!stream.resource<external>, !stream.timepoint)
// CHECK-NOT: "stream.async.transfer"
// CHECK: "stream.timepoint.await"(%[[R_A_READY]])
// CHECK-NEXT: %[[VIEW:.*]] = "stream.tensor.export"(%[[R_A]]) <{encoding = tensor<4xf32>, affinity = #hal.device.affinity<@device_a>}>
// CHECK-NEXT: func.return %[[VIEW]]

// With async-external the first dispatch also waits for the caller's wait fence, and the caller's
// signal fence is chained (on @device_a) to the transfer back, not to dispatch 1.
// ASYNC-LABEL: func.func @multi_device_mul(
// ASYNC-SAME: %[[WAIT:[^:]*]]: !hal.fence, %[[SIGNAL:[^:]*]]: !hal.fence)
// ASYNC: %[[IN_READY:.*]] = "stream.timepoint.import"(%[[WAIT]])
// ASYNC: %[[JOINED:.*]] = "stream.timepoint.join"(%[[IN_READY]], %{{.*}})
// ASYNC: %[[D0:.*]] = "stream.cmd.execute"(%[[JOINED]]) <{affinity = #hal.device.affinity<@device_a>}>
// ASYNC: "stream.async.transfer"(%{{.*}}, %{{.*}}, %[[D0]]) <{source_affinity = #hal.device.affinity<@device_a>, target_affinity = #hal.device.affinity<@device_b>}>
// ASYNC: %[[D1:.*]] = "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// ASYNC: %{{.*}}, %[[BACK:.*]] = "stream.async.transfer"(%{{.*}}, %{{.*}}, %[[D1]]) <{source_affinity = #hal.device.affinity<@device_b>, target_affinity = #hal.device.affinity<@device_a>}>
// ASYNC-NOT: "stream.timepoint.await"
// ASYNC: "stream.timepoint.chain_external"(%[[BACK]], %[[SIGNAL]]) <{affinity = #hal.device.affinity<@device_a>}>
// ASYNC-NOT: "stream.timepoint.await"
// ASYNC: "stream.tensor.export"(%{{.*}}) <{encoding = tensor<4xf32>, affinity = #hal.device.affinity<@device_a>}>
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

// A dispatch reading values from two devices runs where its first operand lives (@device_a); the
// operand from @device_b is transferred to it first and the dispatch waits for that copy. The
// result is wanted on @device_a, where it already is: no further transfer.
// CHECK-LABEL: func.func @two_devices(
// CHECK: %[[X:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input0", affinity = #hal.device.affinity<@device_a>}>
// CHECK: %[[Y:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input1", affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[Y_ON_A:.*]], %[[Y_MOVED:.*]] = "stream.async.transfer"(%[[Y]], %{{.*}}) <{source_affinity = #hal.device.affinity<@device_b>, target_affinity = #hal.device.affinity<@device_a>}> : (!stream.resource<external>, index) -> (!stream.resource<transient>, !stream.timepoint)
// CHECK: %[[OUT:.*]], %[[OUT_READY:.*]] = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// CHECK: %[[JOINED:.*]] = "stream.timepoint.join"(%[[Y_MOVED]], %[[OUT_READY]])
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"(%[[JOINED]]) <{affinity = #hal.device.affinity<@device_a>}> ({
// CHECK-NEXT: "stream.cmd.dispatch"(%[[X]], %[[Y_ON_A]], %[[OUT]])
// CHECK-NOT: "stream.async.transfer"
// CHECK: "stream.timepoint.await"(%[[DONE]])
// CHECK-NEXT: "stream.tensor.export"(%[[OUT]]) <{encoding = tensor<4xf32>, affinity = #hal.device.affinity<@device_a>}>
func.func @two_devices(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                       %y: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %0 = arith.mulf %x, %y : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Operand order decides: with the @device_b value first the dispatch runs on @device_b and the
// @device_a value moves. Two dispatches on @device_a that read the same @device_b value share one
// transfer of it (the transfer of %0 to @device_a, where it already is, is no copy at all); the
// second dispatch waits for the first and for that one copy. Dynamic dims are carried along.
// CHECK-LABEL: func.func @shared_copy(
// CHECK: %[[X:.*]] = "stream.tensor.import"(%{{.*}}, %[[N:.*]]) <{encoding = tensor<?xf32>, name = "input0", affinity = #hal.device.affinity<@device_a>}>
// CHECK: %[[Y:.*]] = "stream.tensor.import"(%{{.*}}, %[[M:.*]]) <{encoding = tensor<?xf32>, name = "input1", affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[Y_SIZE:.*]] = "stream.tensor.sizeof"(%[[M]]) <{encoding = tensor<?xf32>}>
// CHECK-NEXT: %[[Y_ON_A:.*]], %[[Y_MOVED:.*]] = "stream.async.transfer"(%[[Y]], %[[Y_SIZE]]) <{source_affinity = #hal.device.affinity<@device_b>, target_affinity = #hal.device.affinity<@device_a>}>
// CHECK: %[[T:.*]], %{{.*}} = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// CHECK: %[[D0:.*]] = "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}%[[X]], %[[Y_ON_A]], %[[T]])
// CHECK-NOT: "stream.async.transfer"
// CHECK: %[[OUT:.*]], %[[OUT_READY:.*]] = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// CHECK: %[[JOINED:.*]] = "stream.timepoint.join"(%[[D0]], %[[Y_MOVED]], %[[OUT_READY]])
// CHECK: "stream.cmd.execute"(%[[JOINED]]) <{affinity = #hal.device.affinity<@device_a>}>
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}%[[T]], %[[Y_ON_A]], %[[OUT]])
// CHECK-NOT: "stream.async.transfer"
// CHECK: "stream.tensor.export"(%[[OUT]], %{{.*}}) <{encoding = tensor<?xf32>, affinity = #hal.device.affinity<@device_a>}>
//
// CHECK-LABEL: func.func @b_first(
// CHECK: %[[X:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input0", affinity = #hal.device.affinity<@device_a>}>
// CHECK: %[[Y:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input1", affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[X_ON_B:.*]], %{{.*}} = "stream.async.transfer"(%[[X]], %{{.*}}) <{source_affinity = #hal.device.affinity<@device_a>, target_affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[OUT:.*]], %{{.*}} = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// CHECK: "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// CHECK-NEXT: "stream.cmd.dispatch"(%[[Y]], %[[X_ON_B]], %[[OUT]])
func.func @shared_copy(%x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                       %y: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %0 = arith.mulf %x, %y : tensor<?xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %0, %c0 : tensor<?xf32>
  %t = flow.tensor.transfer %0 : tensor<?xf32>{%n} to #hal.device.promise<@device_a>
  %1 = arith.addf %t, %y : tensor<?xf32>
  return %1 : tensor<?xf32>
}
func.func @b_first(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                   %y: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %0 = arith.mulf %y, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The result is computed on @device_b but promised on @device_c: the export gets an implicit
// transfer b -> c into an external resource, behind the dispatch, and the host waits for that copy.
// CHECK-LABEL: func.func @export_elsewhere(
// CHECK: "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input0", affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[OUT:.*]], %{{.*}} = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}> : (index) -> (!stream.resource<external>, !stream.timepoint)
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[ON_C:.*]], %[[MOVED:.*]] = "stream.async.transfer"(%[[OUT]], %{{.*}}, %[[DONE]]) <{source_affinity = #hal.device.affinity<@device_b>, target_affinity = #hal.device.affinity<@device_c>}> : (!stream.resource<external>, index, !stream.timepoint) -> (!stream.resource<external>, !stream.timepoint)
// CHECK-NEXT: "stream.timepoint.await"(%[[MOVED]])
// CHECK-NEXT: "stream.tensor.export"(%[[ON_C]]) <{encoding = tensor<4xf32>, affinity = #hal.device.affinity<@device_c>}>
func.func @export_elsewhere(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_c>}) {
  %0 = arith.mulf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// No affinities anywhere: everything is on the default device (the first declared, @device_a).
// CHECK-LABEL: func.func @unplaced(
// CHECK: "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input0", affinity = #hal.device.affinity<@device_a>}>
// CHECK: "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input1", affinity = #hal.device.affinity<@device_a>}>
// CHECK: "stream.resource.constant"() <{value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>, affinity = #hal.device.affinity<@device_a>}>
// CHECK: "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// CHECK: "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// CHECK-NOT: "stream.async.transfer"
// CHECK-NOT: @device_b
// CHECK-NOT: @device_c
// CHECK: "stream.tensor.export"(%{{.*}}) <{encoding = tensor<4xf32>, affinity = #hal.device.affinity<@device_a>}>
// CHECK-NOT: @device_b
// CHECK-NOT: @device_c
// ASYNC-LABEL: func.func @unplaced(
// ASYNC: "stream.timepoint.chain_external"(%{{.*}}, %{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
func.func @unplaced(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = arith.mulf %x, %y : tensor<4xf32>
  %1 = arith.addf %0, %c : tensor<4xf32>
  return %1 : tensor<4xf32>
}
