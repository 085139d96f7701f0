// Checks that tensor ops whose shapes, sizes or indices disagree are rejected at the op's own
// location, naming the sizes (reshapes, single-element access, slices, pad, concat, cast,
// empty, from_elements, dim). Every chunk fails, each with its own location, and nothing is
// printed. The valid forms are in verify_ops_valid.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// collapse_shape: a 2x4 does not collapse into 6 elements.
func.func @collapse_count(%a: tensor<2x4xf32>) -> tensor<6xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' op result dimension 0 is 6, but source dimensions [0, 1] of sizes 2 x 4 hold 8 element(s)
  %0 = tensor.collapse_shape %a [[0, 1]] : tensor<2x4xf32> into tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// collapse_shape: the groups must cover every source dimension, in order, from 0.
func.func @collapse_groups(%a: tensor<2x4x1xf32>) -> tensor<8xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' op reassociation [[1, 2]] must list the dimensions 0 to 2 of tensor<2x4x1xf32> in order, in 1 non-empty group(s), one per dimension of tensor<8xf32>
  %0 = tensor.collapse_shape %a [[1, 2]] : tensor<2x4x1xf32> into tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// collapse_shape: an empty group.
func.func @collapse_empty_group(%a: tensor<2x4xf32>) -> tensor<8x1xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' op reassociation [[0, 1], []] must list the dimensions 0 to 1 of tensor<2x4xf32> in order, in 2 non-empty group(s), one per dimension of tensor<8x1xf32>
  %0 = tensor.collapse_shape %a [[0, 1], []] : tensor<2x4xf32> into tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

// collapse_shape: a reshape keeps the element type.
func.func @collapse_element(%a: tensor<2x4xf32>) -> tensor<8xi32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' op the source element type f32 differs from the result's, i32
  %0 = tensor.collapse_shape %a [[0, 1]] : tensor<2x4xf32> into tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// collapse_shape: a collapse does not raise the rank.
func.func @collapse_rank(%a: tensor<8xf32>) -> tensor<2x4xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' op collapses tensor<8xf32> into tensor<2x4xf32>, which has a higher rank
  %0 = tensor.collapse_shape %a [[0, 1]] : tensor<8xf32> into tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// collapse_shape: a group with a dynamic size collapses into a dynamic size.
func.func @collapse_dynamic(%a: tensor<?x4xf32>) -> tensor<8xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' op result dimension 0 is 8, but source dimensions [0, 1] (sizes [?, 4]) include a dynamic one, so it must be dynamic
  %0 = tensor.collapse_shape %a [[0, 1]] : tensor<?x4xf32> into tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// collapse_shape: into a rank-0 tensor, every source dimension is 1.
func.func @collapse_rank0(%a: tensor<1x2xf32>) -> tensor<f32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' op a rank-0 tensor<f32> goes with an empty reassociation and a tensor<1x2xf32> whose dimensions are all 1
  %0 = tensor.collapse_shape %a [] : tensor<1x2xf32> into tensor<f32>
  return %0 : tensor<f32>
}

// -----

// expand_shape: 6 elements do not expand into 2x4.
func.func @expand_count(%a: tensor<6xf32>) -> tensor<2x4xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.expand_shape' op source dimension 0 is 6, but result dimensions [0, 1] of sizes 2 x 4 hold 8 element(s)
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [2, 4] : tensor<6xf32> into tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// expand_shape: output_shape must agree with the result type.
func.func @expand_output_shape(%a: tensor<8xf32>) -> tensor<2x4xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.expand_shape' op output_shape [4, 2] does not match the result type tensor<2x4xf32>
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// expand_shape: a dynamic output_shape entry for a static result dimension.
func.func @expand_dynamic_entry(%a: tensor<?xf32>, %n: index) -> tensor<?x4xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.expand_shape' op output_shape [?, ?] does not match the result type tensor<?x4xf32>
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [%n, %n] : tensor<?xf32> into tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// expand_shape: the groups start at dimension 0.
func.func @expand_groups(%a: tensor<8xf32>) -> tensor<2x4xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.expand_shape' op reassociation [[1, 2]] must list the dimensions 0 to 1 of tensor<2x4xf32> in order, in 1 non-empty group(s), one per dimension of tensor<8xf32>
  %0 = tensor.expand_shape %a [[1, 2]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// expand_shape: a reshape keeps the element type.
func.func @expand_element(%a: tensor<8xf32>) -> tensor<2x4xf16> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.expand_shape' op the source element type f32 differs from the result's, f16
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf16>
  return %0 : tensor<2x4xf16>
}

