// A test module: every public function with no arguments and no results is a test, and the
// check ops in it say what must hold. `util.unfoldable_constant` keeps the compiler from
// computing the answers itself, so the ops really run on the device.
// weir-compile tests.mlir -o tests.wvm && weir-check-module --module=tests.wvm --device=local-task

func.func @softmax_of_rows() {
  %x = util.unfoldable_constant dense<[[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]> : tensor<2x3xf32>
  %e = math.exp %x : tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.reduce ins(%e : tensor<2x3xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  %empty2 = tensor.empty() : tensor<2x3xf32>
  %sums = linalg.broadcast ins(%sum : tensor<2xf32>) outs(%empty2 : tensor<2x3xf32>) dimensions = [1]
  %p = arith.divf %e, %sums : tensor<2x3xf32>
  check.expect_almost_eq_const(%p, dense<[[0.09003057, 0.24472847, 0.66524096],
                                          [0.33333334, 0.33333334, 0.33333334]]> : tensor<2x3xf32>,
                               atol 1.0e-6) : tensor<2x3xf32>
  return
}

func.func @integer_matmul_is_exact() {
  %a = util.unfoldable_constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<2x2xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%empty : tensor<2x2xi32>) -> tensor<2x2xi32>
  %sq = linalg.matmul ins(%a, %a : tensor<2x2xi32>, tensor<2x2xi32>) outs(%acc : tensor<2x2xi32>) -> tensor<2x2xi32>
  check.expect_eq_const(%sq, dense<[[7, 10], [15, 22]]> : tensor<2x2xi32>) : tensor<2x2xi32>
  return
}
