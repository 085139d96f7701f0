// Checks that a linalg convolution or pooling op whose operand shapes or
// window attributes disagree is rejected at the op's own location, naming the sizes. Every chunk
// fails, each is reported with its own location, and nothing is printed. The valid forms are in
// conv_pool.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// Input and filter channels differ.
func.func @channels(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x3x5xf32>, %o: tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_nhwc_hwcf' op channel count differs: input 4, filter 3
  %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x8x8x4xf32>, tensor<3x3x3x5xf32>) outs(%o : tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32>
  return %0 : tensor<1x6x6x5xf32>
}

// -----

// Input and output batches differ.
func.func @batch(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x5xf32>, %o: tensor<2x6x6x5xf32>) -> tensor<2x6x6x5xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_nhwc_hwcf' op batch size differs: input 1, output 2
  %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x8x8x4xf32>, tensor<3x3x4x5xf32>) outs(%o : tensor<2x6x6x5xf32>) -> tensor<2x6x6x5xf32>
  return %0 : tensor<2x6x6x5xf32>
}

// -----

// The output has more channels than the filter has filters.
func.func @filters(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x5xf32>, %o: tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_nhwc_hwcf' op filter count differs: filter 5, output 6
  %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x8x8x4xf32>, tensor<3x3x4x5xf32>) outs(%o : tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

// An output row past what stride 2 and dilation 2 can read (xDSL accepts it; MLIR accepts an
// output short of it, whose windows leave the input's last rows unread).
func.func @spatial(%x: tensor<1x11x8x4xf32>, %w: tensor<3x3x4x5xf32>, %o: tensor<1x5x6x5xf32>) -> tensor<1x5x6x5xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_nhwc_hwcf' op output H size 5 should be at most 4: (input 11 - dilation 2 * (filter 3 - 1) - 1) / stride 2 + 1
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%x, %w : tensor<1x11x8x4xf32>, tensor<3x3x4x5xf32>) outs(%o : tensor<1x5x6x5xf32>) -> tensor<1x5x6x5xf32>
  return %0 : tensor<1x5x6x5xf32>
}

// -----

// A dilated filter wider than the input.
func.func @too_small(%x: tensor<1x8x4x4xf32>, %w: tensor<3x3x4x5xf32>, %o: tensor<1x6x1x5xf32>) -> tensor<1x6x1x5xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_nhwc_hwcf' op input W size 4 is smaller than the W extent 5 of the dilated filter
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x4x4xf32>, tensor<3x3x4x5xf32>) outs(%o : tensor<1x6x1x5xf32>) -> tensor<1x6x1x5xf32>
  return %0 : tensor<1x6x1x5xf32>
}

// -----

// A zero stride.
func.func @zero_stride(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x5xf32>, %o: tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_nhwc_hwcf' op strides must be two integers >= 1 (H, W), got dense<[0, 1]> : tensor<2xi64>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<[0, 1]> : tensor<2xi64>} ins(%x, %w : tensor<1x8x8x4xf32>, tensor<3x3x4x5xf32>) outs(%o : tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32>
  return %0 : tensor<1x6x6x5xf32>
}

// -----

// Three dilations for two spatial dimensions.
func.func @dilations_length(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x5xf32>, %o: tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_nhwc_hwcf' op dilations must be two integers >= 1 (H, W), got dense<1> : tensor<3xi64>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x8x4xf32>, tensor<3x3x4x5xf32>) outs(%o : tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32>
  return %0 : tensor<1x6x6x5xf32>
}

// -----

// A filter of rank 3.
func.func @filter_rank(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4xf32>, %o: tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_nhwc_hwcf' op filter must be a rank-4 HWCF tensor, got tensor<3x3x4xf32>
  %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x8x8x4xf32>, tensor<3x3x4xf32>) outs(%o : tensor<1x6x6x5xf32>) -> tensor<1x6x6x5xf32>
  return %0 : tensor<1x6x6x5xf32>
}

// -----

// Pooling: input and output channels differ.
func.func @pool_channels(%x: tensor<1x4x8x8xf32>, %o: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %win = tensor.empty() : tensor<2x2xf32>
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.pooling_nchw_max' op channel count differs: input 4, output 3
  %0 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x4x8x8xf32>, tensor<2x2xf32>) outs(%o : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// Pooling: the output width ignores the stride.
func.func @pool_spatial(%x: tensor<1x4x8x8xf32>, %o: tensor<1x4x4x7xf32>) -> tensor<1x4x4x7xf32> {
  %win = tensor.empty() : tensor<2x2xf32>
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.pooling_nchw_max' op output W size 7 should be at most 4: (input 8 - dilation 1 * (window 2 - 1) - 1) / stride 2 + 1
  %0 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x4x8x8xf32>, tensor<2x2xf32>) outs(%o : tensor<1x4x4x7xf32>) -> tensor<1x4x4x7xf32>
  return %0 : tensor<1x4x4x7xf32>
}

// -----

// conv_2d_nchw_fchw: the filter's channel dimension (its second) disagrees with the input's.
func.func @nchw_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<5x3x3x3xf32>, %o: tensor<1x5x6x6xf32>) -> tensor<1x5x6x6xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_nchw_fchw' op channel count differs: input 4, filter 3
  %0 = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x4x8x8xf32>, tensor<5x3x3x3xf32>) outs(%o : tensor<1x5x6x6xf32>) -> tensor<1x5x6x6xf32>
  return %0 : tensor<1x5x6x6xf32>
}

// -----

// Depthwise: the output has other channels than the input.
func.func @depthwise_channels(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4xf32>, %o: tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.depthwise_conv_2d_nhwc_hwc' op channel count differs: input 4, filter 4, output 8
  %0 = linalg.depthwise_conv_2d_nhwc_hwc ins(%x, %w : tensor<1x8x8x4xf32>, tensor<3x3x4xf32>) outs(%o : tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
  return %0 : tensor<1x6x6x8xf32>
}

// -----

// Depthwise: a 4-D filter.
func.func @depthwise_rank(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x1xf32>, %o: tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32> {
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.depthwise_conv_2d_nhwc_hwc' op filter must be a rank-3 HWC tensor, got tensor<3x3x4x1xf32>
  %0 = linalg.depthwise_conv_2d_nhwc_hwc ins(%x, %w : tensor<1x8x8x4xf32>, tensor<3x3x4x1xf32>) outs(%o : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}

// -----

// NHWC sum pooling: the output height ignores the dilation.
func.func @nhwc_pool_spatial(%x: tensor<1x9x9x4xf32>, %o: tensor<1x7x7x4xf32>) -> tensor<1x7x7x4xf32> {
  %win = tensor.empty() : tensor<3x3xf32>
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.pooling_nhwc_sum' op output H size 7 should be at most 5: (input 9 - dilation 2 * (window 3 - 1) - 1) / stride 1 + 1
  %0 = linalg.pooling_nhwc_sum {dilations = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x9x9x4xf32>, tensor<3x3xf32>) outs(%o : tensor<1x7x7x4xf32>) -> tensor<1x7x7x4xf32>
  return %0 : tensor<1x7x7x4xf32>
}

// -----

// NHWC max pooling: channels differ between input and output.
func.func @nhwc_pool_channels(%x: tensor<1x8x8x4xf32>, %o: tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32> {
  %win = tensor.empty() : tensor<2x2xf32>
  // ERR: conv_pool_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.pooling_nhwc_max' op channel count differs: input 4, output 3
  %0 = linalg.pooling_nhwc_max {strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x8x8x4xf32>, tensor<2x2xf32>) outs(%o : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}
