// Checks that --limit-sorts-to-prefixes marks a sort whose results are read only through
// slices starting at 0 along the sorted dimension with the longest such prefix, and leaves it
// unmarked when a slice starts elsewhere, something else reads it, or the prefix is more than a
// quarter of the line; the attribute prints and parses back.
// RUN: weir-opt --split-input-file --limit-sorts-to-prefixes %s | filecheck %s
// RUN: weir-opt --split-input-file --limit-sorts-to-prefixes %s | weir-opt --split-input-file - | filecheck %s

// CHECK-LABEL: func.func @top_k(
// CHECK: tm_tensor.sort dimension(1) {weir.sorted_prefix = 5 : i64} outs(
func.func @top_k(%v: tensor<2x40xf32>, %i: tensor<2x40xi64>) -> (tensor<2x3xf32>, tensor<2x5xi64>) {
  %0:2 = tm_tensor.sort dimension(1) outs(%v, %i : tensor<2x40xf32>, tensor<2x40xi64>) {
  ^bb0(%a: f32, %b: f32, %c: i64, %d: i64):
    %r = arith.cmpf oge, %a, %b : f32
    tm_tensor.yield %r : i1
  } -> tensor<2x40xf32>, tensor<2x40xi64>
  %s = tensor.extract_slice %0#0[0, 0] [2, 3] [1, 1] : tensor<2x40xf32> to tensor<2x3xf32>
  %j = tensor.extract_slice %0#1[0, 0] [2, 5] [1, 1] : tensor<2x40xi64> to tensor<2x5xi64>
  return %s, %j : tensor<2x3xf32>, tensor<2x5xi64>
}

// -----

// CHECK-LABEL: func.func @slice_not_at_the_start(
// CHECK-NOT: weir.sorted_prefix
func.func @slice_not_at_the_start(%v: tensor<40xf32>) -> tensor<3xf32> {
  %0 = iree_linalg_ext.sort dimension(0) outs(%v : tensor<40xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %r : i1
  } -> tensor<40xf32>
  %s = tensor.extract_slice %0[1] [3] [1] : tensor<40xf32> to tensor<3xf32>
  return %s : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @whole_result_read(
// CHECK-NOT: weir.sorted_prefix
func.func @whole_result_read(%v: tensor<40xf32>) -> (tensor<3xf32>, tensor<40xf32>) {
  %0 = iree_linalg_ext.sort dimension(0) outs(%v : tensor<40xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %r : i1
  } -> tensor<40xf32>
  %s = tensor.extract_slice %0[0] [3] [1] : tensor<40xf32> to tensor<3xf32>
  return %s, %0 : tensor<3xf32>, tensor<40xf32>
}

// -----

// CHECK-LABEL: func.func @prefix_too_long(
// CHECK-NOT: weir.sorted_prefix
func.func @prefix_too_long(%v: tensor<40xf32>) -> tensor<11xf32> {
  %0 = iree_linalg_ext.sort dimension(0) outs(%v : tensor<40xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %r : i1
  } -> tensor<40xf32>
  %s = tensor.extract_slice %0[0] [11] [1] : tensor<40xf32> to tensor<11xf32>
  return %s : tensor<11xf32>
}
