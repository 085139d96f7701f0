// Checks that the module records its default device (the first --iree-hal-target-device, or
// @__device_0 when none is declared) and that --wrap-entry-points carries each argument's and
// result's affinity onto hal.tensor.import / export / barrier and into the iree.abi.declaration
// reflection string. With no device declared only @__device_0 exists: the chunk without
// affinities still passes, and each chunk naming a device fails at its function while the others
// are still printed. An affinity naming an undeclared device with devices declared (on an
// argument, a result, a flow.tensor.transfer target or an async.execute region) is checked in
// materialize_target_devices_errors.mlir.
// RUN: weir-opt --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-entry-points %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-execution-model=async-external --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-entry-points %s | filecheck %s --check-prefix=ASYNC
// RUN: weir-opt --split-input-file --iree-hal-target-device=device_b=local --iree-hal-target-device=device_a=local[1] --materialize-target-devices %s | filecheck %s --check-prefix=B-FIRST
// RUN: not weir-opt --split-input-file --materialize-target-devices %s 2>/dev/null | filecheck %s --check-prefix=NONE
// RUN: not weir-opt --split-input-file --iree-hal-target-device=local --materialize-target-devices %s 2>/dev/null | filecheck %s --check-prefix=NONE
// RUN: not weir-opt --split-input-file --materialize-target-devices %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR-NONE
// RUN: not weir-opt --split-input-file --iree-hal-target-device=local --materialize-target-devices %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR-NONE

// No affinities at all: the module still names its default device, and nothing is placed.
// CHECK: builtin.module attributes {stream.affinity.default = #hal.device.affinity<@device_a>}
// CHECK-LABEL: func.func @plain(
// CHECK-SAME: iree.abi.declaration = "sync func @plain(%input0: tensor<4xf32>) -> (%output0: tensor<4xf32>)"
// CHECK: "hal.tensor.import"(%{{.*}}) <{name = "input0", operandSegmentSizes
// CHECK: "hal.tensor.export"(%{{.*}}) <{name = "output0"}>
// B-FIRST: builtin.module attributes {stream.affinity.default = #hal.device.affinity<@device_b>}
// NONE: builtin.module attributes {stream.affinity.default = #hal.device.affinity<@__device_0>}
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The seed program: the argument and the result are promised on @device_a.
// CHECK: builtin.module attributes {stream.affinity.default = #hal.device.affinity<@device_a>}
// CHECK-LABEL: func.func @multi_device_mul(
// CHECK-SAME: %[[ARG:[^:]*]]: !hal.buffer_view) -> !hal.buffer_view
// CHECK-SAME: iree.abi.declaration = "sync func @multi_device_mul(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"
// CHECK: %[[IN:.*]] = "hal.tensor.import"(%[[ARG]]) <{name = "input0", affinity = #hal.device.promise<@device_a>,
// CHECK: %[[R:.*]] = func.call @_multi_device_mul(%[[IN]])
// CHECK: %[[OUT:.*]] = "hal.tensor.export"(%[[R]]) <{name = "output0", affinity = #hal.device.promise<@device_a>}>
// CHECK: func.return %[[OUT]]
// The body keeps its transfers; both name declared devices.
// CHECK: func.func private @_multi_device_mul(
// CHECK: flow.tensor.transfer %{{.*}} : tensor<4xf32> to #hal.device.promise<@device_b>
// CHECK: flow.tensor.transfer %{{.*}} : tensor<4xf32> to #hal.device.promise<@device_a>

