// Checks that the linalg convolution and pooling ops pass the input phase's op check, and that
// an op without strides/dilations gets MLIR's default of 1 for both.
// RUN: weir-opt --split-input-file --check-supported-ops %s | filecheck %s

// Explicit strides and dilations are kept as written.
// CHECK-LABEL: func.func @conv_strided
// CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%x, %w : tensor<2x9x7x3xf32>, tensor<2x3x3x8xf32>) outs(%o : tensor<2x4x3x8xf32>)
func.func @conv_strided(%x: tensor<2x9x7x3xf32>, %w: tensor<2x3x3x8xf32>, %o: tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>} ins(%x, %w : tensor<2x9x7x3xf32>, tensor<2x3x3x8xf32>) outs(%o : tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
  return %0 : tensor<2x4x3x8xf32>
}

// -----

// No attribute dictionary: strides and dilations default to 1.
// CHECK-LABEL: func.func @conv_defaults
// CHECK: linalg.conv_2d_nhwc_hwcf {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x5x5x4xi32>, tensor<3x3x4x2xi32>)
func.func @conv_defaults(%x: tensor<1x5x5x4xi32>, %w: tensor<3x3x4x2xi32>, %o: tensor<1x3x3x2xi32>) -> tensor<1x3x3x2xi32> {
  %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x5x5x4xi32>, tensor<3x3x4x2xi32>) outs(%o : tensor<1x3x3x2xi32>) -> tensor<1x3x3x2xi32>
  return %0 : tensor<1x3x3x2xi32>
}

// -----

// Dynamic sizes are checked at run time, not here.
// CHECK-LABEL: func.func @conv_dynamic
// CHECK: linalg.conv_2d_nhwc_hwcf
func.func @conv_dynamic(%x: tensor<?x?x?x4xf32>, %w: tensor<3x3x4x2xf32>, %o: tensor<?x?x?x2xf32>) -> tensor<?x?x?x2xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<?x?x?x4xf32>, tensor<3x3x4x2xf32>) outs(%o : tensor<?x?x?x2xf32>) -> tensor<?x?x?x2xf32>
  return %0 : tensor<?x?x?x2xf32>
}

// -----

// Pooling: the window operand only gives the window's shape.
// CHECK-LABEL: func.func @max_pool
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x4x8x8xf32>, tensor<3x3xf32>) outs(%o : tensor<1x4x3x3xf32>)
func.func @max_pool(%x: tensor<1x4x8x8xf32>, %o: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %win = tensor.empty() : tensor<3x3xf32>
  %0 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x4x8x8xf32>, tensor<3x3xf32>) outs(%o : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

// Pooling without strides/dilations.
// CHECK-LABEL: func.func @max_pool_defaults
// CHECK: linalg.pooling_nchw_max {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
func.func @max_pool_defaults(%x: tensor<1x4x8x8xf32>, %o: tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32> {
  %win = tensor.empty() : tensor<2x2xf32>
  %0 = linalg.pooling_nchw_max ins(%x, %win : tensor<1x4x8x8xf32>, tensor<2x2xf32>) outs(%o : tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  return %0 : tensor<1x4x7x7xf32>
}

// -----

// The window ops weir adds to xDSL's linalg get the same defaults; NCHW/FCHW and NHWC/FHWC
// convolutions pass as written.
// CHECK-LABEL: func.func @more_layouts
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %dw : tensor<1x8x8x4xf32>, tensor<3x3x4xf32>)
// CHECK: linalg.pooling_nhwc_max {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
// CHECK: linalg.pooling_nchw_sum {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
// CHECK: linalg.conv_2d_nhwc_fhwc {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
func.func @more_layouts(%x: tensor<1x8x8x4xf32>, %dw: tensor<3x3x4xf32>, %xc: tensor<1x4x8x8xf32>, %wc: tensor<2x4x3x3xf32>, %wf: tensor<2x3x3x4xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x7x7xf32>, tensor<1x2x4x4xf32>, tensor<1x6x6x2xf32>) {
  %o1 = tensor.empty() : tensor<1x6x6x4xf32>
  %0 = linalg.depthwise_conv_2d_nhwc_hwc ins(%x, %dw : tensor<1x8x8x4xf32>, tensor<3x3x4xf32>) outs(%o1 : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %o2 = tensor.empty() : tensor<1x4x4x4xf32>
  %1 = linalg.pooling_nhwc_max {strides = dense<2> : tensor<2xi64>} ins(%x, %win : tensor<1x8x8x4xf32>, tensor<2x2xf32>) outs(%o2 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %o3 = tensor.empty() : tensor<1x4x7x7xf32>
  %2 = linalg.pooling_nchw_sum ins(%xc, %win : tensor<1x4x8x8xf32>, tensor<2x2xf32>) outs(%o3 : tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  %o4 = tensor.empty() : tensor<1x2x4x4xf32>
  %3 = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xc, %wc : tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>) outs(%o4 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o5 = tensor.empty() : tensor<1x6x6x2xf32>
  %4 = linalg.conv_2d_nhwc_fhwc ins(%x, %wf : tensor<1x8x8x4xf32>, tensor<2x3x3x4xf32>) outs(%o5 : tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  return %0, %1, %2, %3, %4 : tensor<1x6x6x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x7x7xf32>, tensor<1x2x4x4xf32>, tensor<1x6x6x2xf32>
}
