// A module whose function writes its result into storage the caller provides.
func.func @mul(%lhs: tensor<4096xf32>, %rhs: tensor<4096xf32>,
               %out: tensor<4096xf32> {iree.abi.output = 0 : index}) -> tensor<4096xf32> {
  %result = arith.mulf %lhs, %rhs : tensor<4096xf32>
  return %result : tensor<4096xf32>
}
