// Checks that --materialize-target-devices rejects an affinity naming a device that no
// --iree-hal-target-device declares, on an argument, a result, a flow.tensor.transfer target or
// an async.execute region's stream.affinity, at the op naming the device (the function for an
// argument or result), listing the declared devices. Every chunk fails, each is reported with its
// own location, and nothing is printed. The valid cases are in materialize_target_devices.mlir.
// RUN: not weir-opt --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// An undeclared device on an argument.
// ERR: materialize_target_devices_errors.mlir:[[# @LINE + 1]]:1: error: device @device_c is not a target device (declared: @device_a, @device_b); add --iree-hal-target-device=device_c=local[N]
func.func @undeclared_arg(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_c>}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// An undeclared device on a result.
// ERR: materialize_target_devices_errors.mlir:[[# @LINE + 1]]:1: error: device @nowhere is not a target device (declared: @device_a, @device_b); add --iree-hal-target-device=nowhere=local[N]
func.func @undeclared_result(%x: tensor<4xf32>) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@nowhere>}) {
  return %x : tensor<4xf32>
}

// -----

// An undeclared transfer target, in a function whose own affinities are declared.
func.func @undeclared_transfer(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) -> tensor<4xf32> {
  // ERR: materialize_target_devices_errors.mlir:[[# @LINE + 1]]:3: error: device @device_z is not a target device (declared: @device_a, @device_b); add --iree-hal-target-device=device_z=local[N]
  %0 = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_z>
  return %0 : tensor<4xf32>
}

// -----

// An undeclared device on an async.execute region's stream.affinity, at the region.
func.func @undeclared_region(%x: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: materialize_target_devices_errors.mlir:[[# @LINE + 1]]:3: error: device @device_q is not a target device (declared: @device_a, @device_b); add --iree-hal-target-device=device_q=local[N]
  %token, %value = async.execute -> !async.value<tensor<4xf32>>
      attributes {stream.affinity = #hal.device.promise<@device_q>} {
    %0 = arith.mulf %x, %x : tensor<4xf32>
    async.yield %0 : tensor<4xf32>
  }
  %r = async.await %value : !async.value<tensor<4xf32>>
  return %r : tensor<4xf32>
}
