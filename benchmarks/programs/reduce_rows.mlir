// Row sums of a 1024x1024 matrix: a reduction written as linalg.generic.
func.func @reduce_rows(%a: tensor<1024x1024xf32>) -> tensor<1024xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1024xf32>) -> tensor<1024xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<1024x1024xf32>) outs(%acc : tensor<1024xf32>) {
  ^bb0(%x: f32, %s: f32):
    %y = arith.addf %x, %s : f32
    linalg.yield %y : f32
  } -> tensor<1024xf32>
  return %0 : tensor<1024xf32>
}
