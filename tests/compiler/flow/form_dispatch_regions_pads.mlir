// Checks that a pad (a fill of a constant and an insert, as decompose-pad-and-concat leaves
// tensor.pad) read as a convolution's or a pooling's input joins that op's region, as does one
// behind the NCHW -> NHWC transpose of a convolution's input (an exporter's padded image), and
// that pads read by anything else (a transpose another op reads too), or filled with a value the
// host computes, stay regions of their own.
// RUN: weir-opt --split-input-file --form-dispatch-regions %s | filecheck %s

// CHECK-LABEL: func.func @pad_into_conv
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x10x10x8xf32>)
// CHECK-NEXT: %[[PAD:.*]] = tensor.insert_slice %x into %[[FILL]][0, 1, 1, 0] [1, 8, 8, 8] [1, 1, 1, 1]
// CHECK: %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[PAD]], %w : tensor<1x10x10x8xf32>, tensor<3x3x8x4xf32>)
// CHECK-NEXT: "flow.return"(%[[CONV]])
// CHECK-NOT: "flow.dispatch.region"
// CHECK: func.return %[[R]]
func.func @pad_into_conv(%x: tensor<1x8x8x8xf32>, %w: tensor<3x3x8x4xf32>) -> tensor<1x8x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x10x10x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x10x10x8xf32>) -> tensor<1x10x10x8xf32>
  %p = tensor.insert_slice %x into %f[0, 1, 1, 0] [1, 8, 8, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> into tensor<1x10x10x8xf32>
  %init = tensor.empty() : tensor<1x8x8x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x10x10x8xf32>, tensor<3x3x8x4xf32>) outs(%acc : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}

// -----

// A pad that something else reads as well is cloned into the depthwise convolution's region;
// the original stays a region of its own for its other reader.
// CHECK-LABEL: func.func @shared_pad_into_depthwise
// CHECK: %[[PAD:.*]] = "flow.dispatch.region"() ({
// CHECK: tensor.insert_slice %x into
// CHECK: "flow.return"
// CHECK: %[[DW:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[CLONE:.*]] = tensor.insert_slice %x into
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[CLONE]], %w
// CHECK: func.return %[[DW]], %[[PAD]]
func.func @shared_pad_into_depthwise(%x: tensor<1x8x8x8xf32>, %w: tensor<3x3x8xf32>) -> (tensor<1x8x8x8xf32>, tensor<1x10x10x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x10x10x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x10x10x8xf32>) -> tensor<1x10x10x8xf32>
  %p = tensor.insert_slice %x into %f[0, 1, 1, 0] [1, 8, 8, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> into tensor<1x10x10x8xf32>
  %init = tensor.empty() : tensor<1x8x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %0 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x10x10x8xf32>, tensor<3x3x8xf32>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %0, %p : tensor<1x8x8x8xf32>, tensor<1x10x10x8xf32>
}

// -----

