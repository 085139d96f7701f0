// A 3x3 convolution, 64 channels in and out, over a 56x56 image (NHWC input, HWCF filter),
// stride 1 and no padding.
func.func @conv2d(%input: tensor<1x56x56x64xf32>, %filter: tensor<3x3x64x64xf32>) -> tensor<1x54x54x64xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1x54x54x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x54x54x64xf32>) -> tensor<1x54x54x64xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%input, %filter : tensor<1x56x56x64xf32>, tensor<3x3x64x64xf32>)
      outs(%acc : tensor<1x54x54x64xf32>) -> tensor<1x54x54x64xf32>
  return %0 : tensor<1x54x54x64xf32>
}
