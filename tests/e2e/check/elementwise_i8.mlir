// i8 arithmetic wraps around at 8 bits; min/max and shifts keep the sign.
func.func @add_wraps() {
  %a = util.unfoldable_constant dense<[100, -100, 127, -128]> : tensor<4xi8>
  %b = util.unfoldable_constant dense<[100, -100, 1, -1]> : tensor<4xi8>
  %0 = arith.addi %a, %b : tensor<4xi8>
  check.expect_eq_const(%0, dense<[-56, 56, -128, 127]> : tensor<4xi8>) : tensor<4xi8>
  return
}

func.func @min_max() {
  %a = util.unfoldable_constant dense<[-5, 7, 0, -128]> : tensor<4xi8>
  %b = util.unfoldable_constant dense<[3, -7, 0, 127]> : tensor<4xi8>
  %mx = arith.maxsi %a, %b : tensor<4xi8>
  %mn = arith.minsi %a, %b : tensor<4xi8>
  check.expect_eq_const(%mx, dense<[3, 7, 0, 127]> : tensor<4xi8>) : tensor<4xi8>
  check.expect_eq_const(%mn, dense<[-5, -7, 0, -128]> : tensor<4xi8>) : tensor<4xi8>
  return
}

func.func @shifts() {
  %a = util.unfoldable_constant dense<[-64, 64, 3, -1]> : tensor<4xi8>
  %s = util.unfoldable_constant dense<[2, 1, 5, 7]> : tensor<4xi8>
  %r = arith.shrsi %a, %s : tensor<4xi8>
  %l = arith.shli %a, %s : tensor<4xi8>
  check.expect_eq_const(%r, dense<[-16, 32, 0, -1]> : tensor<4xi8>) : tensor<4xi8>
  check.expect_eq_const(%l, dense<[0, -128, 96, -128]> : tensor<4xi8>) : tensor<4xi8>
  return
}
