// torch.nn.Embedding(10, 4) on int64 indices of shape (2, 3), exported by weir.frontends.torch.export (torch-mlir)
#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @main(%arg0: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
    %c10 = arith.constant 10 : index
    %c0_i64 = arith.constant 0 : i64
    %cst = arith.constant dense_resource<torch_tensor_10_4_torch.float32> : tensor<10x4xf32>
    %0 = tensor.empty() : tensor<2x3x4xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x3xi64>) outs(%0 : tensor<2x3x4xf32>) {
    ^bb0(%in: i64, %out: f32):
      %2 = arith.index_cast %in : i64 to index
      %3 = linalg.index 2 : index
      %4 = arith.cmpi slt, %2, %c10 : index
      cf.assert %4, "index must be smaller than dim size"
      %5 = arith.cmpi sge, %in, %c0_i64 : i64
      cf.assert %5, "index must be larger or equal to 0"
      %extracted = tensor.extract %cst[%2, %3] : tensor<10x4xf32>
      linalg.yield %extracted : f32
    } -> tensor<2x3x4xf32>
    return %1 : tensor<2x3x4xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_10_4_torch.float32: "0x04000000851B90BF8A8093BFD64B80BE5D25DEBE1545593F8327313F6DCCA1BEC15F07C03801A53EF4B4A1BFFF30B33EBBC39D3E776FF53D936B9E3F8EF28E3F7C367DBEC223ADBF4614D9BF0410113F5D234B3F8B4D193F5B0DC7BFCAC6AEBE4E2FED3F420B5DBEA3173EBF820E103FE2ED843ED52232BE50C22DBFDB31703F254DFA3E3C039A3F8720AD3D2B9E99BFAED19CBB8DA004BF55089DBE025ECABF4A73DA3F"
    }
  }
#-}
