// Checks that --split-pools-over-concats rewrites an NHWC max or sum pooling of a channel
// concatenation as the concatenation of one pooling per piece, each from a fill of the same
// value, and drops the first concatenation and the old init; that every reader is rewritten; and
// that it leaves alone a concatenation another op reads, one along another dimension, a pooling
// whose init is not a fill, and programs without the llvm-cpu target; and that a constant pad of
// the rows and columns between (a ceil-mode pooling) is applied to each piece, unless it pads the
// channels or another op reads it.
// RUN: weir-opt --split-input-file --iree-hal-target-backends=llvm-cpu --split-pools-over-concats %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-hal-target-backends=reference --split-pools-over-concats %s | filecheck %s --check-prefix=REF

// CHECK-LABEL: func.func @two_pieces(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<1x5x5x2xf32>, %[[B:[a-z0-9]+]]: tensor<1x5x5x1xf32>
// CHECK: %[[NEG:.*]] = arith.constant 0xff800000 : f32
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK-NOT: tensor.concat
// CHECK-NOT: tensor<1x2x2x3xf32>
// CHECK: %[[EA:.*]] = tensor.empty() : tensor<1x2x2x2xf32>
// CHECK: %[[FA:.*]] = linalg.fill ins(%[[NEG]] : f32) outs(%[[EA]] : tensor<1x2x2x2xf32>)
// CHECK: %[[PA:.*]] = linalg.pooling_nhwc_max {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[A]], %[[WIN]] : {{.*}}) outs(%[[FA]] : tensor<1x2x2x2xf32>)
// CHECK: %[[EB:.*]] = tensor.empty() : tensor<1x2x2x1xf32>
// CHECK: %[[FB:.*]] = linalg.fill ins(%[[NEG]] : f32) outs(%[[EB]] : tensor<1x2x2x1xf32>)
// CHECK: %[[PB:.*]] = linalg.pooling_nhwc_max {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[B]], %[[WIN]] : {{.*}}) outs(%[[FB]] : tensor<1x2x2x1xf32>)
// CHECK: %[[CAT:.*]] = tensor.concat dim(3) %[[PA]], %[[PB]] : (tensor<1x2x2x2xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x3xf32>
// CHECK: func.return %[[CAT]]
// REF-LABEL: func.func @two_pieces(
// REF: tensor.concat dim(3) %a, %b
// REF: linalg.pooling_nhwc_max {{.*}} tensor<1x5x5x3xf32>
func.func @two_pieces(%a: tensor<1x5x5x2xf32>, %b: tensor<1x5x5x1xf32>) -> tensor<1x2x2x3xf32> {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x5x5x2xf32>, tensor<1x5x5x1xf32>) -> tensor<1x5x5x3xf32>
  %m = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x2x2x3xf32>
  %f = linalg.fill ins(%m : f32) outs(%e : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%c, %win : tensor<1x5x5x3xf32>, tensor<3x3xf32>) outs(%f : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %r : tensor<1x2x2x3xf32>
}

// -----

