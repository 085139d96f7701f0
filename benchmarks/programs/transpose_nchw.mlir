// An NHWC feature map (1 x 112 x 112 x 64) handed back as NCHW: a layout change on its own.
func.func @transpose_nchw(%a: tensor<1x112x112x64xf32>) -> tensor<1x64x112x112xf32> {
  %init = tensor.empty() : tensor<1x64x112x112xf32>
  %0 = linalg.transpose ins(%a : tensor<1x112x112x64xf32>) outs(%init : tensor<1x64x112x112xf32>) permutation = [0, 3, 1, 2]
  return %0 : tensor<1x64x112x112xf32>
}
