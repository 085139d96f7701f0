// An integer matmul is exact.
func.func @small() {
  %a = util.unfoldable_constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>
  %b = util.unfoldable_constant dense<[[7, -8, 9, 0], [-1, 2, 3, 100000]]> : tensor<2x4xi32>
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<3x4xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<3x4xi32>) -> tensor<3x4xi32>
  %mm = linalg.matmul ins(%a, %b : tensor<3x2xi32>, tensor<2x4xi32>) outs(%acc : tensor<3x4xi32>) -> tensor<3x4xi32>
  check.expect_eq_const(%mm, dense<[[5, -4, 15, 200000], [17, -16, 39, 400000], [29, -28, 63, 600000]]> : tensor<3x4xi32>) : tensor<3x4xi32>
  return
}
