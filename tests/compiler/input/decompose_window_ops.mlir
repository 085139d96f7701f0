// Checks that decompose-window-ops rewrites the convolutions and poolings no kernel runs onto
// the 2-D ops the Conv2D/Pool2D kernels run: groups unrolled into slices and inserts, a depth
// window unrolled with each depth folded into the batch (transposed first where D does not follow
// N), 1-D ops given a unit H, min pooling as max pooling of the bitwise-not (integers), and that
// the kernel ops themselves are kept.
// RUN: weir-opt --split-input-file --decompose-window-ops %s | filecheck %s

// Grouped NGCHW convolution: one conv_2d_nchw_fchw per group, on that group's slices.
// CHECK-LABEL: func.func @grouped
// CHECK: %[[X0:.*]] = tensor.extract_slice %x[0, 0, 0, 0, 0] [1, 1, 3, 5, 5] [1, 1, 1, 1, 1] : tensor<1x2x3x5x5xf32> to tensor<1x3x5x5xf32>
// CHECK: %[[W0:.*]] = tensor.extract_slice %w[0, 0, 0, 0, 0] [1, 4, 3, 3, 3] [1, 1, 1, 1, 1] : tensor<2x4x3x3x3xf32> to tensor<4x3x3x3xf32>
// CHECK: %[[I0:.*]] = tensor.extract_slice %init[0, 0, 0, 0, 0] [1, 1, 4, 3, 3] [1, 1, 1, 1, 1] : tensor<1x2x4x3x3xf32> to tensor<1x4x3x3xf32>
// CHECK: %[[C0:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X0]], %[[W0]] : {{.*}}) outs(%[[I0]] : tensor<1x4x3x3xf32>)
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[C0]] into %init[0, 0, 0, 0, 0] [1, 1, 4, 3, 3]
// CHECK: %[[X1:.*]] = tensor.extract_slice %x[0, 1, 0, 0, 0]
// CHECK: %[[C1:.*]] = linalg.conv_2d_nchw_fchw
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[C1]] into %[[R0]][0, 1, 0, 0, 0]
// CHECK: func.return %[[R1]]
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
func.func @grouped(%x: tensor<1x2x3x5x5xf32>, %w: tensor<2x4x3x3x3xf32>, %init: tensor<1x2x4x3x3xf32>) -> tensor<1x2x4x3x3xf32> {
  %0 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x3x5x5xf32>, tensor<2x4x3x3x3xf32>) outs(%init : tensor<1x2x4x3x3xf32>) -> tensor<1x2x4x3x3xf32>
  return %0 : tensor<1x2x4x3x3xf32>
}

// -----

// NDHWC sum pooling over a depth window of 3 (what torch-mlir makes of ONNX's LRN): three 2-D
// poolings with a new 1x1 window, each on a depth slice folded into the batch, accumulating.
// CHECK-LABEL: func.func @lrn_window
// CHECK: %[[ACC:.*]] = tensor.collapse_shape %init {{\[}}[0 : i64, 1 : i64], [2 : i64], [3 : i64], [4 : i64]] : tensor<1x4x8x8x1xf32> into tensor<4x8x8x1xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %x[0, 0, 0, 0, 0] [1, 4, 8, 8, 1]
// CHECK: %[[F0:.*]] = tensor.collapse_shape %[[S0]]
// CHECK: %[[WIN0:.*]] = tensor.empty() : tensor<1x1xf32>
// CHECK: %[[P0:.*]] = linalg.pooling_nhwc_sum {{.*}} ins(%[[F0]], %[[WIN0]] : tensor<4x8x8x1xf32>, tensor<1x1xf32>) outs(%[[ACC]] : tensor<4x8x8x1xf32>)
// CHECK: tensor.extract_slice %x[0, 1, 0, 0, 0] [1, 4, 8, 8, 1]
// CHECK: %[[P1:.*]] = linalg.pooling_nhwc_sum {{.*}} outs(%[[P0]] : tensor<4x8x8x1xf32>)
// CHECK: tensor.extract_slice %x[0, 2, 0, 0, 0] [1, 4, 8, 8, 1]
// CHECK: %[[P2:.*]] = linalg.pooling_nhwc_sum {{.*}} outs(%[[P1]] : tensor<4x8x8x1xf32>)
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[P2]] {{.*}} output_shape [1, 4, 8, 8, 1]
// CHECK: func.return %[[OUT]]
func.func @lrn_window(%x: tensor<1x6x8x8x1xf32>, %init: tensor<1x4x8x8x1xf32>) -> tensor<1x4x8x8x1xf32> {
  %win = tensor.empty() : tensor<3x1x1xf32>
  %0 = linalg.pooling_ndhwc_sum {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>} ins(%x, %win : tensor<1x6x8x8x1xf32>, tensor<3x1x1xf32>) outs(%init : tensor<1x4x8x8x1xf32>) -> tensor<1x4x8x8x1xf32>
  return %0 : tensor<1x4x8x8x1xf32>
}