// With async-external the barrier that signals the caller's fence is on the result's device.
// ASYNC-LABEL: func.func @multi_device_mul(
// ASYNC-SAME: %[[ARG:[^:]*]]: !hal.buffer_view, %[[WAIT:[^:]*]]: !hal.fence, %[[SIGNAL:[^:]*]]: !hal.fence)
// ASYNC-SAME: iree.abi.declaration = "async func @multi_device_mul(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})"
// ASYNC: %[[IN:.*]] = "hal.tensor.import"(%[[ARG]], %[[WAIT]]) <{name = "input0", affinity = #hal.device.promise<@device_a>,
// ASYNC: %[[R:.*]] = func.call @_multi_device_mul(%[[IN]])
// ASYNC: %[[READY:.*]] = "hal.tensor.barrier"(%[[R]], %[[SIGNAL]]) <{affinity = #hal.device.promise<@device_a>,
// ASYNC: "hal.tensor.export"(%[[READY]]) <{name = "output0", affinity = #hal.device.promise<@device_a>}>
// With no device declared only the default @__device_0 exists, so the seed's first affinity is an
// error on its function.
// ERR-NONE: materialize_target_devices.mlir:[[# @LINE + 1]]:1: error: device @device_a is not a target device (declared: @__device_0); add --iree-hal-target-device=device_a=local[N]
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

// Each argument and result keeps its own affinity (an #hal.device.affinity is accepted too); one
// without an affinity gets none.
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: %[[A:[^:]*]]: !hal.buffer_view, %[[B:[^:]*]]: !hal.buffer_view, %[[C:[^:]*]]: !hal.buffer_view) -> (!hal.buffer_view, !hal.buffer_view)
// CHECK-SAME: iree.abi.declaration = "sync func @mixed(%input0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, %input1: tensor<4xf32> {iree.abi.affinity = #hal.device.affinity<@device_b>}, %input2: tensor<4xf32>) -> (%output0: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, %output1: tensor<4xf32>)"
// CHECK: "hal.tensor.import"(%[[A]]) <{name = "input0", affinity = #hal.device.promise<@device_a>,
// CHECK: "hal.tensor.import"(%[[B]]) <{name = "input1", affinity = #hal.device.affinity<@device_b>,
// CHECK: "hal.tensor.import"(%[[C]]) <{name = "input2", operandSegmentSizes
// CHECK: "hal.tensor.export"(%{{.*}}) <{name = "output0", affinity = #hal.device.promise<@device_b>}>
// CHECK: "hal.tensor.export"(%{{.*}}) <{name = "output1"}>
// With async-external one barrier covers both results, on the first placed result's device.
// ASYNC-LABEL: func.func @mixed(
// ASYNC: "hal.tensor.barrier"(%{{[^,]*}}, %{{[^,]*}}, %{{[^)]*}}) <{affinity = #hal.device.promise<@device_b>,
// ASYNC-NOT: "hal.tensor.barrier"
// ASYNC: "hal.tensor.export"(%{{.*}}) <{name = "output0", affinity = #hal.device.promise<@device_b>}>
// ASYNC: "hal.tensor.export"(%{{.*}}) <{name = "output1"}>
// With no device declared this chunk fails too, at its function, after the seed's error.
// ERR-NONE: materialize_target_devices.mlir:[[# @LINE + 1]]:1: error: device @device_a is not a target device (declared: @__device_0); add --iree-hal-target-device=device_a=local[N]
func.func @mixed(%a: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                 %b: tensor<4xf32> {iree.abi.affinity = #hal.device.affinity<@device_b>},
                 %c: tensor<4xf32>)
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}, tensor<4xf32>) {
  %0 = arith.mulf %a, %b : tensor<4xf32>
  %1 = arith.addf %a, %c : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}


// -----

// An async.execute region placed on a declared device keeps its stream.affinity. With no device
// declared (`weir-compile` without --iree-hal-target-device) the region's device is an error at
// the region, like a transfer to an undeclared device.
// CHECK-LABEL: func.func private @_placed_region(
// CHECK: async.execute
// CHECK-SAME: stream.affinity = #hal.device.promise<@device_b>
func.func @placed_region(%x: tensor<4xf32>) -> tensor<4xf32> {
  // ERR-NONE: materialize_target_devices.mlir:[[# @LINE + 1]]:3: error: device @device_b is not a target device (declared: @__device_0); add --iree-hal-target-device=device_b=local[N]
  %token, %value = async.execute -> !async.value<tensor<4xf32>>
      attributes {stream.affinity = #hal.device.promise<@device_b>} {
    %0 = arith.mulf %x, %x : tensor<4xf32>
    async.yield %0 : tensor<4xf32>
  }
  %r = async.await %value : !async.value<tensor<4xf32>>
  return %r : tensor<4xf32>
}
