// Splat constants the compiler may not fold, in every element type, checked against folded ones.
func.func @splats() {
  %a = util.unfoldable_constant dense<-7> : tensor<3xi8>
  %b = util.unfoldable_constant dense<-300> : tensor<3xi16>
  %c = util.unfoldable_constant dense<70000> : tensor<3xi32>
  %d = util.unfoldable_constant dense<-5000000000> : tensor<3xi64>
  %e = util.unfoldable_constant dense<0.5> : tensor<3xf16>
  %f = util.unfoldable_constant dense<-1.5> : tensor<3xbf16>
  %g = util.unfoldable_constant dense<3.25> : tensor<3xf32>
  %h = util.unfoldable_constant dense<0.1> : tensor<3xf64>
  check.expect_eq_const(%a, dense<-7> : tensor<3xi8>) : tensor<3xi8>
  check.expect_eq_const(%b, dense<-300> : tensor<3xi16>) : tensor<3xi16>
  check.expect_eq_const(%c, dense<70000> : tensor<3xi32>) : tensor<3xi32>
  check.expect_eq_const(%d, dense<-5000000000> : tensor<3xi64>) : tensor<3xi64>
  check.expect_eq_const(%e, dense<0.5> : tensor<3xf16>) : tensor<3xf16>
  check.expect_eq_const(%f, dense<-1.5> : tensor<3xbf16>) : tensor<3xbf16>
  check.expect_eq_const(%g, dense<3.25> : tensor<3xf32>) : tensor<3xf32>
  check.expect_eq_const(%h, dense<0.1> : tensor<3xf64>) : tensor<3xf64>
  return
}

func.func @splat_in_dispatch() {
  %x = util.unfoldable_constant dense<2.0> : tensor<8xf32>
  %y = util.unfoldable_constant dense<0.25> : tensor<8xf32>
  %0 = arith.mulf %x, %y : tensor<8xf32>
  %1 = arith.addf %0, %x : tensor<8xf32>
  check.expect_eq_const(%1, dense<2.5> : tensor<8xf32>) : tensor<8xf32>
  return
}
