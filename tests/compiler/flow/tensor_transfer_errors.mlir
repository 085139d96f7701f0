// Checks that the verifier rejects a flow.tensor.transfer whose target is not a device, or whose
// dynamic dims in braces are too many or too few for its type, at the op's own location. Every
// chunk fails, each is reported with its own location, and nothing is printed. The valid forms
// are in tensor_transfer.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// A target that is not a device.
func.func @bad_target(%x: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: tensor_transfer_errors.mlir:[[# @LINE + 1]]:3: error: 'flow.tensor.transfer' op flow.tensor.transfer target must be #hal.device.promise<@name>, got "device_b"
  %0 = flow.tensor.transfer %x : tensor<4xf32> to "device_b"
  return %0 : tensor<4xf32>
}

// -----

// More dynamic dims than the type has.
func.func @extra_dims(%x: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
  // ERR: tensor_transfer_errors.mlir:[[# @LINE + 1]]:3: error: 'flow.tensor.transfer' op flow.tensor.transfer of tensor<?x4xf32> needs 1 dynamic dimension(s) in {...}, got 2
  %0 = flow.tensor.transfer %x : tensor<?x4xf32>{%n, %n} to #hal.device.promise<@device_b>
  return %0 : tensor<?x4xf32>
}

// -----

// Fewer dynamic dims than the type has.
func.func @missing_dims(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // ERR: tensor_transfer_errors.mlir:[[# @LINE + 1]]:3: error: 'flow.tensor.transfer' op flow.tensor.transfer of tensor<?x?xf32> needs 2 dynamic dimension(s) in {...}, got 0
  %0 = flow.tensor.transfer %x : tensor<?x?xf32> to #hal.device.promise<@device_b>
  return %0 : tensor<?x?xf32>
}
