// A 3x3 depthwise convolution (one filter per channel, as in MobileNet's blocks) over a
// 112x112 image of 64 channels, NHWC, padded by one on each side so the output keeps its size,
// stride 1: a few FLOPs per byte, so memory bandwidth is its limit.
func.func @depthwise(%input: tensor<1x112x112x64xf32>, %filter: tensor<3x3x64xf32>) -> tensor<1x112x112x64xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %input low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%n: index, %h: index, %w: index, %c: index):
    tensor.yield %zero : f32
  } : tensor<1x112x112x64xf32> to tensor<1x114x114x64xf32>
  %init = tensor.empty() : tensor<1x112x112x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x112x112x64xf32>) -> tensor<1x112x112x64xf32>
  %0 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %filter : tensor<1x114x114x64xf32>, tensor<3x3x64xf32>)
      outs(%acc : tensor<1x112x112x64xf32>) -> tensor<1x112x112x64xf32>
  return %0 : tensor<1x112x112x64xf32>
}
