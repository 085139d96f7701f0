// Conversions between integer widths and between integers and floats, element by element.
func.func @int_float() {
  %i = util.unfoldable_constant dense<[-3, 0, 7, 1000000]> : tensor<4xi32>
  %e_f = tensor.empty() : tensor<4xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%i : tensor<4xi32>) outs(%e_f : tensor<4xf32>) {
  ^bb0(%x: i32, %o: f32):
    %y = arith.sitofp %x : i32 to f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  check.expect_eq_const(%f, dense<[-3.0, 0.0, 7.0, 1000000.0]> : tensor<4xf32>) : tensor<4xf32>
  %g = util.unfoldable_constant dense<[-3.7, 0.2, 7.9, 2.5]> : tensor<4xf32>
  %e_t = tensor.empty() : tensor<4xi32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%g : tensor<4xf32>) outs(%e_t : tensor<4xi32>) {
  ^bb0(%x: f32, %o: i32):
    %y = arith.fptosi %x : f32 to i32
    linalg.yield %y : i32
  } -> tensor<4xi32>
  check.expect_eq_const(%t, dense<[-3, 0, 7, 2]> : tensor<4xi32>) : tensor<4xi32>
  return
}

func.func @widths() {
  %a = util.unfoldable_constant dense<[-1, 200, 65535, 70000]> : tensor<4xi32>
  %e_n = tensor.empty() : tensor<4xi16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xi32>) outs(%e_n : tensor<4xi16>) {
  ^bb0(%x: i32, %o: i16):
    %y = arith.trunci %x : i32 to i16
    linalg.yield %y : i16
  } -> tensor<4xi16>
  check.expect_eq_const(%n, dense<[-1, 200, -1, 4464]> : tensor<4xi16>) : tensor<4xi16>
  %e_s = tensor.empty() : tensor<4xi64>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%n : tensor<4xi16>) outs(%e_s : tensor<4xi64>) {
  ^bb0(%x: i16, %o: i64):
    %y = arith.extsi %x : i16 to i64
    linalg.yield %y : i64
  } -> tensor<4xi64>
  check.expect_eq_const(%s, dense<[-1, 200, -1, 4464]> : tensor<4xi64>) : tensor<4xi64>
  %e_u = tensor.empty() : tensor<4xi64>
  %u = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%n : tensor<4xi16>) outs(%e_u : tensor<4xi64>) {
  ^bb0(%x: i16, %o: i64):
    %y = arith.extui %x : i16 to i64
    linalg.yield %y : i64
  } -> tensor<4xi64>
  check.expect_eq_const(%u, dense<[65535, 200, 65535, 4464]> : tensor<4xi64>) : tensor<4xi64>
  return
}

func.func @unsigned_to_float() {
  %a = util.unfoldable_constant dense<[-1, 0, 127, -128]> : tensor<4xi8>
  %e_f = tensor.empty() : tensor<4xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xi8>) outs(%e_f : tensor<4xf32>) {
  ^bb0(%x: i8, %o: f32):
    %y = arith.uitofp %x : i8 to f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  check.expect_eq_const(%f, dense<[255.0, 0.0, 127.0, 128.0]> : tensor<4xf32>) : tensor<4xf32>
  return
}
