// torch.index_select(t, 1, i), t: (3, 5) f32, i: (4,) int64, exported by weir.frontends.torch.export (torch-mlir)
#map = affine_map<(d0, d1) -> (d1)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @main(%arg0: tensor<3x5xf32>, %arg1: tensor<4xi64>) -> tensor<3x4xf32> {
    %0 = tensor.empty() : tensor<3x4xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<4xi64>) outs(%0 : tensor<3x4xf32>) {
    ^bb0(%in: i64, %out: f32):
      %2 = arith.index_cast %in : i64 to index
      %3 = linalg.index 0 : index
      %extracted = tensor.extract %arg0[%3, %2] : tensor<3x5xf32>
      linalg.yield %extracted : f32
    } -> tensor<3x4xf32>
    return %1 : tensor<3x4xf32>
  }
}
