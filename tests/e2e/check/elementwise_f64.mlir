// f64 keeps precision f32 would lose (1e15 + 1 is exact in f64, not in f32).
func.func @precise() {
  %a = util.unfoldable_constant dense<[1.0, 1.0e15, 0.1]> : tensor<3xf64>
  %b = util.unfoldable_constant dense<[1.0e-15, 1.0, 0.2]> : tensor<3xf64>
  %0 = arith.addf %a, %b : tensor<3xf64>
  %1 = arith.subf %0, %a : tensor<3xf64>
  check.expect_almost_eq_const(%1, dense<[1.1102230246251565e-15, 1.0, 0.2]> : tensor<3xf64>, atol 1.0e-30, rtol 1.0e-15) : tensor<3xf64>
  return
}

func.func @sqrt_div() {
  %a = util.unfoldable_constant dense<[2.0, 9.0, 1.0e300]> : tensor<3xf64>
  %0 = math.sqrt %a : tensor<3xf64>
  %1 = arith.mulf %0, %0 : tensor<3xf64>
  %2 = arith.divf %1, %a : tensor<3xf64>
  check.expect_almost_eq_const(%0, dense<[1.4142135623730951, 3.0, 1.0e150]> : tensor<3xf64>, atol 0.0, rtol 1.0e-15) : tensor<3xf64>
  check.expect_almost_eq_const(%2, dense<1.0> : tensor<3xf64>, atol 1.0e-15) : tensor<3xf64>
  return
}
