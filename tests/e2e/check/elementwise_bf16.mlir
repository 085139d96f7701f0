// bf16 keeps f32's range with 8 bits of mantissa: truncation rounds, extension is exact.
func.func @round_trip() {
  %a = util.unfoldable_constant dense<[1.0, 3.0e38, 1.00390625, -0.5]> : tensor<4xf32>
  %eh = tensor.empty() : tensor<4xbf16>
  %h = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%eh : tensor<4xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %y = arith.truncf %x : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<4xbf16>
  %ew = tensor.empty() : tensor<4xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%h : tensor<4xbf16>) outs(%ew : tensor<4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %y = arith.extf %x : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  check.expect_almost_eq_const(%w, dense<[1.0, 3.0e38, 1.0, -0.5]> : tensor<4xf32>, atol 0.0, rtol 4.0e-3) : tensor<4xf32>
  return
}

func.func @arith() {
  %a = util.unfoldable_constant dense<[1.5, -2.0, 256.0, 0.25]> : tensor<4xbf16>
  %b = util.unfoldable_constant dense<[2.0, 0.5, 1.0, 4.0]> : tensor<4xbf16>
  %0 = arith.mulf %a, %b : tensor<4xbf16>
  %1 = arith.addf %0, %a : tensor<4xbf16>
  check.expect_almost_eq_const(%1, dense<[4.5, -3.0, 512.0, 1.25]> : tensor<4xbf16>, atol 1.0e-2) : tensor<4xbf16>
  return
}
