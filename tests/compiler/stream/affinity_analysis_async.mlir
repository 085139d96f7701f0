// Checks that an async.execute region's `stream.affinity` places its work: every allocation and
// execute in it runs on the region's device, an operand living on another device is transferred
// there behind the region's dependencies, and a region without an affinity follows its data.
// RUN: weir-opt --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s

// Checks two branches on two devices joined on device_a: branch b's execute is on device_b, and
// its result moves back to device_a for the join.
// CHECK-LABEL: func.func @two_devices(
// CHECK: %[[A_DONE:.*]] = "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// CHECK: "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[B_DONE:.*]] = "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[MOVED:.*]], %[[MOVED_READY:.*]] = "stream.async.transfer"(%{{.*}}, %{{.*}}, %{{.*}}) <{source_affinity = #hal.device.affinity<@device_b>, target_affinity = #hal.device.affinity<@device_a>}>
// CHECK: "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// CHECK-NEXT: "stream.cmd.dispatch"(%{{.*}}, %[[MOVED]], %{{.*}})
func.func @two_devices(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %ta, %a = async.execute -> !async.value<tensor<4xf32>> attributes {stream.affinity = #hal.device.promise<@device_a>} {
    %s = arith.mulf %x, %x : tensor<4xf32>
    async.yield %s : tensor<4xf32>
  }
  %tb, %b = async.execute -> !async.value<tensor<4xf32>> attributes {stream.affinity = #hal.device.promise<@device_b>} {
    %t = arith.addf %y, %y : tensor<4xf32>
    async.yield %t : tensor<4xf32>
  }
  %tj, %j = async.execute (%a as %av: !async.value<tensor<4xf32>>, %b as %bv: !async.value<tensor<4xf32>>) -> !async.value<tensor<4xf32>> attributes {stream.affinity = #hal.device.promise<@device_a>} {
    %u = arith.addf %av, %bv : tensor<4xf32>
    async.yield %u : tensor<4xf32>
  }
  %r = async.await %j : !async.value<tensor<4xf32>>
  return %r : tensor<4xf32>
}

// -----

// Checks that a region without an affinity runs where its first operand lives (device_b here),
// like any dispatch.
// CHECK-LABEL: func.func @follows_data(
// CHECK: "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// CHECK: "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
func.func @follows_data(%x: tensor<4xf32>) -> tensor<4xf32> {
  %on_b = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  %t, %v = async.execute -> !async.value<tensor<4xf32>> attributes {stream.affinity = #hal.device.promise<@device_b>} {
    %s = arith.mulf %on_b, %on_b : tensor<4xf32>
    async.yield %s : tensor<4xf32>
  }
  %t2, %v2 = async.execute (%v as %w: !async.value<tensor<4xf32>>) -> !async.value<tensor<4xf32>> {
    %s2 = arith.addf %w, %w : tensor<4xf32>
    async.yield %s2 : tensor<4xf32>
  }
  %r = async.await %v2 : !async.value<tensor<4xf32>>
  return %r : tensor<4xf32>
}
