// Row sums and maxima with linalg.reduce and a reducing linalg.generic.
func.func @row_sum_f32() {
  %x = util.unfoldable_constant dense<[[1.0, 2.0, 3.0], [-1.0, 0.5, 0.25]]> : tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.reduce ins(%x : tensor<2x3xf32>) outs(%init : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    }
  check.expect_almost_eq_const(%sum, dense<[6.0, -0.25]> : tensor<2xf32>) : tensor<2xf32>
  return
}

func.func @column_max_i32() {
  %x = util.unfoldable_constant dense<[[1, -5, 3], [4, -2, -7], [0, -9, 2]]> : tensor<3x3xi32>
  %low = arith.constant -2147483648 : i32
  %e = tensor.empty() : tensor<3xi32>
  %init = linalg.fill ins(%low : i32) outs(%e : tensor<3xi32>) -> tensor<3xi32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                         iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<3x3xi32>) outs(%init : tensor<3xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %0 = arith.maxsi %in, %acc : i32
    linalg.yield %0 : i32
  } -> tensor<3xi32>
  check.expect_eq_const(%max, dense<[4, -2, 3]> : tensor<3xi32>) : tensor<3xi32>
  return
}

func.func @total_i64() {
  %x = util.unfoldable_constant dense<[4000000000, 4000000000, -1, 1]> : tensor<4xi64>
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%zero : i64) outs(%e : tensor<i64>) -> tensor<i64>
  %sum = linalg.reduce ins(%x : tensor<4xi64>) outs(%init : tensor<i64>) dimensions = [0]
    (%in: i64, %acc: i64) {
      %0 = arith.addi %in, %acc : i64
      linalg.yield %0 : i64
    }
  check.expect_eq_const(%sum, dense<8000000000> : tensor<i64>) : tensor<i64>
  return
}
