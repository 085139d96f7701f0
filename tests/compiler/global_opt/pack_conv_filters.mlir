// Checks that --pack-conv-filters stores a convolution's constant filter as panels of the llvm-cpu
// direct kernel's width (16 output channels for AVX2, 32 for AVX-512), P x KH x KW x C x NR, read
// back through a transpose and a collapse_shape that give the filter in its own layout again (NCHW
// and NHWC convolutions, a strided 1 x 1 one); and leaves alone a 1 x 1 stride-1 NCHW convolution
// (a GEMM on llvm-cpu), tiny or non-constant filters, depthwise convolutions, f64, and programs
// without the llvm-cpu target. A filter count that is not whole panels is padded with zeros and
// read back through an extract_slice of the first F channels; a stem's small filter is packed. A
// 1 x 1 stride-1 NHWC convolution (a GEMM on llvm-cpu) gets the GEMM's panels: on AVX-512 64
// channels wide over 14 x 14 pixels or more (its wide tiles), 32 over fewer.
// RUN: weir-opt --split-input-file --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=x86-64-v3 --pack-conv-filters %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=x86-64-v4 --pack-conv-filters %s | filecheck %s --check-prefix=AVX512
// RUN: weir-opt --split-input-file --iree-hal-target-backends=reference --pack-conv-filters %s | filecheck %s --check-prefix=REF
// RUN: weir-opt --split-input-file --iree-hal-target-backends=llvm-cpu --iree-llvmcpu-target-cpu=x86-64-v3 --pack-conv-filters %s | weir-opt --split-input-file - | filecheck %s

