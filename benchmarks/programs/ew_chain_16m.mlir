// exp(abs(a) * b + a) over 16M floats: four elementwise ops that fuse into one dispatch, so the
// time is one pass over 192 MiB of memory.
func.func @ew_chain_16m(%a: tensor<16777216xf32>, %b: tensor<16777216xf32>) -> tensor<16777216xf32> {
  %0 = math.absf %a : tensor<16777216xf32>
  %1 = arith.mulf %0, %b : tensor<16777216xf32>
  %2 = arith.addf %1, %a : tensor<16777216xf32>
  %3 = math.exp %2 : tensor<16777216xf32>
  return %3 : tensor<16777216xf32>
}
