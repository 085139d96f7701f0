// Checks that named linalg ops (contractions, map, softmax, matmul with indexing_maps) whose
// operands disagree are rejected at the op's own location, naming the operands and sizes. Every
// chunk fails, each with its own location, and nothing is printed. The valid forms are in
// generalize_named_ops.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// batch_matmul: the contracted sizes differ.
func.func @batch_matmul_k(%a: tensor<2x3x4xf32>, %b: tensor<2x5x6xf32>, %o: tensor<2x3x6xf32>) -> tensor<2x3x6xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.batch_matmul' op size of K differs: lhs dimension 2 is 4, rhs dimension 1 is 5
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x5x6xf32>) outs(%o : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}

// -----

// batch_matmul: the batch sizes differ.
func.func @batch_matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x6xf32>, %o: tensor<2x3x6xf32>) -> tensor<2x3x6xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.batch_matmul' op size of B differs: lhs dimension 0 is 2, rhs dimension 0 is 3
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<3x4x6xf32>) outs(%o : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}

// -----

// matmul: the output has the wrong number of columns.
func.func @matmul_n(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %o: tensor<3x6xf32>) -> tensor<3x6xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.matmul' op size of N differs: rhs dimension 1 is 5, output dimension 1 is 6
  %0 = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%o : tensor<3x6xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// matmul_transpose_b: the rhs is (N, K), so its second dimension must match the lhs's.
func.func @matmul_transpose_b(%a: tensor<3x4xf32>, %b: tensor<6x5xf32>, %o: tensor<3x6xf32>) -> tensor<3x6xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.matmul_transpose_b' op size of K differs: lhs dimension 1 is 4, rhs dimension 1 is 5
  %0 = linalg.matmul_transpose_b ins(%a, %b : tensor<3x4xf32>, tensor<6x5xf32>) outs(%o : tensor<3x6xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// matmul with indexing_maps: sizes are checked through the maps (here the lhs is (K, M)).
func.func @matmul_maps(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>, %o: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.matmul' op size of K differs: lhs dimension 0 is 3, rhs dimension 0 is 5
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<3x4xf32>, tensor<5x6xf32>) outs(%o : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// matmul with indexing_maps that are not maps.
func.func @matmul_bad_maps(%a: tensor<3x4xf32>, %b: tensor<4x6xf32>, %o: tensor<3x6xf32>) -> tensor<3x6xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:38: error: indexing_maps must be a list of affine maps
  %0 = linalg.matmul indexing_maps = [1, 2, 3] ins(%a, %b : tensor<3x4xf32>, tensor<4x6xf32>) outs(%o : tensor<3x6xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// matvec: the vector is as long as the matrix has rows, not columns.
func.func @matvec(%a: tensor<3x4xf32>, %x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.matvec' op size of K differs: matrix dimension 1 is 4, vector dimension 0 is 3
  %0 = linalg.matvec ins(%a, %x : tensor<3x4xf32>, tensor<3xf32>) outs(%y : tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// vecmat: a matrix where the vector should be.
func.func @vecmat_rank(%x: tensor<4x1xf32>, %a: tensor<4x3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.vecmat' op vector must have rank 1, got tensor<4x1xf32>
  %0 = linalg.vecmat ins(%x, %a : tensor<4x1xf32>, tensor<4x3xf32>) outs(%y : tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// dot: the result is a rank-0 tensor.
func.func @dot_output(%a: tensor<4xf32>, %b: tensor<4xf32>, %o: tensor<1xf32>) -> tensor<1xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.dot' op output must have rank 0, got tensor<1xf32>
  %0 = linalg.dot ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%o : tensor<1xf32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// A contraction given one input.
func.func @one_input(%a: tensor<3x4xf32>, %o: tensor<3x3xf32>) -> tensor<3x3xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.matmul_transpose_b' op expects 2 inputs (lhs, rhs) and 1 output, got 1 and 1
  %0 = linalg.matmul_transpose_b ins(%a : tensor<3x4xf32>) outs(%o : tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// map: an input of another shape than the output.
func.func @map_shape(%a: tensor<3x4xf32>, %o: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.map' op input #0 of type tensor<3x4xf32> does not have the shape of the output tensor<3x5xf32>
  %0 = linalg.map ins(%a : tensor<3x4xf32>) outs(%o : tensor<3x5xf32>)
    (%x: f32) {
      linalg.yield %x : f32
    }
  return %0 : tensor<3x5xf32>
}

// -----

// map: the mapper yields the input's type, not the output's.
func.func @map_yield(%a: tensor<4xf32>, %o: tensor<4xi32>) -> tensor<4xi32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.map' op the mapper must yield one i32
  %0 = linalg.map ins(%a : tensor<4xf32>) outs(%o : tensor<4xi32>)
    (%x: f32) {
      linalg.yield %x : f32
    }
  return %0 : tensor<4xi32>
}

// -----

// map: one mapper argument for two inputs.
func.func @map_args(%a: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.map' op the mapper takes 1 argument(s) for 2 input(s)
  %0 = linalg.map ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%o : tensor<4xf32>)
    (%x: f32) {
      linalg.yield %x : f32
    }
  return %0 : tensor<4xf32>
}

// -----

// map short form naming an op that does not exist.
func.func @map_short(%a: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:21: error: Operation arith.nope is not registered
  %0 = linalg.map { arith.nope } ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>)
  return %0 : tensor<4xf32>
}

// -----

// softmax: the dimension is out of range.
func.func @softmax_dim(%a: tensor<3x4xf32>, %o: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.softmax' op dimension 2 is out of range for rank 2
  %0 = linalg.softmax dimension(2) ins(%a : tensor<3x4xf32>) outs(%o : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// softmax: output and input shapes differ.
func.func @softmax_shape(%a: tensor<3x4xf32>, %o: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.softmax' op output tensor<3x5xf32> does not have the shape of the input tensor<3x4xf32>
  %0 = linalg.softmax dimension(1) ins(%a : tensor<3x4xf32>) outs(%o : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// softmax of integers.
func.func @softmax_type(%a: tensor<3x4xi32>, %o: tensor<3x4xi32>) -> tensor<3x4xi32> {
  // ERR: linalg_named_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.softmax' op input and output must have the same float element type, got tensor<3x4xi32> and tensor<3x4xi32>
  %0 = linalg.softmax dimension(1) ins(%a : tensor<3x4xi32>) outs(%o : tensor<3x4xi32>) -> tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
}