// CHECK-LABEL: func.func @nchw(
// CHECK-SAME: %[[X:.*]]: tensor<1x16x10x10xf32>
// CHECK: %[[PANELS:.*]] = arith.constant dense_resource<{{.*}}panels16> : tensor<2x3x3x16x16xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<2x16x16x3x3xf32>
// CHECK: %[[TURNED:.*]] = linalg.transpose ins(%[[PANELS]]:tensor<2x3x3x16x16xf32>) outs(%[[EMPTY]]:tensor<2x16x16x3x3xf32>) permutation = [0, 4, 3, 1, 2]
// CHECK: %[[W:.*]] = tensor.collapse_shape %[[TURNED]] {{\[\[}}0 : i64, 1 : i64], [2 : i64], [3 : i64], [4 : i64]] : tensor<2x16x16x3x3xf32> into tensor<32x16x3x3xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X]], %[[W]] : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>)
// AVX512-LABEL: func.func @nchw(
// AVX512: arith.constant dense_resource<{{.*}}panels32> : tensor<1x3x3x16x32xf32>
// AVX512: permutation = [0, 4, 3, 1, 2]
// REF-LABEL: func.func @nchw(
// REF-NOT: panels
// REF: linalg.conv_2d_nchw_fchw
func.func @nchw(%x: tensor<1x16x10x10xf32>, %acc: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %w = arith.constant dense<1.5> : tensor<32x16x3x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%acc : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  return %r : tensor<1x32x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @nhwc_hwcf(
// CHECK: %[[PANELS:.*]] = arith.constant dense_resource<{{.*}}panels16> : tensor<2x3x3x16x16xf32>
// CHECK: %[[TURNED:.*]] = linalg.transpose ins(%[[PANELS]]:tensor<2x3x3x16x16xf32>) outs(%{{.*}}:tensor<3x3x16x2x16xf32>) permutation = [1, 2, 3, 0, 4]
// CHECK: %[[W:.*]] = tensor.collapse_shape %[[TURNED]] {{\[\[}}0 : i64], [1 : i64], [2 : i64], [3 : i64, 4 : i64]] : tensor<3x3x16x2x16xf32> into tensor<3x3x16x32xf32>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %[[W]] :
func.func @nhwc_hwcf(%x: tensor<1x10x10x16xf32>, %acc: tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> {
  %w = arith.constant dense<1.5> : tensor<3x3x16x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x10x10x16xf32>, tensor<3x3x16x32xf32>) outs(%acc : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  return %r : tensor<1x8x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @nhwc_fhwc(
// CHECK: %[[PANELS:.*]] = arith.constant dense_resource<{{.*}}panels16> : tensor<2x3x3x16x16xf32>
// CHECK: linalg.transpose ins(%[[PANELS]]:tensor<2x3x3x16x16xf32>) outs(%{{.*}}:tensor<2x16x3x3x16xf32>) permutation = [0, 4, 1, 2, 3]
// CHECK: tensor.collapse_shape {{.*}} into tensor<32x3x3x16xf32>
// CHECK: linalg.conv_2d_nhwc_fhwc
func.func @nhwc_fhwc(%x: tensor<1x10x10x16xf32>, %acc: tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> {
  %w = arith.constant dense<1.5> : tensor<32x3x3x16xf32>
  %r = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x10x10x16xf32>, tensor<32x3x3x16xf32>) outs(%acc : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  return %r : tensor<1x8x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @strided_pointwise(
// CHECK: arith.constant dense_resource<{{.*}}panels16> : tensor<4x1x1x128x16xf32>
// CHECK: linalg.conv_2d_nchw_fchw
func.func @strided_pointwise(%x: tensor<1x128x8x8xf32>, %acc: tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32> {
  %w = arith.constant dense<1.5> : tensor<64x128x1x1xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x128x8x8xf32>, tensor<64x128x1x1xf32>) outs(%acc : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  return %r : tensor<1x64x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @pointwise(
// CHECK-NOT: panels
// CHECK: linalg.conv_2d_nchw_fchw
func.func @pointwise(%x: tensor<1x128x8x8xf32>, %acc: tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> {
  %w = arith.constant dense<1.5> : tensor<64x128x1x1xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x128x8x8xf32>, tensor<64x128x1x1xf32>) outs(%acc : tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  return %r : tensor<1x64x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @pointwise_nhwc_many_pixels(
// CHECK: arith.constant dense_resource<{{.*}}panels16> : tensor<8x1x1x32x16xf32>
// AVX512-LABEL: func.func @pointwise_nhwc_many_pixels(
// AVX512: arith.constant dense_resource<{{.*}}panels64> : tensor<2x1x1x32x64xf32>
// AVX512-LABEL: func.func @pointwise_nhwc_few_pixels(
// AVX512: arith.constant dense_resource<{{.*}}panels32> : tensor<4x1x1x32x32xf32>
func.func @pointwise_nhwc_many_pixels(%x: tensor<1x16x16x32xf32>, %acc: tensor<1x16x16x128xf32>) -> tensor<1x16x16x128xf32> {
  %w = arith.constant dense<1.5> : tensor<1x1x32x128xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x16x16x32xf32>, tensor<1x1x32x128xf32>) outs(%acc : tensor<1x16x16x128xf32>) -> tensor<1x16x16x128xf32>
  return %r : tensor<1x16x16x128xf32>
}
func.func @pointwise_nhwc_few_pixels(%x: tensor<1x7x7x32xf32>, %acc: tensor<1x7x7x128xf32>) -> tensor<1x7x7x128xf32> {
  %w = arith.constant dense<1.5> : tensor<1x1x32x128xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x7x7x32xf32>, tensor<1x1x32x128xf32>) outs(%acc : tensor<1x7x7x128xf32>) -> tensor<1x7x7x128xf32>
  return %r : tensor<1x7x7x128xf32>
}

// -----

// CHECK-LABEL: func.func @partial_panel(
// CHECK: %[[PANELS:.*]] = arith.constant dense_resource<{{.*}}panels16> : tensor<2x3x3x32x16xf32>
// CHECK: %[[TURNED:.*]] = linalg.transpose ins(%[[PANELS]]:tensor<2x3x3x32x16xf32>) outs(%{{.*}}:tensor<2x16x32x3x3xf32>) permutation = [0, 4, 3, 1, 2]
// CHECK: %[[PADDED:.*]] = tensor.collapse_shape %[[TURNED]] {{.*}} into tensor<32x32x3x3xf32>
// CHECK: %[[W:.*]] = tensor.extract_slice %[[PADDED]][0, 0, 0, 0] [24, 32, 3, 3] [1, 1, 1, 1] : tensor<32x32x3x3xf32> to tensor<24x32x3x3xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %[[W]] :
// AVX512-LABEL: func.func @partial_panel(
// AVX512: arith.constant dense_resource<{{.*}}panels32> : tensor<1x3x3x32x32xf32>
// AVX512: tensor.extract_slice {{.*}} : tensor<32x32x3x3xf32> to tensor<24x32x3x3xf32>
func.func @partial_panel(%x: tensor<1x32x10x10xf32>, %acc: tensor<1x24x8x8xf32>) -> tensor<1x24x8x8xf32> {
  %w = arith.constant dense<1.5> : tensor<24x32x3x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x32x10x10xf32>, tensor<24x32x3x3xf32>) outs(%acc : tensor<1x24x8x8xf32>) -> tensor<1x24x8x8xf32>
  return %r : tensor<1x24x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @small_filter(
// CHECK-NOT: panels
// CHECK: linalg.conv_2d_nchw_fchw
func.func @small_filter(%x: tensor<1x3x10x10xf32>, %acc: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %w = arith.constant dense<1.5> : tensor<8x3x3x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @stem(
// CHECK: arith.constant dense_resource<{{.*}}panels16> : tensor<4x3x3x3x16xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}}strides = dense<2>
func.func @stem(%x: tensor<1x3x17x17xf32>, %acc: tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32> {
  %w = arith.constant dense<1.5> : tensor<64x3x3x3xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x3x17x17xf32>, tensor<64x3x3x3xf32>) outs(%acc : tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  return %r : tensor<1x64x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @filter_from_the_caller(
// CHECK-NOT: panels
// CHECK: linalg.conv_2d_nchw_fchw
func.func @filter_from_the_caller(%x: tensor<1x16x10x10xf32>, %w: tensor<32x16x3x3xf32>, %acc: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%acc : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  return %r : tensor<1x32x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @depthwise(
// CHECK-NOT: panels
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
func.func @depthwise(%x: tensor<1x10x10x512xf32>, %acc: tensor<1x8x8x512xf32>) -> tensor<1x8x8x512xf32> {
  %w = arith.constant dense<1.5> : tensor<3x3x512xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x10x10x512xf32>, tensor<3x3x512xf32>) outs(%acc : tensor<1x8x8x512xf32>) -> tensor<1x8x8x512xf32>
  return %r : tensor<1x8x8x512xf32>
}

// -----

// CHECK-LABEL: func.func @f64(
// CHECK-NOT: panels
// CHECK: linalg.conv_2d_nchw_fchw
func.func @f64(%x: tensor<1x16x10x10xf64>, %acc: tensor<1x32x8x8xf64>) -> tensor<1x32x8x8xf64> {
  %w = arith.constant dense<1.5> : tensor<32x16x3x3xf64>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x16x10x10xf64>, tensor<32x16x3x3xf64>) outs(%acc : tensor<1x32x8x8xf64>) -> tensor<1x32x8x8xf64>
  return %r : tensor<1x32x8x8xf64>
}
