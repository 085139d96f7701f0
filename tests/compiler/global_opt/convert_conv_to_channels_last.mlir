// Checks that --convert-conv-to-channels-last runs an NCHW convolution, depthwise convolution and
// pooling as its NHWC form between transposes (input to NHWC, result back to NCHW), with a
// constant filter transposed at compile time, a fill or per-channel broadcast init made again in
// NHWC and any other init transposed; that the transposes between two such ops compose away; and
// that f64 and programs without the llvm-cpu target are left alone.
// RUN: weir-opt --split-input-file --iree-hal-target-backends=llvm-cpu --convert-conv-to-channels-last %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-hal-target-backends=reference --convert-conv-to-channels-last %s | filecheck %s --check-prefix=REF

// CHECK-LABEL: func.func @conv(
// CHECK-SAME: %[[X:.*]]: tensor<1x4x8x8xf32>
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]]:tensor<1x4x8x8xf32>) outs(%{{.*}}:tensor<1x8x8x4xf32>) permutation = [0, 2, 3, 1]
// CHECK: %[[W:.*]] = arith.constant dense_resource<{{.*}}channels_last> : tensor<3x3x4x8xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x6x6x8xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<1x6x6x8xf32>)
// CHECK: %[[C:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[XT]], %[[W]] : tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) outs(%[[F]] : tensor<1x6x6x8xf32>)
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[C]]:tensor<1x6x6x8xf32>) outs(%{{.*}}:tensor<1x8x6x6xf32>) permutation = [0, 3, 1, 2]
// CHECK: func.return %[[R]]
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// REF-LABEL: func.func @conv(
// REF: linalg.conv_2d_nchw_fchw
func.func @conv(%x: tensor<1x4x8x8xf32>) -> tensor<1x8x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.5> : tensor<8x4x3x3xf32>
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  return %c : tensor<1x8x6x6xf32>
}

// -----

// A filter computed at run time is transposed at run time; a bias broadcast over N, H, W is
// broadcast over N, H, W of the NHWC result; strides stay.
// CHECK-LABEL: func.func @bias(
// CHECK-SAME: %[[X:.*]]: tensor<1x4x8x8xf32>, %[[W:.*]]: tensor<8x4x3x3xf32>
// CHECK: %[[B:.*]] = arith.constant dense<[1.0{{.*}}]> : tensor<8xf32>
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]]:{{.*}} permutation = [0, 2, 3, 1]
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[W]]:tensor<8x4x3x3xf32>) outs(%{{.*}}:tensor<3x3x4x8xf32>) permutation = [2, 3, 1, 0]
// CHECK: %[[INIT:.*]] = linalg.broadcast ins(%[[B]]:tensor<8xf32>) outs(%{{.*}}:tensor<1x3x3x8xf32>) dimensions = [0, 1, 2]
// CHECK: linalg.conv_2d_nhwc_hwcf {strides = dense<2> : vector<2xi64>, dilations = dense<1> : vector<2xi64>} ins(%[[XT]], %[[WT]] : {{.*}}) outs(%[[INIT]] : tensor<1x3x3x8xf32>)
func.func @bias(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x3x3xf32> {
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %e = tensor.empty() : tensor<1x8x3x3xf32>
  %f = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<1x8x3x3xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %c : tensor<1x8x3x3xf32>
}

// -----

// A depthwise convolution feeding a pooling: the depthwise result goes straight into the
// pooling (its transpose back and the pooling's transpose in compose to nothing); an init
// that is an argument is transposed.
// CHECK-LABEL: func.func @depthwise_and_pool(
// CHECK-SAME: %[[X:.*]]: tensor<1x4x8x8xf32>, %[[ACC:.*]]: tensor<1x4x6x6xf32>
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[X]]:{{.*}} permutation = [0, 2, 3, 1]
// CHECK: %[[W:.*]] = arith.constant dense_resource<{{.*}}channels_last> : tensor<3x3x4xf32>
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[ACC]]:tensor<1x4x6x6xf32>) outs(%{{.*}}:tensor<1x6x6x4xf32>) permutation = [0, 2, 3, 1]
// CHECK: %[[D:.*]] = linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[XT]], %[[W]] : {{.*}}) outs(%[[AT]] : tensor<1x6x6x4xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[P:.*]] = linalg.pooling_nhwc_max {strides = dense<2> : vector<2xi64>, {{.*}}} ins(%[[D]], %{{.*}} : tensor<1x6x6x4xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<1x3x3x4xf32>)
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[P]]:{{.*}} permutation = [0, 3, 1, 2]
// CHECK: func.return %[[R]]
func.func @depthwise_and_pool(%x: tensor<1x4x8x8xf32>, %acc: tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32> {
  %w = arith.constant dense<0.25> : tensor<4x3x3xf32>
  %d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x4x8x8xf32>, tensor<4x3x3xf32>) outs(%acc : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x4x3x3xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%d, %k : tensor<1x4x6x6xf32>, tensor<2x2xf32>) outs(%f : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %p : tensor<1x4x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @f64(
// CHECK-NOT: linalg.transpose
// CHECK: linalg.conv_2d_nchw_fchw
func.func @f64(%x: tensor<1x4x8x8xf64>, %w: tensor<8x4x3x3xf64>, %acc: tensor<1x8x6x6xf64>) -> tensor<1x8x6x6xf64> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x4x8x8xf64>, tensor<8x4x3x3xf64>) outs(%acc : tensor<1x8x6x6xf64>) -> tensor<1x8x6x6xf64>
  return %c : tensor<1x8x6x6xf64>
}
