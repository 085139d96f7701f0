// Transposes and broadcasts move elements without changing them.
func.func @transpose() {
  %x = util.unfoldable_constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %e = tensor.empty() : tensor<3x2xi32>
  %t = linalg.transpose ins(%x : tensor<2x3xi32>) outs(%e : tensor<3x2xi32>) permutation = [1, 0]
  check.expect_eq_const(%t, dense<[[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>) : tensor<3x2xi32>
  return
}

func.func @broadcast_add() {
  %row = util.unfoldable_constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %m = util.unfoldable_constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %b = linalg.broadcast ins(%row : tensor<3xf32>) outs(%e : tensor<2x3xf32>) dimensions = [0]
  %0 = arith.addf %m, %b : tensor<2x3xf32>
  check.expect_eq_const(%0, dense<[[11.0, 22.0, 33.0], [14.0, 25.0, 36.0]]> : tensor<2x3xf32>) : tensor<2x3xf32>
  return
}
