// Checks that --lower-checks rejects, at the check op, what the runtime's check module cannot
// take: scalars other than i32, and a check.* declaration that disagrees with the module's.
// The valid cases are in lower_checks.mlir.
// RUN: not weir-opt --split-input-file --lower-checks %s 2>&1 >/dev/null | filecheck %s

func.func @narrow(%x: i8) {
  // CHECK: lower_checks_errors.mlir:[[# @LINE + 1]]:3: error: 'check.expect_true' on i8 is not supported: the check module takes i32
  check.expect_true(%x) : i8
  return
}

// -----

func.func private @check.expect_eq(tensor<4xf32>, tensor<4xf32>)
func.func @clash(%a: tensor<4xf32>) {
  // CHECK: lower_checks_errors.mlir:[[# @LINE + 1]]:3: error: @check.expect_eq is defined in this module as (tensor<4xf32>, tensor<4xf32>) -> (); 'check.expect_eq' needs the check module's (!hal.buffer_view, !hal.buffer_view) -> ()
  check.expect_eq(%a, %a) : tensor<4xf32>
  return
}
