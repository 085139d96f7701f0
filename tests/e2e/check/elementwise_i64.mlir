// i64 values beyond 32 bits, division and remainder, compare and select.
func.func @large() {
  %a = util.unfoldable_constant dense<[4294967296, -9223372036854775807, 123456789012, 7]> : tensor<4xi64>
  %b = util.unfoldable_constant dense<[4294967296, -1, 1000, -2]> : tensor<4xi64>
  %sum = arith.addi %a, %b : tensor<4xi64>
  %quo = arith.divsi %a, %b : tensor<4xi64>
  %rem = arith.remsi %a, %b : tensor<4xi64>
  check.expect_eq_const(%sum, dense<[8589934592, -9223372036854775808, 123456790012, 5]> : tensor<4xi64>) : tensor<4xi64>
  check.expect_eq_const(%quo, dense<[1, 9223372036854775807, 123456789, -3]> : tensor<4xi64>) : tensor<4xi64>
  check.expect_eq_const(%rem, dense<[0, 0, 12, 1]> : tensor<4xi64>) : tensor<4xi64>
  return
}

func.func @select_max() {
  %a = util.unfoldable_constant dense<[5, -5, 10000000000, 0]> : tensor<4xi64>
  %b = util.unfoldable_constant dense<[6, -6, 9999999999, 0]> : tensor<4xi64>
  %e = tensor.empty() : tensor<4xi64>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xi64>, tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%x: i64, %y: i64, %o: i64):
    %gt = arith.cmpi sgt, %x, %y : i64
    %r = arith.select %gt, %x, %y : i64
    linalg.yield %r : i64
  } -> tensor<4xi64>
  check.expect_eq_const(%0, dense<[6, -5, 10000000000, 0]> : tensor<4xi64>) : tensor<4xi64>
  %1 = arith.maxsi %a, %b : tensor<4xi64>
  check.expect_eq(%0, %1) : tensor<4xi64>
  return
}
