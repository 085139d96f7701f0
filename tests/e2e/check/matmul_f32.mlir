// A matmul with a bias and a ReLU, against values computed by hand.
func.func @mlp_layer() {
  %x = util.unfoldable_constant dense<[[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]]> : tensor<2x3xf32>
  %w = util.unfoldable_constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]]> : tensor<3x2xf32>
  %bias = util.unfoldable_constant dense<[[0.5, -4.0], [0.5, -4.0]]> : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x3xf32>, tensor<3x2xf32>) outs(%acc : tensor<2x2xf32>) -> tensor<2x2xf32>
  check.expect_almost_eq_const(%mm, dense<[[4.0, -1.0], [0.0, -1.0]]> : tensor<2x2xf32>) : tensor<2x2xf32>
  %biased = arith.addf %mm, %bias : tensor<2x2xf32>
  %zeros = arith.constant dense<0.0> : tensor<2x2xf32>
  %relu = arith.maximumf %biased, %zeros : tensor<2x2xf32>
  check.expect_almost_eq_const(%relu, dense<[[4.5, 0.0], [0.5, 0.0]]> : tensor<2x2xf32>) : tensor<2x2xf32>
  return
}

func.func @identity() {
  %x = util.unfoldable_constant dense<[[1.5, -2.0], [3.25, 4.0], [0.0, 1.0]]> : tensor<3x2xf32>
  %i = util.unfoldable_constant dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %mm = linalg.matmul ins(%x, %i : tensor<3x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<3x2xf32>) -> tensor<3x2xf32>
  check.expect_eq(%mm, %x) : tensor<3x2xf32>
  return
}
