// Infinities and NaNs: expect_almost_eq treats NaN as equal to NaN, as IREE does.
func.func @overflow_to_inf() {
  %x = util.unfoldable_constant dense<[3.0e38, -3.0e38, 1.0]> : tensor<3xf32>
  %0 = arith.addf %x, %x : tensor<3xf32>
  check.expect_almost_eq_const(%0, dense<[0x7F800000, 0xFF800000, 2.0]> : tensor<3xf32>) : tensor<3xf32>
  return
}

func.func @nan_propagates() {
  %x = util.unfoldable_constant dense<[0.0, 1.0, 0x7F800000]> : tensor<3xf32>
  %y = util.unfoldable_constant dense<[0.0, 0.0, 0x7F800000]> : tensor<3xf32>
  %q = arith.divf %x, %y : tensor<3xf32>
  %d = arith.subf %x, %y : tensor<3xf32>
  check.expect_almost_eq_const(%q, dense<[0x7FC00000, 0x7F800000, 0x7FC00000]> : tensor<3xf32>) : tensor<3xf32>
  check.expect_almost_eq_const(%d, dense<[0.0, 1.0, 0x7FC00000]> : tensor<3xf32>) : tensor<3xf32>
  return
}