// A max pool's -inf pad joins the pooling's region as well.
// CHECK-LABEL: func.func @pad_into_pool
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[PAD:.*]] = tensor.insert_slice %x into %{{.*}}[0, 1, 1, 0] [1, 8, 8, 8] [1, 1, 1, 1]
// CHECK: %[[POOL:.*]] = linalg.pooling_nhwc_max {{.*}} ins(%[[PAD]], %{{.*}} : tensor<1x10x10x8xf32>, tensor<3x3xf32>)
// CHECK-NEXT: "flow.return"(%[[POOL]])
// CHECK-NOT: "flow.dispatch.region"
// CHECK: func.return %[[R]]
func.func @pad_into_pool(%x: tensor<1x8x8x8xf32>) -> tensor<1x4x4x8xf32> {
  %low = arith.constant -3.4028234663852886e+38 : f32
  %e = tensor.empty() : tensor<1x10x10x8xf32>
  %f = linalg.fill ins(%low : f32) outs(%e : tensor<1x10x10x8xf32>) -> tensor<1x10x10x8xf32>
  %p = tensor.insert_slice %x into %f[0, 1, 1, 0] [1, 8, 8, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> into tensor<1x10x10x8xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %init = tensor.empty() : tensor<1x4x4x8xf32>
  %acc = linalg.fill ins(%low : f32) outs(%init : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  %0 = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %window : tensor<1x10x10x8xf32>, tensor<3x3xf32>) outs(%acc : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// A sum pool's pad of zeros read by an NCHW pooling, with an average's division after it: one
// region, the division its epilogue.
// CHECK-LABEL: func.func @pad_into_nchw_sum_pool
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[PAD:.*]] = tensor.insert_slice %x into
// CHECK: %[[POOL:.*]] = linalg.pooling_nchw_sum {{.*}} ins(%[[PAD]], %{{.*}} : tensor<1x8x6x6xf32>, tensor<2x2xf32>)
// CHECK: %[[AVG:.*]] = linalg.generic
// CHECK: "flow.return"(%[[AVG]])
// CHECK-NOT: "flow.dispatch.region"
// CHECK: func.return %[[R]]
func.func @pad_into_nchw_sum_pool(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %four = arith.constant 4.0 : f32
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %p = tensor.insert_slice %x into %f[0, 0, 1, 1] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<1x8x6x6xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %init = tensor.empty() : tensor<1x8x3x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %0 = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %window : tensor<1x8x6x6xf32>, tensor<2x2xf32>) outs(%acc : tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  %avg = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0 : tensor<1x8x3x3xf32>) outs(%init : tensor<1x8x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %four : f32
    linalg.yield %d : f32
  } -> tensor<1x8x3x3xf32>
  return %avg : tensor<1x8x3x3xf32>
}

// -----

// A pad of a value the host computes (a function argument) stays a region of its own.
// CHECK-LABEL: func.func @pad_of_a_host_value
// CHECK: "flow.dispatch.region"() ({
// CHECK: tensor.insert_slice
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK: "flow.return"
// CHECK: "flow.dispatch.region"() ({
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.conv_2d_nhwc_hwcf
func.func @pad_of_a_host_value(%x: tensor<1x8x8x8xf32>, %w: tensor<3x3x8x4xf32>, %v: f32) -> tensor<1x8x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x10x10x8xf32>
  %f = linalg.fill ins(%v : f32) outs(%e : tensor<1x10x10x8xf32>) -> tensor<1x10x10x8xf32>
  %p = tensor.insert_slice %x into %f[0, 1, 1, 0] [1, 8, 8, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> into tensor<1x10x10x8xf32>
  %init = tensor.empty() : tensor<1x8x8x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x10x10x8xf32>, tensor<3x3x8x4xf32>) outs(%acc : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}

// -----

// An exporter's padded NCHW image, transposed to a convolution's NHWC input (as
// convert-conv-to-channels-last leaves ResNet's stem): the pad joins the convolution's region
// with the transpose. A transpose that another op reads as well leaves the pad a region of its
// own.
// CHECK-LABEL: func.func @nchw_pad_into_conv
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[PAD:.*]] = tensor.insert_slice %x into %{{.*}}[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1]
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[PAD]]
// CHECK: %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[T]], %w : tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>)
// CHECK-NEXT: "flow.return"(%[[CONV]])
// CHECK-NOT: "flow.dispatch.region"
// CHECK: func.return %[[R]]
// CHECK-LABEL: func.func @nchw_pad_transposed_for_two
// CHECK: %[[OWN:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[INSERT:.*]] = tensor.insert_slice %x into
// CHECK-NEXT: "flow.return"(%[[INSERT]])
// CHECK: linalg.transpose ins(%[[OWN]]
// CHECK: linalg.transpose ins(%[[OWN]]
// CHECK-NEXT: arith.constant
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.conv_2d_nhwc_hwcf
func.func @nchw_pad_into_conv(%x: tensor<1x3x8x8xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x10x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %p = tensor.insert_slice %x into %f[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : tensor<1x3x8x8xf32> into tensor<1x3x10x10xf32>
  %te = tensor.empty() : tensor<1x10x10x3xf32>
  %t = linalg.transpose ins(%p : tensor<1x3x10x10xf32>) outs(%te : tensor<1x10x10x3xf32>) permutation = [0, 2, 3, 1]
  %init = tensor.empty() : tensor<1x8x8x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%t, %w : tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>) outs(%acc : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}
func.func @nchw_pad_transposed_for_two(%x: tensor<1x3x8x8xf32>, %w: tensor<3x3x3x4xf32>) -> (tensor<1x8x8x4xf32>, tensor<1x10x10x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x10x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %p = tensor.insert_slice %x into %f[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : tensor<1x3x8x8xf32> into tensor<1x3x10x10xf32>
  %te = tensor.empty() : tensor<1x10x10x3xf32>
  %t = linalg.transpose ins(%p : tensor<1x3x10x10xf32>) outs(%te : tensor<1x10x10x3xf32>) permutation = [0, 2, 3, 1]
  %init = tensor.empty() : tensor<1x8x8x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%t, %w : tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>) outs(%acc : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return %0, %t : tensor<1x8x8x4xf32>, tensor<1x10x10x3xf32>
}
