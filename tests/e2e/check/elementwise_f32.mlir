// f32 arithmetic and a fused chain, against expected values within a tolerance.
func.func @arith() {
  %a = util.unfoldable_constant dense<[1.5, -2.0, 0.25, 1.0e10]> : tensor<4xf32>
  %b = util.unfoldable_constant dense<[0.5, 4.0, -0.125, 1.0e-10]> : tensor<4xf32>
  %sum = arith.addf %a, %b : tensor<4xf32>
  %prod = arith.mulf %a, %b : tensor<4xf32>
  %quo = arith.divf %a, %b : tensor<4xf32>
  check.expect_almost_eq_const(%sum, dense<[2.0, 2.0, 0.125, 1.0e10]> : tensor<4xf32>) : tensor<4xf32>
  check.expect_almost_eq_const(%prod, dense<[0.75, -8.0, -0.03125, 1.0]> : tensor<4xf32>) : tensor<4xf32>
  check.expect_almost_eq_const(%quo, dense<[3.0, -0.5, -2.0, 1.0e20]> : tensor<4xf32>, atol 0.0, rtol 1.0e-6) : tensor<4xf32>
  return
}

func.func @chain() {
  %x = util.unfoldable_constant dense<[[0.0, 1.0], [-1.0, 2.0]]> : tensor<2x2xf32>
  %0 = math.absf %x : tensor<2x2xf32>
  %1 = arith.mulf %0, %x : tensor<2x2xf32>
  %2 = arith.subf %1, %x : tensor<2x2xf32>
  %3 = arith.negf %2 : tensor<2x2xf32>
  check.expect_almost_eq_const(%3, dense<[[0.0, 0.0], [0.0, -2.0]]> : tensor<2x2xf32>) : tensor<2x2xf32>
  return
}
