// f16 arithmetic rounds to half precision; widening to f32 is exact.
func.func @half() {
  %a = util.unfoldable_constant dense<[1.0, 2048.0, 0.1, -3.5]> : tensor<4xf16>
  %b = util.unfoldable_constant dense<[0.5, 1.0, 0.2, 1.25]> : tensor<4xf16>
  %0 = arith.addf %a, %b : tensor<4xf16>
  %1 = arith.mulf %a, %b : tensor<4xf16>
  check.expect_almost_eq_const(%0, dense<[1.5, 2048.0, 0.3, -2.25]> : tensor<4xf16>, atol 1.0e-3) : tensor<4xf16>
  check.expect_almost_eq_const(%1, dense<[0.5, 2048.0, 0.02, -4.375]> : tensor<4xf16>, atol 1.0e-3) : tensor<4xf16>
  %e = tensor.empty() : tensor<4xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf16>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f16, %o: f32):
    %y = arith.extf %x : f16 to f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  check.expect_eq_const(%w, dense<[1.0, 2048.0, 0.0999755859375, -3.5]> : tensor<4xf32>) : tensor<4xf32>
  return
}
