// Scalar expect_true / expect_false on i32 values, beside tensor checks in the same function.
func.func @scalars() {
  %one = util.unfoldable_constant 1 : i32
  %neg = util.unfoldable_constant -5 : i32
  %zero = util.unfoldable_constant 0 : i32
  check.expect_true(%one) : i32
  check.expect_true(%neg) : i32
  check.expect_false(%zero) : i32
  %t = util.unfoldable_constant dense<[1, 1]> : tensor<2xi32>
  check.expect_all_true(%t) : tensor<2xi32>
  return
}
