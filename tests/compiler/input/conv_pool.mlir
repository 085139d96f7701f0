// Checks that linalg.conv_2d_nhwc_hwcf and linalg.pooling_nchw_max pass the input phase's
// op check, and that an op without strides/dilations gets MLIR's default of 1 for both.
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
