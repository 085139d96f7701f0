// A test that fails on purpose: weir-check-module prints the values that differ and exits 1.
func.func @off_by_one() {
  %a = util.unfoldable_constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %0 = arith.addi %a, %a : tensor<4xi32>
  check.expect_eq_const(%0, dense<[2, 4, 7, 8]> : tensor<4xi32>) : tensor<4xi32>
  return
}
