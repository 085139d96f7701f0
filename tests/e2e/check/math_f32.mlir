// Transcendental functions agree with their mathematical values within a few ulps.
func.func @exp_log() {
  %x = util.unfoldable_constant dense<[0.0, 1.0, -1.0, 10.0]> : tensor<4xf32>
  %e = math.exp %x : tensor<4xf32>
  check.expect_almost_eq_const(%e, dense<[1.0, 2.7182817, 0.36787945, 22026.465]> : tensor<4xf32>, atol 1.0e-6, rtol 1.0e-6) : tensor<4xf32>
  %l = math.log %e : tensor<4xf32>
  check.expect_almost_eq(%l, %x, atol 1.0e-6, rtol 1.0e-6) : tensor<4xf32>
  return
}

func.func @tanh_sqrt() {
  %x = util.unfoldable_constant dense<[0.0, 0.5, -2.0, 20.0]> : tensor<4xf32>
  %t = math.tanh %x : tensor<4xf32>
  check.expect_almost_eq_const(%t, dense<[0.0, 0.46211716, -0.9640276, 1.0]> : tensor<4xf32>, atol 1.0e-6) : tensor<4xf32>
  %s = util.unfoldable_constant dense<[4.0, 2.0, 0.25, 1.0e6]> : tensor<4xf32>
  %r = math.sqrt %s : tensor<4xf32>
  check.expect_almost_eq_const(%r, dense<[2.0, 1.4142135, 0.5, 1000.0]> : tensor<4xf32>, atol 0.0, rtol 1.0e-7) : tensor<4xf32>
  return
}
