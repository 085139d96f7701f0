// A numerically stable softmax: subtract the row maximum, exponentiate, normalise.
func.func @softmax() {
  %x = util.unfoldable_constant dense<[[1.0, 2.0, 3.0, 4.0], [100.0, 100.0, 100.0, 100.0]]> : tensor<2x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %max = linalg.reduce ins(%x : tensor<2x4xf32>) outs(%minit : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.maximumf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %e24 = tensor.empty() : tensor<2x4xf32>
  %maxb = linalg.broadcast ins(%max : tensor<2xf32>) outs(%e24 : tensor<2x4xf32>) dimensions = [1]
  %shifted = arith.subf %x, %maxb : tensor<2x4xf32>
  %exp = math.exp %shifted : tensor<2x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.reduce ins(%exp : tensor<2x4xf32>) outs(%sinit : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %sumb = linalg.broadcast ins(%sum : tensor<2xf32>) outs(%e24 : tensor<2x4xf32>) dimensions = [1]
  %p = arith.divf %exp, %sumb : tensor<2x4xf32>
  check.expect_almost_eq_const(%p, dense<[[0.032058604, 0.087144315, 0.23688282, 0.64391426], [0.25, 0.25, 0.25, 0.25]]> : tensor<2x4xf32>, atol 1.0e-6) : tensor<2x4xf32>
  return
}
