// i16 bitwise ops and a sign extension to i32.
func.func @bitwise() {
  %a = util.unfoldable_constant dense<[0x0F0F, -1, 0x1234, 0]> : tensor<4xi16>
  %b = util.unfoldable_constant dense<[0x00FF, 0x7FFF, 0x00F0, -1]> : tensor<4xi16>
  %and = arith.andi %a, %b : tensor<4xi16>
  %or = arith.ori %a, %b : tensor<4xi16>
  %xor = arith.xori %a, %b : tensor<4xi16>
  check.expect_eq_const(%and, dense<[0x000F, 0x7FFF, 0x0030, 0]> : tensor<4xi16>) : tensor<4xi16>
  check.expect_eq_const(%or, dense<[0x0FFF, -1, 0x12F4, -1]> : tensor<4xi16>) : tensor<4xi16>
  check.expect_eq_const(%xor, dense<[0x0FF0, -32768, 0x12C4, -1]> : tensor<4xi16>) : tensor<4xi16>
  return
}

func.func @mul_extend() {
  %a = util.unfoldable_constant dense<[300, -300, 32767, 2]> : tensor<4xi16>
  %0 = arith.muli %a, %a : tensor<4xi16>
  check.expect_eq_const(%0, dense<[24464, 24464, 1, 4]> : tensor<4xi16>) : tensor<4xi16>
  %e = tensor.empty() : tensor<4xi32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xi16>) outs(%e : tensor<4xi32>) {
  ^bb0(%x: i16, %o: i32):
    %y = arith.extsi %x : i16 to i32
    linalg.yield %y : i32
  } -> tensor<4xi32>
  %1 = arith.muli %w, %w : tensor<4xi32>
  check.expect_eq_const(%1, dense<[90000, 90000, 1073676289, 4]> : tensor<4xi32>) : tensor<4xi32>
  return
}
