// Checks that a tensor.pad whose body computes the padding value (from the indices, or from
// anything but a constant or a value from outside the pad) is rejected at the pad's location.
// RUN: not weir-opt --split-input-file --decompose-pad-and-concat %s 2>&1 | filecheck %s

// The padding value depends on the index.
func.func @from_index(%x: tensor<4xf32>) -> tensor<6xf32> {
  // CHECK: decompose_pad_and_concat_errors.mlir:[[# @LINE + 1]]:3: error: tensor.pad whose body computes its padding value is not supported
  %0 = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    %v = arith.index_cast %i : index to i32
    %f = arith.sitofp %v : i32 to f32
    tensor.yield %f : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// The body yields an index directly.
func.func @yields_index(%x: tensor<4xindex>) -> tensor<6xindex> {
  // CHECK: decompose_pad_and_concat_errors.mlir:[[# @LINE + 1]]:3: error: tensor.pad whose body computes its padding value is not supported
  %0 = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %i : index
  } : tensor<4xindex> to tensor<6xindex>
  return %0 : tensor<6xindex>
}
