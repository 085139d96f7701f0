// Softmax over the rows of a 1024x1024 matrix, spelled out as linalg.generic ops: max-reduce,
// exp(x - max), sum-reduce, divide. (The same steps written with linalg.reduce/broadcast and
// elementwise ops on tensors trip an IREE 3.13 llvm-cpu code generation error.)
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @softmax_1024(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %lowest = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<1024xf32>
  %full = tensor.empty() : tensor<1024x1024xf32>
  %max_init = linalg.fill ins(%lowest : f32) outs(%rows : tensor<1024xf32>) -> tensor<1024xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<1024x1024xf32>) outs(%max_init : tensor<1024xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<1024xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<1024x1024xf32>, tensor<1024xf32>) outs(%full : tensor<1024x1024xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %s = arith.subf %in, %m : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  } -> tensor<1024x1024xf32>
  %sum_init = linalg.fill ins(%zero : f32) outs(%rows : tensor<1024xf32>) -> tensor<1024xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<1024x1024xf32>) outs(%sum_init : tensor<1024xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  %0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<1024x1024xf32>, tensor<1024xf32>) outs(%full : tensor<1024x1024xf32>) {
  ^bb0(%e: f32, %s: f32, %out: f32):
    %d = arith.divf %e, %s : f32
    linalg.yield %d : f32
  } -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}
