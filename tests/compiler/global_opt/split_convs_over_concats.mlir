// Checks that --split-convs-over-concats rewrites a 1 x 1 NHWC convolution of a channel
// concatenation with a constant filter as one convolution per piece with that piece's rows of
// the filter, each from the last one's result (the first from the init), and drops the
// concatenation; that every reader of the concatenation is rewritten; and that it leaves alone a
// concatenation another op reads, a 3 x 3 window, a filter computed at run time, a concatenation
// along another dimension, a convolution whose output outweighs the concatenation (the chain
// would read and write it once per piece after the first), and programs without the llvm-cpu
// target.
// RUN: weir-opt --split-input-file --iree-hal-target-backends=llvm-cpu --split-convs-over-concats %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-hal-target-backends=reference --split-convs-over-concats %s | filecheck %s --check-prefix=REF

// CHECK-LABEL: func.func @two_pieces(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<1x4x4x2xf32>, %[[B:[a-z0-9]+]]: tensor<1x4x4x1xf32>
// CHECK-NOT: tensor.concat
// CHECK-NOT: tensor<1x1x3x2xf32>
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: %[[WA:.*]] = arith.constant dense_resource<[[NA:filter_piece[_0-9]*]]> : tensor<1x1x2x2xf32>
// CHECK: %[[FIRST:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[A]], %[[WA]] : {{.*}}) outs(%[[INIT]] : tensor<1x4x4x2xf32>)
// CHECK: %[[WB:.*]] = arith.constant dense_resource<[[NB:filter_piece[_0-9]*]]> : tensor<1x1x1x2xf32>
// CHECK: %[[SECOND:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[B]], %[[WB]] : {{.*}}) outs(%[[FIRST]] : tensor<1x4x4x2xf32>)
// CHECK: func.return %[[SECOND]]
// The filter's input channels 0-1 and 2 (rows [1, 2], [3, 4], then [5, 6]):
// CHECK-DAG: [[NA]]: "0x040000000000803F000000400000404000008040"
// CHECK-DAG: [[NB]]: "0x040000000000A0400000C040"
// REF-LABEL: func.func @two_pieces(
// REF: tensor.concat
func.func @two_pieces(%a: tensor<1x4x4x2xf32>, %b: tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32> {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x4x4x2xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x3xf32>
  %w = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]]> : tensor<1x1x3x2xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c, %w : tensor<1x4x4x3xf32>, tensor<1x1x3x2xf32>) outs(%f : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %r : tensor<1x4x4x2xf32>
}

// -----

// Two strided readers: each becomes its own chain.
// CHECK-LABEL: func.func @two_readers(
// CHECK-NOT: tensor.concat
// CHECK: %[[R1A:.*]] = linalg.conv_2d_nhwc_hwcf {strides = dense<2>
// CHECK: %[[R1B:.*]] = linalg.conv_2d_nhwc_hwcf {strides = dense<2>{{.*}}outs(%[[R1A]]
// CHECK: %[[R2A:.*]] = linalg.conv_2d_nhwc_hwcf
// CHECK: %[[R2B:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}}outs(%[[R2A]]
// CHECK: func.return %[[R1B]], %[[R2B]]
func.func @two_readers(%a: tensor<1x4x4x1xf32>, %b: tensor<1x4x4x1xf32>) -> (tensor<1x2x2x1xf32>, tensor<1x4x4x1xf32>) {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32>
  %w = arith.constant dense<[[[[1.0], [2.0]]]]> : tensor<1x1x2x1xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x2x2x1xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %r1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%c, %w : tensor<1x4x4x2xf32>, tensor<1x1x2x1xf32>) outs(%f1 : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %e2 = tensor.empty() : tensor<1x4x4x1xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %r2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c, %w : tensor<1x4x4x2xf32>, tensor<1x1x2x1xf32>) outs(%f2 : tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  return %r1, %r2 : tensor<1x2x2x1xf32>, tensor<1x4x4x1xf32>
}

// -----