// -----

// reshape: a constant shape operand gives the result's sizes.
func.func @reshape_constant_shape(%a: tensor<6xf32>) -> tensor<?x2xf32> {
  %s = arith.constant dense<[3, 3]> : tensor<2xindex>
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.reshape' op the shape operand gives dimension 1 the size 3, but the result type is tensor<?x2xf32>
  %0 = tensor.reshape %a(%s) : (tensor<6xf32>, tensor<2xindex>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// cast: only the shape's dynamic sizes may change, not the element type.
func.func @cast_element(%a: tensor<4xf32>) -> tensor<4xi32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.cast' op the source element type f32 differs from the result's, i32
  %0 = tensor.cast %a : tensor<4xf32> to tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// extract: a constant index past the end.
func.func @extract_past_end(%a: tensor<4xf32>) -> f32 {
  %c9 = arith.constant 9 : index
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.extract' op index 9 is out of range for dimension 0 of tensor<4xf32> (size 4)
  %0 = tensor.extract %a[%c9] : tensor<4xf32>
  return %0 : f32
}

// -----

// extract: a negative constant index, in a dynamic dimension.
func.func @extract_negative(%a: tensor<2x?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.extract' op index -1 is out of range for dimension 1 of tensor<2x?xf32>
  %0 = tensor.extract %a[%c0, %m1] : tensor<2x?xf32>
  return %0 : f32
}

// -----

// extract: one index per dimension.
func.func @extract_count(%a: tensor<4x4xf32>) -> f32 {
  %c1 = arith.constant 1 : index
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.extract' op expects 2 index(es) for tensor<4x4xf32>, one per dimension, got 1
  %0 = tensor.extract %a[%c1] : tensor<4x4xf32>
  return %0 : f32
}

// -----

// insert: a constant index past the end.
func.func @insert_past_end(%a: tensor<4xf32>, %x: f32) -> tensor<4xf32> {
  %c4 = arith.constant 4 : index
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.insert' op index 4 is out of range for dimension 0 of tensor<4xf32> (size 4)
  %0 = tensor.insert %x into %a[%c4] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// insert: one index per dimension.
func.func @insert_count(%a: tensor<4xf32>, %x: f32) -> tensor<4xf32> {
  %c1 = arith.constant 1 : index
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.insert' op expects 1 index(es) for tensor<4xf32>, one per dimension, got 2
  %0 = tensor.insert %x into %a[%c1, %c1] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// dim: a constant index that is not a dimension.
func.func @dim_out_of_range(%a: tensor<?xf32>) -> index {
  %c5 = arith.constant 5 : index
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.dim' op index 5 is out of range for tensor<?xf32>, whose dimensions are 0 to 0
  %0 = tensor.dim %a, %c5 : tensor<?xf32>
  return %0 : index
}

// -----

// from_elements: one element per element of the result.
func.func @from_elements_count(%x: f32) -> tensor<3xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.from_elements' op builds tensor<3xf32> of 3 element(s) from 2
  %0 = tensor.from_elements %x, %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// empty: one size per dynamic dimension.
func.func @empty_sizes(%n: index) -> tensor<?x?xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.empty' op expects 2 dynamic size(s) for tensor<?x?xf32>, one per '?', got 1
  %0 = tensor.empty(%n) : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// empty: a constant dynamic size that is negative.
func.func @empty_negative() -> tensor<?xf32> {
  %n = arith.constant -3 : index
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.empty' op the size -3 given for dimension 0 of tensor<?xf32> is negative
  %0 = tensor.empty(%n) : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// splat: a constant dynamic size that is negative (it failed in the hal phase, unlocated).
func.func @splat_negative(%x: f32) -> tensor<?xf32> {
  %n = arith.constant -3 : index
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.splat' op the size -3 given for dimension 0 of tensor<?xf32> is negative
  %0 = tensor.splat %x[%n] : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// expand_shape: a constant dynamic size that is negative.
func.func @expand_negative(%a: tensor<?xf32>) -> tensor<?x4xf32> {
  %n = arith.constant -2 : index
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.expand_shape' op output_shape has the negative size -2
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [%n, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// extract_slice: the window ends past the source.
func.func @extract_slice_bounds(%a: tensor<8xf32>) -> tensor<4xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.extract_slice' op the slice of dimension 0 is out of bounds: offset 0, 4 element(s) with stride 3 reach index 9, past the last index 7 of tensor<8xf32>
  %0 = tensor.extract_slice %a[0] [4] [3] : tensor<8xf32> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// extract_slice: the result's shape is the slice's sizes.
func.func @extract_slice_shape(%a: tensor<8xf32>) -> tensor<3xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.extract_slice' op the result type tensor<3xf32> does not match the slice sizes [4] (a slice may only leave out sizes of 1)
  %0 = tensor.extract_slice %a[0] [4] [1] : tensor<8xf32> to tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// extract_slice: one offset, size and stride per source dimension.
func.func @extract_slice_rank(%a: tensor<8x8xf32>) -> tensor<4xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.extract_slice' op expects 2 offsets, sizes and strides for tensor<8x8xf32>, one per dimension, got 1, 1 and 1
  %0 = tensor.extract_slice %a[0] [4] [1] : tensor<8x8xf32> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// extract_slice: a slice keeps the element type.
func.func @extract_slice_element(%a: tensor<8xf32>) -> tensor<4xi32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.extract_slice' op the source element type f32 differs from the result's, i32
  %0 = tensor.extract_slice %a[0] [4] [1] : tensor<8xf32> to tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// insert_slice: the window ends past the destination.
func.func @insert_slice_bounds(%a: tensor<8xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.insert_slice' op the slice of dimension 0 is out of bounds: offset 6, 4 element(s) with stride 1 reach index 9, past the last index 7 of tensor<8xf32>
  %0 = tensor.insert_slice %b into %a[6] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// insert_slice: the source's shape is the slice's sizes.
func.func @insert_slice_shape(%a: tensor<8xf32>, %b: tensor<3xf32>) -> tensor<8xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.insert_slice' op the source type tensor<3xf32> does not match the slice sizes [4] (a slice may only leave out sizes of 1)
  %0 = tensor.insert_slice %b into %a[0] [4] [1] : tensor<3xf32> into tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// insert_slice: the source and the destination have one element type.
func.func @insert_slice_element(%a: tensor<8xf32>, %b: tensor<4xi32>) -> tensor<8xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.insert_slice' op the source element type i32 differs from the destination's, f32
  %0 = tensor.insert_slice %b into %a[0] [4] [1] : tensor<4xi32> into tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// pad: the result's size is the source's plus both paddings.
func.func @pad_size(%a: tensor<4xf32>) -> tensor<9xf32> {
  %z = arith.constant 0.0 : f32
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.pad' op result dimension 0 is 9, but the source's 4 padded by 1 + 2 is 7
  %0 = tensor.pad %a low[1] high[2] {
  ^bb0(%i: index):
    tensor.yield %z : f32
  } : tensor<4xf32> to tensor<9xf32>
  return %0 : tensor<9xf32>
}

// -----

// pad: the body yields the padding value in the element type.
func.func @pad_yield(%a: tensor<4xf32>) -> tensor<7xf32> {
  %z = arith.constant 0 : i32
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.pad' op the body must yield one f32, the element type of tensor<7xf32>; it yields i32
  %0 = tensor.pad %a low[1] high[2] {
  ^bb0(%i: index):
    tensor.yield %z : i32
  } : tensor<4xf32> to tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// pad: the body's arguments are indices.
func.func @pad_argument(%a: tensor<4xf32>) -> tensor<7xf32> {
  %z = arith.constant 0.0 : f32
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.pad' op the body's argument #0 has type f32; each argument is the index of a dimension, of type index
  %0 = tensor.pad %a low[1] high[2] {
  ^bb0(%i: f32):
    tensor.yield %z : f32
  } : tensor<4xf32> to tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// pad: a negative padding.
func.func @pad_negative(%a: tensor<4xf32>) -> tensor<3xf32> {
  %z = arith.constant 0.0 : f32
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.pad' op low padding -1 of dimension 0 is negative
  %0 = tensor.pad %a low[-1] high[0] {
  ^bb0(%i: index):
    tensor.yield %z : f32
  } : tensor<4xf32> to tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// concat: a negative dimension.
func.func @concat_dim(%a: tensor<4xf32>) -> tensor<8xf32> {
  // ERR: verify_tensor_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.concat' op dim(-1) is not a dimension of tensor<8xf32>: it must be 0 to 0
  %0 = tensor.concat dim(-1) %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
