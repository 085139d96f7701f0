// Checks that --fold-batch-norm-into-conv scales a constant filter by the per-channel affine
// chain after a convolution (sub/mul/add of constants broadcast over the output channel, as
// torch-mlir states an eval-mode batch norm, the scale computed by generics over constants) and
// makes the rest the bias the convolution starts from; and that it leaves alone a chain whose
// value is read elsewhere, a filter or init computed at run time, `c / x`, a constant broadcast
// along another dimension, and a scale whose assertion fails.
// RUN: weir-opt --split-input-file --fold-batch-norm-into-conv %s | filecheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// y = ((conv(x, [1, 2]) + [1, 1]) - [1, 2]) * [2, 0.5] + [3, 4]
//   = conv(x, [2, 1]) + [2 * 0 + 3, 0.5 * -1 + 4] = conv(x, [2, 1]) + [3, 3.5]
// CHECK-LABEL: func.func @exact(
// CHECK-SAME: %[[X:.*]]: tensor<1x1x2x2xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[W:.*]] = arith.constant dense_resource<[[FILTER:folded_filter[_0-9]*]]> : tensor<2x1x1x1xf32>
// CHECK: %[[B:.*]] = arith.constant dense_resource<[[BIAS:folded_bias[_0-9]*]]> : tensor<2xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x2x2x2xf32>
// CHECK: %[[I:.*]] = linalg.broadcast ins(%[[B]]:tensor<2xf32>) outs(%[[E]]:tensor<1x2x2x2xf32>) dimensions = [0, 2, 3]
// CHECK: %[[Y:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[I]] : tensor<1x2x2x2xf32>)
// CHECK-NOT: linalg.generic
// CHECK: func.return %[[Y]]
// CHECK-DAG: [[FILTER]]: "0x04000000000000400000803F"
// CHECK-DAG: [[BIAS]]: "0x040000000000404000006040"
func.func @exact(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %bias = arith.constant dense<1.0> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %scale = arith.constant dense<[[[2.0]], [[0.5]]]> : tensor<2x1x1xf32>
  %beta = arith.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.broadcast ins(%bias : tensor<2xf32>) outs(%e : tensor<1x2x2x2xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %m = tensor.expand_shape %mean [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %m : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.subf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#ch, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scale, %0 : tensor<2x1x1xf32>, tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  %b = tensor.expand_shape %beta [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %2 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %b : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.addf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  return %2 : tensor<1x2x2x2xf32>
}

// -----

#v = affine_map<(d0) -> (d0)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// torch-mlir's batch norm after a depthwise convolution whose filter is a reshaped constant:
// the scale 1 / sqrt(var + eps) (with its assertion) is evaluated, the chain stops at the ReLU.
// CHECK-LABEL: func.func @torch_batch_norm(
// CHECK-NOT: arith.subf
// CHECK-NOT: math.sqrt
// CHECK-NOT: cf.assert
// CHECK: %[[W:.*]] = arith.constant dense_resource<weight_folded_filter{{[_0-9]*}}> : tensor<2x3x3xf32>
// CHECK: %[[B:.*]] = arith.constant dense_resource<weight_folded_bias{{[_0-9]*}}> : tensor<2xf32>
// CHECK: %[[I:.*]] = linalg.broadcast ins(%[[B]]
// CHECK: %[[Y:.*]] = linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%{{.*}}, %[[W]] : {{.*}}) outs(%[[I]] :
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[Y]] :
// CHECK: arith.cmpf ugt
// CHECK: func.return %[[R]]
// CHECK-NOT: dense_resource<weight>
func.func @torch_batch_norm(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %eps = arith.constant 1.000000e-05 : f64
  %w0 = arith.constant dense_resource<weight> : tensor<2x1x3x3xf32>
  %w = tensor.collapse_shape %w0 [[0, 1], [2], [3]] : tensor<2x1x3x3xf32> into tensor<2x3x3xf32>
  %mean = arith.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %var = arith.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %gamma = arith.constant dense<[1.5, 2.0]> : tensor<2xf32>
  %beta = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<2x3x3xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %ev = tensor.empty() : tensor<2xf32>
  %v1 = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%var : tensor<2xf32>) outs(%ev : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %eps : f64 to f32
    %r = arith.addf %in, %t : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %v2 = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%v1 : tensor<2xf32>) outs(%ev : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.sqrt %in : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %v3 = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%v2 : tensor<2xf32>) outs(%ev : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nz = arith.cmpf one, %in, %zero : f32
    cf.assert %nz, "unimplemented: tensor with zero element"
    %r = arith.divf %one, %in : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %m = tensor.expand_shape %mean [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %s = tensor.expand_shape %v3 [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %g = tensor.expand_shape %gamma [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %b = tensor.expand_shape %beta [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %m : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.subf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  %1 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0, %s : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  %2 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %g : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  %3 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %b : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.addf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  %4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3 : tensor<1x2x2x2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.cmpf ugt, %in, %zero : f32
    %r = arith.select %p, %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  return %4 : tensor<1x2x2x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      weight: "0x04000000000080BF0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// The value before the affine op is also returned: nothing folds.
// CHECK-LABEL: func.func @read_elsewhere(
// CHECK: %[[W:.*]] = arith.constant dense<
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %[[W]] :
// CHECK: linalg.generic {{.*}} ins(%[[C]],
// CHECK: arith.mulf
// CHECK: func.return %[[C]]
func.func @read_elsewhere(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %scale = arith.constant dense<[[[2.0]], [[0.5]]]> : tensor<2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %scale : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  return %c, %0 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// A filter given at run time, and an init given at run time: nothing folds.
// CHECK-LABEL: func.func @run_time_filter(
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %w :
// CHECK: arith.mulf
// CHECK-LABEL: func.func @run_time_init(
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} outs(%acc :
// CHECK: arith.mulf
func.func @run_time_filter(%x: tensor<1x1x2x2xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant dense<[[[2.0]], [[0.5]]]> : tensor<2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %scale : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
func.func @run_time_init(%x: tensor<1x1x2x2xf32>, %acc: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %scale = arith.constant dense<[[[2.0]], [[0.5]]]> : tensor<2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%acc : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %scale : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
#w = affine_map<(d0, d1, d2, d3) -> (d3)>
// `c / x` is not affine in x, a constant broadcast along the width is not per channel, and a
// division by zero is the run time's to compute.
// CHECK-LABEL: func.func @not_affine(
// CHECK: arith.constant dense<
// CHECK: arith.divf %in_1, %in
// CHECK-LABEL: func.func @along_width(
// CHECK: arith.constant dense<
// CHECK: arith.addf
// CHECK-LABEL: func.func @divide_by_zero(
// CHECK: arith.constant dense<
// CHECK: arith.divf %in, %in_1
func.func @not_affine(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %scale = arith.constant dense<[[[2.0]], [[0.5]]]> : tensor<2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %scale : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in_1, %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
func.func @along_width(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %shift = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #w, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %shift : tensor<1x2x2x2xf32>, tensor<2xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.addf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
func.func @divide_by_zero(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %d = arith.constant dense<[[[2.0]], [[0.0]]]> : tensor<2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %d : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

#v = affine_map<(d0) -> (d0)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// A zero variance (and no eps) fails the scale's assertion: the run time reports it, so the
// program is kept as it is.
// CHECK-LABEL: func.func @failing_assertion(
// CHECK: cf.assert
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %w :
// CHECK: arith.mulf
func.func @failing_assertion(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %w = arith.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %var = arith.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %ev = tensor.empty() : tensor<2xf32>
  %inv = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%var : tensor<2xf32>) outs(%ev : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nz = arith.cmpf one, %in, %zero : f32
    cf.assert %nz, "unimplemented: tensor with zero element"
    %r = arith.divf %one, %in : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %s = tensor.expand_shape %inv [[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %s : tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) outs(%e : tensor<1x2x2x2xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
