// Checks that --elide-transfers removes the stream.async.transfer ops between devices that share
// memory (all local devices do): the consumer reads the producer's allocation, ordered by the
// producer's own timepoint, and each allocation used on several devices becomes
// #hal.device.optimal<[...]> of them (in binding order), while a resource used on one device only
// keeps its single affinity. BEFORE is the same pipeline without the pass.
// RUN: weir-opt --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s --check-prefix=BEFORE
// RUN: weir-opt --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --elide-transfers %s | filecheck %s --check-prefix=AFTER
// RUN: weir-opt --split-input-file --iree-execution-model=async-external --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --elide-transfers %s | filecheck %s --check-prefix=ASYNC

// The seed program: two explicit transfers before, none after.
// BEFORE-LABEL: func.func @multi_device_mul(
// BEFORE: "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// BEFORE: "stream.async.transfer"({{.*}}) <{source_affinity = #hal.device.affinity<@device_a>, target_affinity = #hal.device.affinity<@device_b>}>
// BEFORE: "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// BEFORE: "stream.async.transfer"({{.*}}) <{source_affinity = #hal.device.affinity<@device_b>, target_affinity = #hal.device.affinity<@device_a>}>
// BEFORE-NOT: "stream.async.transfer"
// BEFORE: "stream.tensor.export"

// After: dispatch 1 (on @device_b) reads dispatch 0's allocation and waits for dispatch 0's
// timepoint itself; the export (on @device_a) reads dispatch 1's allocation after waiting for
// dispatch 1. Both allocations are used on both devices; the constants each stay on one.
// AFTER-LABEL: func.func @multi_device_mul(
// AFTER-NOT: "stream.async.transfer"
// AFTER: %[[IN:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input0", affinity = #hal.device.affinity<@device_a>}>
// AFTER: %[[CST_A:.*]] = "stream.resource.constant"() <{value = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>, affinity = #hal.device.affinity<@device_a>}>
// AFTER: %[[T:.*]], %[[T_READY:.*]] = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.optimal<[#hal.device.affinity<@device_a>, #hal.device.affinity<@device_b>]>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
// AFTER: %[[D0:.*]] = "stream.cmd.execute"(%[[T_READY]]) <{affinity = #hal.device.affinity<@device_a>}> ({
// AFTER-NEXT: "stream.cmd.dispatch"(%[[IN]], %[[CST_A]], %[[T]]) <{entry_point = @multi_device_mul_dispatch_0::@multi_device_mul_dispatch_0,
// AFTER-NOT: "stream.async.transfer"
// AFTER: %[[CST_B:.*]] = "stream.resource.constant"() <{value = dense<[4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]> : tensor<4xf32>, affinity = #hal.device.affinity<@device_b>}>
// AFTER: %[[R:.*]], %[[R_READY:.*]] = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.optimal<[#hal.device.affinity<@device_a>, #hal.device.affinity<@device_b>]>}> : (index) -> (!stream.resource<external>, !stream.timepoint)
// AFTER: %[[AFTER_D0:.*]] = "stream.timepoint.join"(%[[D0]], %[[R_READY]])
// AFTER: %[[D1:.*]] = "stream.cmd.execute"(%[[AFTER_D0]]) <{affinity = #hal.device.affinity<@device_b>}> ({
// AFTER-NEXT: "stream.cmd.dispatch"(%[[T]], %[[CST_B]], %[[R]]) <{entry_point = @multi_device_mul_dispatch_1::@multi_device_mul_dispatch_1,
// AFTER-NOT: "stream.async.transfer"
// AFTER: "stream.timepoint.await"(%[[D1]])
// AFTER-NEXT: %[[VIEW:.*]] = "stream.tensor.export"(%[[R]]) <{encoding = tensor<4xf32>, affinity = #hal.device.affinity<@device_a>}>
// AFTER-NEXT: func.return %[[VIEW]]

