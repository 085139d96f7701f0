// Checks that linalg ops whose results, bodies or operand counts disagree with their outputs
// are rejected at the op's own location (or the linalg.yield's or linalg.index's), naming the
// types. Every chunk fails, each with its own location, and nothing is printed. The valid forms
// are in verify_ops_valid.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// generic: the body yields an i32 for an f32 output.
func.func @generic_yield_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 1 : i32
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:5: error: 'linalg.yield' op value #0 has type i32, but output #0 of the enclosing 'linalg.generic' has element type f32
    linalg.yield %c : i32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// generic: one yielded value per output.
func.func @generic_yield_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:5: error: 'linalg.yield' op yields 2 value(s), but the enclosing 'linalg.generic' has 1 output(s)
    linalg.yield %x, %y : f32, f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// generic: the result has the type of its output.
func.func @generic_result_type(%a: tensor<4xf32>) -> tensor<5xf32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.generic' op result #0 has type tensor<5xf32>, but its output has type tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// generic: a tensor output is returned as a result.
func.func @generic_no_result(%a: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.generic' op expects 1 result(s), one of the type of each output (tensor<4xf32>), got 0
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return %a : tensor<4xf32>
}

// -----

// generic: linalg.index names one of the loops.
func.func @generic_index(%a: tensor<4xindex>) -> tensor<4xindex> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%a : tensor<4xindex>) {
  ^bb0(%y: index):
    // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:5: error: 'linalg.index' op dimension 3 is not a loop of the enclosing 'linalg.generic', whose loops are 0 to 0
    %i = linalg.index 3 : index
    linalg.yield %i : index
  } -> tensor<4xindex>
  return %0 : tensor<4xindex>
}

// -----

// reduce: the body yields the output's element type.
func.func @reduce_yield(%a: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 1 : i32
  %0 = linalg.reduce ins(%a : tensor<4x3xf32>) outs(%b : tensor<4xf32>) dimensions = [1]
    (%x: f32, %y: f32) {
      // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:7: error: 'linalg.yield' op value #0 has type i32, but output #0 of the enclosing 'linalg.reduce' has element type f32
      linalg.yield %c : i32
    }
  return %0 : tensor<4xf32>
}

// -----

// reduce: the body takes an input element and an accumulator.
func.func @reduce_arguments(%a: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.reduce' op the body takes (f16, f32), but it must take the element types of the input and of the output, (f32, f32)
  %0 = linalg.reduce ins(%a : tensor<4x3xf32>) outs(%b : tensor<4xf32>) dimensions = [1]
    (%x: f16, %y: f32) {
      linalg.yield %y : f32
    }
  return %0 : tensor<4xf32>
}

// -----

// fill: the result has the type of its output.
func.func @fill_result(%v: f32) -> tensor<5xf32> {
  %i = tensor.empty() : tensor<4xf32>
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.fill' op result #0 has type tensor<5xf32>, but its output has type tensor<4xf32>
  %0 = linalg.fill ins(%v : f32) outs(%i : tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// add: two inputs (with one, it added the output to it).
func.func @add_arity(%a: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.add' op expects 2 input(s) and 1 output, got 1 and 1
  %0 = linalg.add ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// exp: one input.
func.func @exp_arity(%a: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.exp' op expects 1 input(s) and 1 output, got 2 and 1
  %0 = linalg.exp ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%a : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// add: the result has the type of its output.
func.func @add_result(%a: tensor<4xf32>) -> tensor<5xf32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.add' op result #0 has type tensor<5xf32>, but its output has type tensor<4xf32>
  %0 = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%a : tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// matmul: the result has the type of its output.
func.func @matmul_result(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %o: tensor<3x5xf32>) -> tensor<3x6xf32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.matmul' op result #0 has type tensor<3x6xf32>, but its output has type tensor<3x5xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%o : tensor<3x5xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// batch_matmul: the result has the type of its output.
func.func @batch_matmul_result(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %o: tensor<2x3x5xf32>) -> tensor<2x3x6xf32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.batch_matmul' op result #0 has type tensor<2x3x6xf32>, but its output has type tensor<2x3x5xf32>
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%o : tensor<2x3x5xf32>) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}

// -----

// conv: the result has the type of its output.
func.func @conv_result(%a: tensor<1x4x4x1xf32>, %w: tensor<3x3x1x1xf32>, %o: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.conv_2d_nhwc_hwcf' op result #0 has type tensor<1x2x2x2xf32>, but its output has type tensor<1x2x2x1xf32>
  %0 = linalg.conv_2d_nhwc_hwcf ins(%a, %w : tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) outs(%o : tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// transpose: the element type stays.
func.func @transpose_element(%a: tensor<2x3xf32>, %b: tensor<3x2xi32>) -> tensor<3x2xi32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.transpose' op the input element type f32 differs from the output's, i32
  %0 = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xi32>) permutation = [1, 0]
  return %0 : tensor<3x2xi32>
}

// -----

// broadcast: the element type stays.
func.func @broadcast_element(%a: tensor<3xf32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // ERR: verify_linalg_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.broadcast' op the input element type f32 differs from the output's, i32
  %0 = linalg.broadcast ins(%a : tensor<3xf32>) outs(%b : tensor<2x3xi32>) dimensions = [0]
  return %0 : tensor<2x3xi32>
}