// The concatenation is also returned: it is needed anyway.
// CHECK-LABEL: func.func @also_returned(
// CHECK: %[[C:.*]] = tensor.concat
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[C]],
func.func @also_returned(%a: tensor<1x4x4x1xf32>, %b: tensor<1x4x4x1xf32>) -> (tensor<1x4x4x1xf32>, tensor<1x4x4x2xf32>) {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32>
  %w = arith.constant dense<[[[[1.0], [2.0]]]]> : tensor<1x1x2x1xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x1xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c, %w : tensor<1x4x4x2xf32>, tensor<1x1x2x1xf32>) outs(%f : tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  return %r, %c : tensor<1x4x4x1xf32>, tensor<1x4x4x2xf32>
}

// -----

// A 3 x 3 window (its sums would run in another order), a filter given at run time, and a
// concatenation along the width are left alone.
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-3: tensor.concat
func.func @left_alone(%a: tensor<1x4x4x1xf32>, %b: tensor<1x4x4x1xf32>, %wr: tensor<1x1x2x1xf32>) -> (tensor<1x2x2x1xf32>, tensor<1x4x4x1xf32>, tensor<1x4x8x1xf32>) {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32>
  %w3 = arith.constant dense<1.0> : tensor<3x3x2x1xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x2x2x1xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %r1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c, %w3 : tensor<1x4x4x2xf32>, tensor<3x3x2x1xf32>) outs(%f1 : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %c2 = tensor.concat dim(3) %a, %b : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32>
  %e2 = tensor.empty() : tensor<1x4x4x1xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %r2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c2, %wr : tensor<1x4x4x2xf32>, tensor<1x1x2x1xf32>) outs(%f2 : tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %c3 = tensor.concat dim(2) %a, %b : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x8x1xf32>
  return %r1, %r2, %c3 : tensor<1x2x2x1xf32>, tensor<1x4x4x1xf32>, tensor<1x4x8x1xf32>
}

// -----

// SqueezeNet's classifier: 512 channels in (two pieces of 256), 1000 out. Its output (1000 per
// pixel) outweighs the concatenation (512): a chain would read and write it once more than the
// concatenation copies the pieces, so the concatenation stays and is read in one GEMM. With
// 500 channels out it is split.
// CHECK-LABEL: func.func @output_outweighs_the_concat(
// CHECK: %[[C:.*]] = tensor.concat
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[C]],
// CHECK-LABEL: func.func @output_lighter_than_the_concat(
// CHECK-NOT: tensor.concat
// CHECK-COUNT-2: linalg.conv_2d_nhwc_hwcf
func.func @output_outweighs_the_concat(%a: tensor<1x2x2x256xf32>, %b: tensor<1x2x2x256xf32>) -> tensor<1x2x2x1000xf32> {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x2x2x256xf32>, tensor<1x2x2x256xf32>) -> tensor<1x2x2x512xf32>
  %w = arith.constant dense<0.5> : tensor<1x1x512x1000xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x2x1000xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x2x2x1000xf32>) -> tensor<1x2x2x1000xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c, %w : tensor<1x2x2x512xf32>, tensor<1x1x512x1000xf32>) outs(%f : tensor<1x2x2x1000xf32>) -> tensor<1x2x2x1000xf32>
  return %r : tensor<1x2x2x1000xf32>
}
func.func @output_lighter_than_the_concat(%a: tensor<1x2x2x256xf32>, %b: tensor<1x2x2x256xf32>) -> tensor<1x2x2x500xf32> {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x2x2x256xf32>, tensor<1x2x2x256xf32>) -> tensor<1x2x2x512xf32>
  %w = arith.constant dense<0.5> : tensor<1x1x512x500xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x2x500xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x2x2x500xf32>) -> tensor<1x2x2x500xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c, %w : tensor<1x2x2x512xf32>, tensor<1x1x512x500xf32>) outs(%f : tensor<1x2x2x500xf32>) -> tensor<1x2x2x500xf32>
  return %r : tensor<1x2x2x500xf32>
}
