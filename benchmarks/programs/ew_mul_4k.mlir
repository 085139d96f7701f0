// Elementwise multiply of two 4096-element vectors: small enough that per-call overhead shows.
func.func @ew_mul_4k(%a: tensor<4096xf32>, %b: tensor<4096xf32>) -> tensor<4096xf32> {
  %0 = arith.mulf %a, %b : tensor<4096xf32>
  return %0 : tensor<4096xf32>
}