// -----

// NCDHW convolution with a depth stride of 2: D is transposed next to N before folding, the
// depth slices are strided, and the result is transposed back.
// CHECK-LABEL: func.func @conv3d_ncdhw
// CHECK: linalg.transpose ins(%init:tensor<1x3x2x3x3xf32>) {{.*}} permutation = [0, 2, 1, 3, 4]
// CHECK: %[[S0:.*]] = tensor.extract_slice %x[0, 0, 0, 0, 0] [1, 2, 2, 5, 5] [1, 1, 2, 1, 1] : tensor<1x2x4x5x5xf32> to tensor<1x2x2x5x5xf32>
// CHECK: linalg.transpose ins(%[[S0]]:tensor<1x2x2x5x5xf32>) {{.*}} permutation = [0, 2, 1, 3, 4]
// CHECK: %[[W0:.*]] = tensor.extract_slice %w[0, 0, 0, 0, 0] [3, 2, 1, 3, 3] {{.*}} to tensor<3x2x3x3xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} tensor<2x2x5x5xf32>, tensor<3x2x3x3xf32>
// CHECK: tensor.extract_slice %x[0, 0, 1, 0, 0] [1, 2, 2, 5, 5] [1, 1, 2, 1, 1]
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: %[[E:.*]] = tensor.expand_shape {{.*}} output_shape [1, 2, 3, 3, 3]
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[E]]:tensor<1x2x3x3x3xf32>) {{.*}} permutation = [0, 2, 1, 3, 4]
// CHECK: func.return %[[T]]
func.func @conv3d_ncdhw(%x: tensor<1x2x4x5x5xf32>, %w: tensor<3x2x2x3x3xf32>, %init: tensor<1x3x2x3x3xf32>) -> tensor<1x3x2x3x3xf32> {
  %0 = linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : tensor<3xi64>, strides = dense<[2, 1, 1]> : tensor<3xi64>} ins(%x, %w : tensor<1x2x4x5x5xf32>, tensor<3x2x2x3x3xf32>) outs(%init : tensor<1x3x2x3x3xf32>) -> tensor<1x3x2x3x3xf32>
  return %0 : tensor<1x3x2x3x3xf32>
}

// -----

