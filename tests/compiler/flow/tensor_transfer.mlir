// Checks that flow.tensor.transfer prints in its custom form (source, type, dynamic dims in
// braces, `to` and the target device) and parses back unchanged. The verifier's errors (a target
// that is not a device, a wrong number of dynamic dims) are checked in tensor_transfer_errors.mlir.
// RUN: weir-opt --split-input-file %s | weir-opt --split-input-file - | filecheck %s

// A static tensor: no braces, and the promise's device survives.
// CHECK-LABEL: func.func @static(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4xf32>)
// CHECK: %[[R:.*]] = flow.tensor.transfer %[[X]] : tensor<4xf32> to #hal.device.promise<@device_b>
// CHECK-NEXT: func.return %[[R]] : tensor<4xf32>
func.func @static(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = flow.tensor.transfer %x : tensor<4xf32> to #hal.device.promise<@device_b>
  return %0 : tensor<4xf32>
}

// -----

// Dynamic dims in order, an affinity target with queues, and a trailing attribute dictionary.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x4x?xf32>, %[[N:[^:]*]]: index, %[[M:[^:]*]]: index)
// CHECK: %[[A:.*]] = flow.tensor.transfer %[[X]] : tensor<?x4x?xf32>{%[[N]], %[[M]]} to #hal.device.promise<@device_b>
// CHECK-NEXT: %[[B:.*]] = flow.tensor.transfer %[[A]] : tensor<?x4x?xf32>{%[[M]], %[[N]]} to #hal.device.affinity<@device_a, [0, 1]> {note = "back"}
// CHECK-NEXT: func.return %[[B]] : tensor<?x4x?xf32>
func.func @dynamic(%x: tensor<?x4x?xf32>, %n: index, %m: index) -> tensor<?x4x?xf32> {
  %0 = flow.tensor.transfer %x : tensor<?x4x?xf32>{%n, %m} to #hal.device.promise<@device_b>
  %1 = flow.tensor.transfer %0 : tensor<?x4x?xf32>{%m, %n} to #hal.device.affinity<@device_a, [0, 1]> {note = "back"}
  return %1 : tensor<?x4x?xf32>
}

