// Checks that --convert-1x1-conv-to-matmul runs a channels-last 1 x 1 convolution with unit
// strides as a matmul of the N*H*W pixels by the C x F filter (a constant reshaped at compile
// time, a fill or per-channel broadcast init made again at the matmul's shape, anything else
// reshaped), its result expanded back; and leaves alone strided or 3 x 3 convolutions, NCHW
// ones and programs without the llvm-cpu target.
// RUN: weir-opt --split-input-file --iree-hal-target-backends=llvm-cpu --convert-1x1-conv-to-matmul %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-hal-target-backends=reference --convert-1x1-conv-to-matmul %s | filecheck %s --check-prefix=REF

// CHECK-LABEL: func.func @bias(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x5x16xf32>
// CHECK: %[[B:.*]] = arith.constant dense<2.5{{.*}}> : tensor<32xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0 : i64, 1 : i64, 2 : i64], [3 : i64]] : tensor<2x4x5x16xf32> into tensor<40x16xf32>
// CHECK: %[[W:.*]] = arith.constant dense_resource<weights_matrix> : tensor<16x32xf32>
// CHECK: %[[INIT:.*]] = linalg.broadcast ins(%[[B]]:tensor<32xf32>) outs(%{{.*}}:tensor<40x32xf32>) dimensions = [0]
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[ROWS]], %[[W]] : tensor<40x16xf32>, tensor<16x32xf32>) outs(%[[INIT]] : tensor<40x32xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0 : i64, 1 : i64, 2 : i64], [3 : i64]] output_shape [2, 4, 5, 32] : tensor<40x32xf32> into tensor<2x4x5x32xf32>
// CHECK: func.return %[[R]]
// REF-LABEL: func.func @bias(
// REF: linalg.conv_2d_nhwc_hwcf
func.func @bias(%x: tensor<2x4x5x16xf32>) -> tensor<2x4x5x32xf32> {
  %w = arith.constant dense<0.5> : tensor<1x1x16x32xf32>
  %b = arith.constant dense<2.5> : tensor<32xf32>
  %e = tensor.empty() : tensor<2x4x5x32xf32>
  %i = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e : tensor<2x4x5x32xf32>) dimensions = [0, 1, 2]
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<2x4x5x16xf32>, tensor<1x1x16x32xf32>) outs(%i : tensor<2x4x5x32xf32>) -> tensor<2x4x5x32xf32>
  return %c : tensor<2x4x5x32xf32>
}

// -----

// A filter and an init that are arguments are reshaped.
// CHECK-LABEL: func.func @arguments(
// CHECK-SAME: %[[X:.*]]: tensor<1x3x3x8xf32>, %[[W:.*]]: tensor<1x1x8x4xf32>, %[[ACC:.*]]: tensor<1x3x3x4xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{.*}} into tensor<9x8xf32>
// CHECK: %[[WM:.*]] = tensor.collapse_shape %[[W]] {{.*}} into tensor<8x4xf32>
// CHECK: %[[INIT:.*]] = tensor.collapse_shape %[[ACC]] {{.*}} into tensor<9x4xf32>
// CHECK: linalg.matmul ins(%[[ROWS]], %[[WM]] : tensor<9x8xf32>, tensor<8x4xf32>) outs(%[[INIT]] : tensor<9x4xf32>)
func.func @arguments(%x: tensor<1x3x3x8xf32>, %w: tensor<1x1x8x4xf32>, %acc: tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32> {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x3x8xf32>, tensor<1x1x8x4xf32>) outs(%acc : tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  return %c : tensor<1x3x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: linalg.matmul
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}strides = dense<2>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} tensor<3x3x8x4xf32>
// CHECK: linalg.conv_2d_nchw_fchw
func.func @left_alone(%x: tensor<1x6x6x8xf32>, %s: tensor<1x1x8x4xf32>, %w: tensor<3x3x8x4xf32>, %a: tensor<1x3x3x4xf32>, %b: tensor<1x4x4x4xf32>, %xn: tensor<1x8x6x6xf32>, %wn: tensor<4x8x1x1xf32>, %an: tensor<1x4x6x6xf32>) -> (tensor<1x3x3x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x6x6xf32>) {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %s : tensor<1x6x6x8xf32>, tensor<1x1x8x4xf32>) outs(%a : tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %d = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x6x6x8xf32>, tensor<3x3x8x4xf32>) outs(%b : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %n = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%xn, %wn : tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>) outs(%an : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %c, %d, %n : tensor<1x3x3x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x6x6xf32>
}
