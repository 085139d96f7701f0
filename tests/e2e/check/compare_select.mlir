// Comparisons make i1 masks, checked with expect_all_true and used by select.
#id = affine_map<(d0) -> (d0)>
func.func @masks() {
  %a = util.unfoldable_constant dense<[1.0, -2.0, 3.0, 0.5]> : tensor<4xf32>
  %b = util.unfoldable_constant dense<[0.5, -3.0, 2.0, 0.25]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xi1>
  %gt = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xi1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %c = arith.cmpf ogt, %x, %y : f32
    linalg.yield %c : i1
  } -> tensor<4xi1>
  check.expect_all_true(%gt) : tensor<4xi1>
  %i = util.unfoldable_constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %j = util.unfoldable_constant dense<[1, 5, 3, 4]> : tensor<4xi32>
  %ne = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%i, %j : tensor<4xi32>, tensor<4xi32>) outs(%e : tensor<4xi1>) {
  ^bb0(%x: i32, %y: i32, %o: i1):
    %c = arith.cmpi ne, %x, %y : i32
    linalg.yield %c : i1
  } -> tensor<4xi1>
  check.expect_eq_const(%ne, dense<[false, true, false, false]> : tensor<4xi1>) : tensor<4xi1>
  return
}

func.func @relu() {
  %x = util.unfoldable_constant dense<[-1.0, 2.0, 0.0, -0.5]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %v, %zero : f32
    %r = arith.select %pos, %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  check.expect_eq_const(%0, dense<[0.0, 2.0, 0.0, 0.0]> : tensor<4xf32>) : tensor<4xf32>
  return
}

func.func @nonzero_ints() {
  %a = util.unfoldable_constant dense<[3, -1, 7]> : tensor<3xi32>
  check.expect_all_true(%a) : tensor<3xi32>
  %b = util.unfoldable_constant dense<[[1, 2], [-3, 4]]> : tensor<2x2xi8>
  check.expect_all_true(%b) : tensor<2x2xi8>
  return
}
