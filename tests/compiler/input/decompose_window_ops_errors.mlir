// Checks that the convolutions and poolings beyond the 2-D kernels' layouts are verified like the
// others (sizes named per letter, strides per spatial dimension), and that decompose-window-ops
// rejects one with a dynamic size at its own location. Every chunk fails and nothing is printed.
// RUN: not weir-opt --split-input-file --decompose-window-ops %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file --decompose-window-ops %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// A dynamic batch: the rewrite needs static shapes.
func.func @dynamic(%x: tensor<?x3x9xf32>, %w: tensor<4x3x3xf32>, %init: tensor<?x4x7xf32>) -> tensor<?x4x7xf32> {
  // ERR: decompose_window_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_1d_ncw_fcw' with dynamic sizes is not supported (only its static forms are rewritten onto the 2-D kernels), got tensor<?x3x9xf32>
  %0 = linalg.conv_1d_ncw_fcw ins(%x, %w : tensor<?x3x9xf32>, tensor<4x3x3xf32>) outs(%init : tensor<?x4x7xf32>) -> tensor<?x4x7xf32>
  return %0 : tensor<?x4x7xf32>
}

// -----

// Groups differ between input and filter.
func.func @groups(%x: tensor<1x2x3x5x5xf32>, %w: tensor<3x4x3x3x3xf32>, %init: tensor<1x2x4x3x3xf32>) -> tensor<1x2x4x3x3xf32> {
  // ERR: decompose_window_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_ngchw_gfchw' op group count differs: input 2, filter 3, output 2
  %0 = linalg.conv_2d_ngchw_gfchw ins(%x, %w : tensor<1x2x3x5x5xf32>, tensor<3x4x3x3x3xf32>) outs(%init : tensor<1x2x4x3x3xf32>) -> tensor<1x2x4x3x3xf32>
  return %0 : tensor<1x2x4x3x3xf32>
}

// -----

// A 3-D pooling takes three strides.
func.func @strides(%x: tensor<1x6x8x8x1xf32>, %init: tensor<1x4x8x8x1xf32>) -> tensor<1x4x8x8x1xf32> {
  %win = tensor.empty() : tensor<3x1x1xf32>
  // ERR: decompose_window_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.pooling_ndhwc_sum' op strides must be three integers >= 1 (D, H, W), got dense<1> : tensor<2xi64>
  %0 = linalg.pooling_ndhwc_sum {strides = dense<1> : tensor<2xi64>} ins(%x, %win : tensor<1x6x8x8x1xf32>, tensor<3x1x1xf32>) outs(%init : tensor<1x4x8x8x1xf32>) -> tensor<1x4x8x8x1xf32>
  return %0 : tensor<1x4x8x8x1xf32>
}

// -----

// The output depth reads past the input's, for this window and stride.
func.func @depth(%x: tensor<1x6x8x8x1xf32>, %init: tensor<1x5x8x8x1xf32>) -> tensor<1x5x8x8x1xf32> {
  %win = tensor.empty() : tensor<3x1x1xf32>
  // ERR: decompose_window_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.pooling_ndhwc_max' op output D size 5 should be at most 4: (input 6 - dilation 1 * (window 3 - 1) - 1) / stride 1 + 1
  %0 = linalg.pooling_ndhwc_max ins(%x, %win : tensor<1x6x8x8x1xf32>, tensor<3x1x1xf32>) outs(%init : tensor<1x5x8x8x1xf32>) -> tensor<1x5x8x8x1xf32>
  return %0 : tensor<1x5x8x8x1xf32>
}