// With async-external the caller's signal fence is chained straight to dispatch 1.
// ASYNC-LABEL: func.func @multi_device_mul(
// ASYNC-SAME: %[[SIGNAL:[^:]*]]: !hal.fence)
// ASYNC-NOT: "stream.async.transfer"
// ASYNC: %[[D0:.*]] = "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// ASYNC: %[[JOINED:.*]] = "stream.timepoint.join"(%[[D0]], %{{.*}})
// ASYNC: %[[D1:.*]] = "stream.cmd.execute"(%[[JOINED]]) <{affinity = #hal.device.affinity<@device_b>}>
// ASYNC-NOT: "stream.async.transfer"
// ASYNC-NOT: "stream.timepoint.await"
// ASYNC: "stream.timepoint.chain_external"(%[[D1]], %[[SIGNAL]]) <{affinity = #hal.device.affinity<@device_a>}>
// ASYNC-NOT: "stream.timepoint.await"
// ASYNC: "stream.tensor.export"
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

// %0 is used on both devices (dispatch 0 and its export on @device_a, dispatch 1 on @device_b)
// and is widened; %1 is written and exported on @device_b only and keeps its single affinity.
// BEFORE-LABEL: func.func @keep_single(
// BEFORE: "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// BEFORE: "stream.async.transfer"
// BEFORE: "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// AFTER-LABEL: func.func @keep_single(
// AFTER: %[[WIDE:.*]], %{{.*}} = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.optimal<[#hal.device.affinity<@device_a>, #hal.device.affinity<@device_b>]>}>
// AFTER: %[[D0:.*]] = "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// AFTER-NOT: "stream.async.transfer"
// AFTER: %[[ONLY_B:.*]], %[[ONLY_B_READY:.*]] = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// AFTER: %[[JOINED:.*]] = "stream.timepoint.join"(%[[D0]], %[[ONLY_B_READY]])
// AFTER: %[[D1:.*]] = "stream.cmd.execute"(%[[JOINED]]) <{affinity = #hal.device.affinity<@device_b>}> ({
// AFTER-NEXT: "stream.cmd.dispatch"(%[[WIDE]], %[[ONLY_B]])
// AFTER: "stream.tensor.export"(%[[WIDE]]) <{encoding = tensor<4xf32>, affinity = #hal.device.affinity<@device_a>}>
// AFTER: "stream.tensor.export"(%[[ONLY_B]]) <{encoding = tensor<4xf32>, affinity = #hal.device.affinity<@device_b>}>
func.func @keep_single(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
        tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %0 = arith.mulf %x, %x : tensor<4xf32>
  %t = flow.tensor.transfer %0 : tensor<4xf32> to #hal.device.promise<@device_b>
  %1 = arith.addf %t, %t : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A transfer of an argument (ready at once in the synchronous ABI) becomes the argument itself:
// the export on @device_b reads the @device_a import, with its dynamic dim.
// BEFORE-LABEL: func.func @moved_arg(
// BEFORE: %[[IN:.*]] = "stream.tensor.import"
// BEFORE: %[[MOVED:.*]], %{{.*}} = "stream.async.transfer"(%[[IN]], %{{.*}}) <{source_affinity = #hal.device.affinity<@device_a>, target_affinity = #hal.device.affinity<@device_b>}>
// BEFORE: "stream.tensor.export"(%[[MOVED]], %{{.*}}) <{encoding = tensor<?xf32>, affinity = #hal.device.affinity<@device_b>}>
// AFTER-LABEL: func.func @moved_arg(
// AFTER: %[[IN:.*]] = "stream.tensor.import"(%{{.*}}, %[[N:.*]]) <{encoding = tensor<?xf32>, name = "input0", affinity = #hal.device.affinity<@device_a>}>
// AFTER-NOT: "stream.async.transfer"
// AFTER: "stream.tensor.export"(%[[IN]], %[[N]]) <{encoding = tensor<?xf32>, affinity = #hal.device.affinity<@device_b>}>
func.func @moved_arg(%x: tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<?xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %t = flow.tensor.transfer %x : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  return %t : tensor<?xf32>
}
