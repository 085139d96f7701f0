// Checks how --convert-to-stream places tensors carried through host control flow across devices:
// a carried tensor lives on one device throughout (its initial value's for loops, the first
// region's yield for branches), and a value reaching a carried position from another device is
// transferred there at the yield.
// RUN: weir-opt --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s

// Checks a loop whose carried tensor starts on @device_a and is multiplied on @device_b: the body
// transfers it to b behind the carried timepoint, and the yield transfers the product back to a.
// CHECK-LABEL: func.func @pingpong(
// CHECK: %[[X:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input0", affinity = #hal.device.affinity<@device_a>}>
// CHECK: scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[X]], %[[ACC_READY:.*]] = %{{.*}}) -> (!stream.resource<external>, !stream.timepoint) {
// CHECK: %[[ON_B:.*]], %[[ON_B_READY:.*]] = "stream.async.transfer"(%[[ACC]], %{{.*}}, %[[ACC_READY]]) <{source_affinity = #hal.device.affinity<@device_a>, target_affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[M:.*]], %{{.*}} = "stream.resource.alloca"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[M_READY:.*]] = "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
// CHECK: %[[BACK:.*]], %[[BACK_READY:.*]] = "stream.async.transfer"(%[[M]], %{{.*}}, %[[M_READY]]) <{source_affinity = #hal.device.affinity<@device_b>, target_affinity = #hal.device.affinity<@device_a>}> : (!stream.resource<external>, index, !stream.timepoint) -> (!stream.resource<external>, !stream.timepoint)
// CHECK: scf.yield %[[BACK]], %[[BACK_READY]]
// CHECK: "stream.tensor.export"(%{{.*}}) <{encoding = tensor<4xf32>, affinity = #hal.device.affinity<@device_a>}>
func.func @pingpong(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, %n: index) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xf32>) {
    %b = flow.tensor.transfer %acc : tensor<4xf32> to #hal.device.promise<@device_b>
    %m = arith.mulf %b, %b : tensor<4xf32>
    scf.yield %m : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Checks a branch whose first region yields a value on @device_b: the result lives on b, so the
// other region's value (on @device_a) is transferred to b at its yield, and the dispatch after
// the branch runs on b.
// CHECK-LABEL: func.func @branch(
// CHECK: scf.if %{{.*}} -> (!stream.resource<external>, !stream.timepoint) {
// CHECK: "stream.async.transfer"(%{{.*}}) <{source_affinity = #hal.device.affinity<@device_a>, target_affinity = #hal.device.affinity<@device_b>}>
// CHECK: scf.yield
// CHECK: } else {
// CHECK: "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_a>}>
// CHECK: %[[MOVED:.*]], %[[MOVED_READY:.*]] = "stream.async.transfer"(%{{.*}}) <{source_affinity = #hal.device.affinity<@device_a>, target_affinity = #hal.device.affinity<@device_b>}> : (!stream.resource<external>, index, !stream.timepoint) -> (!stream.resource<external>, !stream.timepoint)
// CHECK: scf.yield %[[MOVED]], %[[MOVED_READY]]
// CHECK: "stream.cmd.execute"(%{{.*}}) <{affinity = #hal.device.affinity<@device_b>}>
func.func @branch(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}, %c: i1) -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %r = scf.if %c -> (tensor<4xf32>) {
    %b = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
    scf.yield %b : tensor<4xf32>
  } else {
    %n = arith.negf %x : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  %s = arith.mulf %r, %r : tensor<4xf32>
  return %s : tensor<4xf32>
}
