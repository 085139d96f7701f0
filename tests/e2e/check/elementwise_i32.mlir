// Integer arithmetic on i32 tensors the compiler cannot fold.
func.func @add() {
  %a = util.unfoldable_constant dense<[1, -2, 3, 2147483647]> : tensor<4xi32>
  %b = util.unfoldable_constant dense<[10, 20, -30, 1]> : tensor<4xi32>
  %0 = arith.addi %a, %b : tensor<4xi32>
  check.expect_eq_const(%0, dense<[11, 18, -27, -2147483648]> : tensor<4xi32>) : tensor<4xi32>
  return
}

func.func @mul_sub() {
  %a = util.unfoldable_constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %b = util.unfoldable_constant dense<7> : tensor<2x2xi32>
  %0 = arith.muli %a, %b : tensor<2x2xi32>
  %1 = arith.subi %0, %a : tensor<2x2xi32>
  check.expect_eq_const(%1, dense<[[6, 12], [18, 24]]> : tensor<2x2xi32>) : tensor<2x2xi32>
  return
}

func.func @div_rem() {
  %a = util.unfoldable_constant dense<[7, -7, 9, -9]> : tensor<4xi32>
  %b = util.unfoldable_constant dense<[2, 2, -4, -4]> : tensor<4xi32>
  %q = arith.divsi %a, %b : tensor<4xi32>
  %r = arith.remsi %a, %b : tensor<4xi32>
  check.expect_eq_const(%q, dense<[3, -3, -2, 2]> : tensor<4xi32>) : tensor<4xi32>
  check.expect_eq_const(%r, dense<[1, -1, 1, -1]> : tensor<4xi32>) : tensor<4xi32>
  return
}

func.func @scalar_true() {
  %c = util.unfoldable_constant 1 : i32
  check.expect_true(%c) : i32
  %z = arith.constant 0 : i32
  check.expect_false(%z) : i32
  return
}