// 1-D NCW convolution: every operand gets a unit H before W (reshapes), the W stride stays.
// CHECK-LABEL: func.func @conv1d
// CHECK: %[[X:.*]] = tensor.expand_shape %x {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] output_shape [2, 3, 1, 9]
// CHECK: %[[W:.*]] = tensor.expand_shape %w {{.*}} output_shape [4, 3, 1, 3]
// CHECK: %[[I:.*]] = tensor.expand_shape %init {{.*}} output_shape [2, 4, 1, 4]
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw {strides = dense<[1, 2]> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[X]], %[[W]] : tensor<2x3x1x9xf32>, tensor<4x3x1x3xf32>) outs(%[[I]] : tensor<2x4x1x4xf32>)
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[C]] {{.*}} : tensor<2x4x1x4xf32> into tensor<2x4x4xf32>
// CHECK: func.return %[[R]]
func.func @conv1d(%x: tensor<2x3x9xf32>, %w: tensor<4x3x3xf32>, %init: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %0 = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>} ins(%x, %w : tensor<2x3x9xf32>, tensor<4x3x3xf32>) outs(%init : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// Integer min pooling: max pooling of ~x into ~init, then ~ of the result.
// CHECK-LABEL: func.func @min_pool
// CHECK: %[[ONES:.*]] = arith.constant dense<-1> : tensor<1x6x6x2xi32>
// CHECK: %[[NX:.*]] = arith.xori %x, %[[ONES]] : tensor<1x6x6x2xi32>
// CHECK: %[[NI:.*]] = arith.xori %init, {{.*}} : tensor<1x5x5x2xi32>
// CHECK: %[[MAX:.*]] = linalg.pooling_nhwc_max {{.*}} ins(%[[NX]], %win : {{.*}}) outs(%[[NI]] : tensor<1x5x5x2xi32>)
// CHECK: %[[R:.*]] = arith.xori %[[MAX]], {{.*}} : tensor<1x5x5x2xi32>
// CHECK: func.return %[[R]]
func.func @min_pool(%x: tensor<1x6x6x2xi32>, %init: tensor<1x5x5x2xi32>) -> tensor<1x5x5x2xi32> {
  %win = tensor.empty() : tensor<2x2xi32>
  %0 = linalg.pooling_nhwc_min ins(%x, %win : tensor<1x6x6x2xi32>, tensor<2x2xi32>) outs(%init : tensor<1x5x5x2xi32>) -> tensor<1x5x5x2xi32>
  return %0 : tensor<1x5x5x2xi32>
}

// -----

// Float min pooling negates instead.
// CHECK-LABEL: func.func @min_pool_f32
// CHECK: arith.negf %x : tensor<1x4x4x1xf32>
// CHECK: linalg.pooling_nhwc_max
// CHECK: arith.negf
func.func @min_pool_f32(%x: tensor<1x4x4x1xf32>, %init: tensor<1x3x3x1xf32>) -> tensor<1x3x3x1xf32> {
  %win = tensor.empty() : tensor<2x2xf32>
  %0 = linalg.pooling_nhwc_min ins(%x, %win : tensor<1x4x4x1xf32>, tensor<2x2xf32>) outs(%init : tensor<1x3x3x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}

// -----

// The ops the kernels run are kept: NCHW depthwise convolution among them.
// CHECK-LABEL: func.func @kept
// CHECK: %[[D:.*]] = linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%x, %w : tensor<1x3x5x5xf32>, tensor<3x3x3xf32>)
// CHECK: func.return %[[D]]
func.func @kept(%x: tensor<1x3x5x5xf32>, %w: tensor<3x3x3xf32>, %init: tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %0 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x5x5xf32>, tensor<3x3x3xf32>) outs(%init : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// -----

// A pooling written as a generic (what torch-mlir makes of ONNX's 3-D MaxPool): recognised as
// an NCDHW max pooling with a depth stride of 2 and rewritten like the named ones.
// CHECK-LABEL: func.func @generic_pool
// CHECK: linalg.transpose ins(%init:tensor<1x2x2x4x4xf32>) {{.*}} permutation = [0, 2, 1, 3, 4]
// CHECK: tensor.extract_slice %x[0, 0, 0, 0, 0] [1, 2, 2, 5, 5] [1, 1, 2, 1, 1]
// CHECK: %[[P0:.*]] = linalg.pooling_nchw_max {{.*}} : tensor<2x2x5x5xf32>, tensor<2x2xf32>) outs({{.*}} : tensor<2x2x4x4xf32>)
// CHECK: tensor.extract_slice %x[0, 0, 1, 0, 0] [1, 2, 2, 5, 5] [1, 1, 2, 1, 1]
// CHECK: linalg.pooling_nchw_max {{.*}} outs(%[[P0]] : tensor<2x2x4x4xf32>)
// CHECK-NOT: linalg.generic
#in = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 * 2 + d5, d3 + d6, d4 + d7)>
#win = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @generic_pool(%x: tensor<1x2x5x5x5xf32>, %init: tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32> {
  %w = tensor.empty() : tensor<2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x2x5x5x5xf32>, tensor<2x2x2xf32>) outs(%init : tensor<1x2x2x4x4xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %1 = arith.maximumf %in, %out : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x2x4x4xf32>
  return %0 : tensor<1x2x2x4x4xf32>
}

// -----

// A generic of the same form whose body reads the window is a convolution, not a pooling: left
// as it is.
// CHECK-LABEL: func.func @generic_reads_window
// CHECK: linalg.generic
// CHECK-NOT: linalg.pooling
#in2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + d3)>
#win2 = affine_map<(d0, d1, d2, d3) -> (d3)>
#out2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @generic_reads_window(%x: tensor<1x1x6xf32>, %w: tensor<3xf32>, %init: tensor<1x1x4xf32>) -> tensor<1x1x4xf32> {
  %0 = linalg.generic {indexing_maps = [#in2, #win2, #out2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x1x6xf32>, tensor<3xf32>) outs(%init : tensor<1x1x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %1 = arith.mulf %a, %b : f32
    %2 = arith.addf %1, %out : f32
    linalg.yield %2 : f32
  } -> tensor<1x1x4xf32>
  return %0 : tensor<1x1x4xf32>
}
