// Checks that flow.tensor.transfer prints in its custom form (source, type, dynamic dims in
// braces, `to` and the target device) and parses back unchanged, and that the verifier rejects a
// target that is not a device and a wrong number of dynamic dims at the op's own location.
// weir-opt stops at the first error, so the round trip reads only the valid cases (everything
// above the "Verifier errors" line) and each error RUN blanks the lines above its case, which
// keeps the line numbers of the file.
// RUN: sed '/^\/\/ Verifier errors/,$d' %s | weir-opt --split-input-file - | weir-opt --split-input-file - | filecheck %s
// RUN: sed '1,/^\/\/ BAD-TARGET$/s/.*//' %s | not weir-opt --split-input-file - 2>&1 | filecheck %s --check-prefix=ERR-TARGET
// RUN: sed '1,/^\/\/ EXTRA-DIMS$/s/.*//' %s | not weir-opt --split-input-file - 2>&1 | filecheck %s --check-prefix=ERR-EXTRA
// RUN: sed '1,/^\/\/ MISSING-DIMS$/s/.*//' %s | not weir-opt --split-input-file - 2>&1 | filecheck %s --check-prefix=ERR-MISSING

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

// Verifier errors (the round trip stops here).

// -----

// BAD-TARGET
func.func @bad_target(%x: tensor<4xf32>) -> tensor<4xf32> {
  // ERR-TARGET: <stdin>:[[# @LINE + 1]]:3: error: 'flow.tensor.transfer' op flow.tensor.transfer target must be #hal.device.promise<@name>, got "device_b"
  %0 = flow.tensor.transfer %x : tensor<4xf32> to "device_b"
  return %0 : tensor<4xf32>
}

// -----

// EXTRA-DIMS
func.func @extra_dims(%x: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
  // ERR-EXTRA: <stdin>:[[# @LINE + 1]]:3: error: 'flow.tensor.transfer' op flow.tensor.transfer of tensor<?x4xf32> needs 1 dynamic dimension(s) in {...}, got 2
  %0 = flow.tensor.transfer %x : tensor<?x4xf32>{%n, %n} to #hal.device.promise<@device_b>
  return %0 : tensor<?x4xf32>
}

// -----

// MISSING-DIMS
func.func @missing_dims(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // ERR-MISSING: <stdin>:[[# @LINE + 1]]:3: error: 'flow.tensor.transfer' op flow.tensor.transfer of tensor<?x?xf32> needs 2 dynamic dimension(s) in {...}, got 0
  %0 = flow.tensor.transfer %x : tensor<?x?xf32> to #hal.device.promise<@device_b>
  return %0 : tensor<?x?xf32>
}