// Two readers, a sum and a max pooling of three pieces: each becomes its own concatenation.
// CHECK-LABEL: func.func @two_readers(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<1x4x4x1xf32>, %[[B:[a-z0-9]+]]: tensor<1x4x4x2xf32>, %[[C:[a-z0-9]+]]: tensor<1x4x4x1xf32>
// CHECK-NOT: tensor<1x4x4x4xf32>
// CHECK: %[[S1:.*]] = linalg.pooling_nhwc_sum {{.*}} ins(%[[A]],
// CHECK: %[[S2:.*]] = linalg.pooling_nhwc_sum {{.*}} ins(%[[B]],
// CHECK: %[[S3:.*]] = linalg.pooling_nhwc_sum {{.*}} ins(%[[C]],
// CHECK: %[[SUMS:.*]] = tensor.concat dim(3) %[[S1]], %[[S2]], %[[S3]] : {{.*}} -> tensor<1x3x3x4xf32>
// CHECK: %[[M1:.*]] = linalg.pooling_nhwc_max {{.*}} ins(%[[A]],
// CHECK: %[[M2:.*]] = linalg.pooling_nhwc_max {{.*}} ins(%[[B]],
// CHECK: %[[M3:.*]] = linalg.pooling_nhwc_max {{.*}} ins(%[[C]],
// CHECK: %[[MAXES:.*]] = tensor.concat dim(3) %[[M1]], %[[M2]], %[[M3]] : {{.*}} -> tensor<1x2x2x4xf32>
// CHECK: func.return %[[SUMS]], %[[MAXES]]
func.func @two_readers(%a: tensor<1x4x4x1xf32>, %b: tensor<1x4x4x2xf32>, %c: tensor<1x4x4x1xf32>) -> (tensor<1x3x3x4xf32>, tensor<1x2x2x4xf32>) {
  %cat = tensor.concat dim(3) %a, %b, %c : (tensor<1x4x4x1xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x4xf32>
  %z = arith.constant 0.0 : f32
  %m = arith.constant 0xFF800000 : f32
  %win = tensor.empty() : tensor<2x2xf32>
  %e1 = tensor.empty() : tensor<1x3x3x4xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %r1 = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%cat, %win : tensor<1x4x4x4xf32>, tensor<2x2xf32>) outs(%f1 : tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %e2 = tensor.empty() : tensor<1x2x2x4xf32>
  %f2 = linalg.fill ins(%m : f32) outs(%e2 : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %r2 = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%cat, %win : tensor<1x4x4x4xf32>, tensor<2x2xf32>) outs(%f2 : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %r1, %r2 : tensor<1x3x3x4xf32>, tensor<1x2x2x4xf32>
}

// -----

// The concatenation is also returned: it is needed anyway.
// CHECK-LABEL: func.func @also_returned(
// CHECK: %[[CAT:.*]] = tensor.concat dim(3)
// CHECK: linalg.pooling_nhwc_max {{.*}} ins(%[[CAT]],
func.func @also_returned(%a: tensor<1x4x4x1xf32>, %b: tensor<1x4x4x1xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>) {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32>
  %m = arith.constant 0xFF800000 : f32
  %win = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %f = linalg.fill ins(%m : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%c, %win : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%f : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %c, %r : tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>
}

// -----

// Concatenated along the width: a pooling mixes the pieces there.
// CHECK-LABEL: func.func @along_width(
// CHECK: %[[CAT:.*]] = tensor.concat dim(2)
// CHECK: linalg.pooling_nhwc_max {{.*}} ins(%[[CAT]],
func.func @along_width(%a: tensor<1x4x2x1xf32>, %b: tensor<1x4x2x1xf32>) -> tensor<1x2x2x1xf32> {
  %c = tensor.concat dim(2) %a, %b : (tensor<1x4x2x1xf32>, tensor<1x4x2x1xf32>) -> tensor<1x4x4x1xf32>
  %m = arith.constant 0xFF800000 : f32
  %win = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2x2x1xf32>
  %f = linalg.fill ins(%m : f32) outs(%e : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%c, %win : tensor<1x4x4x1xf32>, tensor<2x2xf32>) outs(%f : tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  return %r : tensor<1x2x2x1xf32>
}

// -----

// The init is the caller's tensor, not a fill: its pieces are not made again here.
// CHECK-LABEL: func.func @init_given(
// CHECK: %[[CAT:.*]] = tensor.concat dim(3)
// CHECK: linalg.pooling_nhwc_max {{.*}} ins(%[[CAT]],
func.func @init_given(%a: tensor<1x4x4x1xf32>, %b: tensor<1x4x4x1xf32>, %init: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%c, %win : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}

// -----

// A ceil-mode pooling's pad of the rows and columns between: each piece is padded the same way.
// CHECK-LABEL: func.func @padded(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<1x4x4x1xf32>, %[[B:[a-z0-9]+]]: tensor<1x4x4x2xf32>
// CHECK-NOT: tensor<1x5x5x3xf32>
// CHECK: %[[PADA:.*]] = tensor.pad %[[A]] low[0, 0, 0, 0] high[0, 1, 1, 0]
// CHECK: tensor<1x4x4x1xf32> to tensor<1x5x5x1xf32>
// CHECK: %[[PA:.*]] = linalg.pooling_nhwc_max {{.*}} ins(%[[PADA]],
// CHECK: %[[PADB:.*]] = tensor.pad %[[B]] low[0, 0, 0, 0] high[0, 1, 1, 0]
// CHECK: tensor<1x4x4x2xf32> to tensor<1x5x5x2xf32>
// CHECK: %[[PB:.*]] = linalg.pooling_nhwc_max {{.*}} ins(%[[PADB]],
// CHECK: %[[CAT:.*]] = tensor.concat dim(3) %[[PA]], %[[PB]] : {{.*}} -> tensor<1x2x2x3xf32>
// CHECK: func.return %[[CAT]]
func.func @padded(%a: tensor<1x4x4x1xf32>, %b: tensor<1x4x4x2xf32>) -> tensor<1x2x2x3xf32> {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x4x4x1xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32>
  %m = arith.constant 0xFF800000 : f32
  %p = tensor.pad %c low[0, 0, 0, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %m : f32
  } : tensor<1x4x4x3xf32> to tensor<1x5x5x3xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x2x2x3xf32>
  %f = linalg.fill ins(%m : f32) outs(%e : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %win : tensor<1x5x5x3xf32>, tensor<3x3xf32>) outs(%f : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %r : tensor<1x2x2x3xf32>
}

// -----

// The pad is also returned: the concatenation is needed anyway.
// CHECK-LABEL: func.func @pad_returned(
// CHECK: %[[CAT:.*]] = tensor.concat dim(3)
// CHECK: %[[PAD:.*]] = tensor.pad %[[CAT]]
// CHECK: linalg.pooling_nhwc_max {{.*}} ins(%[[PAD]],
func.func @pad_returned(%a: tensor<1x4x4x1xf32>, %b: tensor<1x4x4x2xf32>) -> (tensor<1x5x5x3xf32>, tensor<1x2x2x3xf32>) {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x4x4x1xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32>
  %m = arith.constant 0xFF800000 : f32
  %p = tensor.pad %c low[0, 0, 0, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %m : f32
  } : tensor<1x4x4x3xf32> to tensor<1x5x5x3xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x2x2x3xf32>
  %f = linalg.fill ins(%m : f32) outs(%e : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %win : tensor<1x5x5x3xf32>, tensor<3x3xf32>) outs(%f : tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %p, %r : tensor<1x5x5x3xf32>, tensor<1x2x2x3xf32>
}

// -----

// A pad of the channels too: pieces padded alone would not line up.
// CHECK-LABEL: func.func @pads_channels(
// CHECK: %[[CAT:.*]] = tensor.concat dim(3)
// CHECK: tensor.pad %[[CAT]]
func.func @pads_channels(%a: tensor<1x4x4x1xf32>, %b: tensor<1x4x4x2xf32>) -> tensor<1x2x2x4xf32> {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x4x4x1xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x3xf32>
  %m = arith.constant 0xFF800000 : f32
  %p = tensor.pad %c low[0, 0, 0, 0] high[0, 1, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %m : f32
  } : tensor<1x4x4x3xf32> to tensor<1x5x5x4xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x2x2x4xf32>
  %f = linalg.fill ins(%m : f32) outs(%e : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %win : tensor<1x5x5x4xf32>, tensor<3x3xf32>) outs(%f : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %r : tensor<1x2x2x4xf32>
}
