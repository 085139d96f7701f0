// Checks that each dispatch's workgroup count is the grid its target split the entry point into
// (recorded on the binary as `workgroup_grids`): a constant for static sizes, the host's
// ceildivui of the push constant carrying the split dimension for dynamic ones; and that a
// module carrying a binary without grids (reference) takes the count of the one that has them.
// RUN: weir-compile --iree-hal-target-backends=llvm-cpu --iree-hal-memoization=false --compile-to=hal %s | filecheck %s
// RUN: weir-compile --iree-hal-target-backends=reference,llvm-cpu --iree-hal-memoization=false --compile-to=hal %s | filecheck %s --check-prefix=BOTH

// CHECK: "hal.executable.binary"() <{sym_name = "llvm-cpu", {{.*}} entry_points = ["static_rows_dispatch_0"], {{.*}} workgroup_grids = {{\[\[}}512 : index, 1 : index]]}>
// CHECK-LABEL: func.func @static_rows(
// CHECK: %[[ROWS:.*]] = arith.constant 512 : index
// CHECK: "hal.command_buffer.dispatch"(%{{[^,]*}}, %{{[^,]*}}, %[[ROWS]], %[[ONE:[^,]*]], %[[ONE]],
// BOTH: "hal.executable.binary"() <{sym_name = "reference", {{.*}} entry_points = ["static_rows_dispatch_0"], data = "static_rows_dispatch_0_reference"}>
// BOTH-NEXT: "hal.executable.binary"() <{sym_name = "llvm-cpu", {{.*}} workgroup_grids = {{\[\[}}512 : index, 1 : index]]}>
// BOTH-LABEL: func.func @static_rows(
// BOTH: %[[ROWS:.*]] = arith.constant 512 : index
// BOTH: "hal.command_buffer.dispatch"(%{{[^,]*}}, %{{[^,]*}}, %[[ROWS]],
func.func @static_rows(%a: tensor<512x256xf32>, %b: tensor<256x512xf32>) -> tensor<512x512xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %m = linalg.matmul ins(%a, %b : tensor<512x256xf32>, tensor<256x512xf32>) outs(%f : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %m : tensor<512x512xf32>
}

// CHECK: "hal.executable.binary"() <{sym_name = "llvm-cpu", {{.*}} entry_points = ["dynamic_rows_dispatch_0"], {{.*}} workgroup_grids = {{\[\[}}"push", 0 : index, [[TILE:[0-9]+]] : index]]}>
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK: %[[N:.*]] = "hal.buffer_view.dim"(%{{.*}}) <{index = 0 : index}>
// CHECK: %[[T:.*]] = arith.constant [[TILE]] : index
// CHECK: %[[COUNT:.*]] = arith.ceildivui %[[N]], %[[T]] : index
// CHECK: "hal.command_buffer.dispatch"(%{{[^,]*}}, %{{[^,]*}}, %[[COUNT]], %{{[^,]*}}, %{{[^,]*}}, %[[N]],
func.func @dynamic_rows(%a: tensor<?x1024xf32>) -> tensor<?x1024xf32> {
  %0 = math.exp %a : tensor<?x1024xf32>
  return %0 : tensor<?x1024xf32>
}

// A pad (its fill and insert, one dispatch) splits along the outermost dimension the window spans
// whole: the channels of an NCHW image padded in H and W.
// CHECK: "hal.executable.binary"() <{sym_name = "llvm-cpu", {{.*}} entry_points = ["pad_spatial_dispatch_0"], {{.*}} workgroup_grids = {{\[\[}}256 : index, 32 : index]]}>
// CHECK-LABEL: func.func @pad_spatial(
// CHECK: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK: "hal.command_buffer.dispatch"(%{{[^,]*}}, %{{[^,]*}}, %[[EIGHT]],
func.func @pad_spatial(%x: tensor<1x256x30x30xf32>) -> tensor<1x256x32x32xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x256x30x30xf32> to tensor<1x256x32x32xf32>
  return %p : tensor<1x256x32x32xf32>
}

// A pad of the outermost dimension itself splits along it too: each workgroup fills its rows of
// the destination and copies the source rows that land in them.
// CHECK: "hal.executable.binary"() <{sym_name = "llvm-cpu", {{.*}} entry_points = ["pad_rows_dispatch_0"], {{.*}} workgroup_grids = {{\[\[}}258 : index, 32 : index]]}>
func.func @pad_rows(%x: tensor<256x1024xf32>) -> tensor<258x1024xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%a: index, %b: index):
    tensor.yield %z : f32
  } : tensor<256x1024xf32> to tensor<258x1024xf32>
  return %p : tensor<258x1024xf32>
}

// So does an NHWC image padded in H and W, along H (its outermost dimension larger than one).
// CHECK: "hal.executable.binary"() <{sym_name = "llvm-cpu", {{.*}} entry_points = ["pad_nhwc_dispatch_0"], {{.*}} workgroup_grids = {{\[\[}}58 : index, 9 : index]]}>
func.func @pad_nhwc(%x: tensor<1x56x56x64xf32>) -> tensor<1x58x58x64xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x56x56x64xf32> to tensor<1x58x58x64xf32>
  return %p : tensor<1x58x58x64xf32>
}

// A pad read by a convolution joins its dispatch, and the convolution keeps its grid of output
// rows: the padded input is no second root that would make the entry one workgroup.
// CHECK: "hal.executable.binary"() <{sym_name = "llvm-cpu", {{.*}} entry_points = ["padded_depthwise_dispatch_0"], {{.*}} workgroup_grids = {{\[\[}}56 : index, 3 : index]]}>
func.func @padded_depthwise(%x: tensor<1x56x56x32xf32>, %w: tensor<3x3x32xf32>) -> tensor<1x56x56x32xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<1x56x56x32xf32> to tensor<1x58x58x32xf32>
  %e = tensor.empty() : tensor<1x56x56x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x58x58x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x56x56x32xf32>) -> tensor<1x56x56x32xf32>
  return %c : tensor<1x56x56x32xf32>
}

// A concat of NHWC images along C splits over H: each workgroup copies its rows of every piece.
// CHECK: "hal.executable.binary"() <{sym_name = "llvm-cpu", {{.*}} entry_points = ["concat_channels_dispatch_0"], {{.*}} workgroup_grids = {{\[\[}}55 : index, 5 : index]]}>
func.func @concat_channels(%a: tensor<1x55x55x64xf32>, %b: tensor<1x55x55x64xf32>) -> tensor<1x55x55x128xf32> {
  %c = tensor.concat dim(3) %a, %b : (tensor<1x55x55x64xf32>, tensor<1x55x55x64xf32>) -> tensor<1x55x55x128xf32>
  return %c : tensor<1x55x55x128xf32>
}
