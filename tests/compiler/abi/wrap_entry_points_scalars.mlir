// The exact types of scalar arguments and results, which the calling convention does not carry,
// are recorded in weir.abi.scalar_types (`r` for tensors), only on functions that have a scalar.
// The errors are in wrap_entry_points_scalars_errors.mlir.
// RUN: weir-opt --split-input-file --wrap-entry-points %s | filecheck %s

// Checks the reflection of a function mixing tensors and scalars of several types; the scalars
// pass through the wrapper untouched.
// CHECK-LABEL: func.func @mixed(%0: !hal.buffer_view, %1: i8, %2: bf16) -> (index, !hal.buffer_view, i1)
// CHECK-SAME: weir.abi.scalar_types = "r,i8,bf16;index,r,i1"
// CHECK: func.call @_mixed(%{{.*}}, %1, %2)
func.func @mixed(%t: tensor<4xf32>, %a: i8, %b: bf16) -> (index, tensor<4xf32>, i1) {
  %c = arith.constant 4 : index
  %p = arith.constant true
  return %c, %t, %p : index, tensor<4xf32>, i1
}

// -----

// Checks that a function of tensors only carries no scalar reflection.
// CHECK-LABEL: func.func @tensors
// CHECK-NOT: weir.abi.scalar_types
func.func @tensors(%t: tensor<4xf32>) -> tensor<4xf32> {
  return %t : tensor<4xf32>
}
