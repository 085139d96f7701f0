// Checks that the named linalg ops weir adds to xDSL's (and the MLIR syntax it adds to xDSL's
// matmul and reduce) parse, pass the input phase's op check, and print in a form that parses
// back to the same thing.
// RUN: weir-opt --split-input-file --check-supported-ops %s | filecheck %s
// RUN: weir-opt --split-input-file %s | weir-opt --split-input-file - | filecheck %s

// Contractions print as written.
// CHECK-LABEL: func.func @contractions
// CHECK: linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%o : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
// CHECK: linalg.matvec ins(%m, %v : tensor<3x4xf32>, tensor<4xf32>) outs(%y : tensor<3xf32>) -> tensor<3xf32>
// CHECK: linalg.vecmat ins(%w, %m : tensor<3xf32>, tensor<3x4xf32>) outs(%v : tensor<4xf32>) -> tensor<4xf32>
// CHECK: linalg.dot ins(%v, %v : tensor<4xf32>, tensor<4xf32>) outs(%s : tensor<f32>) -> tensor<f32>
// CHECK: linalg.matmul_transpose_a ins(%m, %m : tensor<3x4xf32>, tensor<3x4xf32>) outs(%q : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: linalg.batch_matmul_transpose_b ins(%a, %a : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%r : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
func.func @contractions(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %o: tensor<2x3x5xf32>, %m: tensor<3x4xf32>, %v: tensor<4xf32>, %w: tensor<3xf32>, %y: tensor<3xf32>, %s: tensor<f32>, %q: tensor<4x4xf32>, %r: tensor<2x3x3xf32>) -> (tensor<2x3x5xf32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<4x4xf32>, tensor<2x3x3xf32>) {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%o : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %1 = linalg.matvec ins(%m, %v : tensor<3x4xf32>, tensor<4xf32>) outs(%y : tensor<3xf32>) -> tensor<3xf32>
  %2 = linalg.vecmat ins(%w, %m : tensor<3xf32>, tensor<3x4xf32>) outs(%v : tensor<4xf32>) -> tensor<4xf32>
  %3 = linalg.dot ins(%v, %v : tensor<4xf32>, tensor<4xf32>) outs(%s : tensor<f32>) -> tensor<f32>
  %4 = linalg.matmul_transpose_a ins(%m, %m : tensor<3x4xf32>, tensor<3x4xf32>) outs(%q : tensor<4x4xf32>) -> tensor<4x4xf32>
  %5 = linalg.batch_matmul_transpose_b ins(%a, %a : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%r : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3x5xf32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<4x4xf32>, tensor<2x3x3xf32>
}

// -----

// matmul keeps MLIR's `indexing_maps = [...]` (xDSL alone would drop them when printing); a
// matmul without them prints none.
// CHECK-LABEL: func.func @matmul_maps
// CHECK: linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<5x4xf32>, tensor<6x5xf32>)
// CHECK: linalg.matmul ins(%c, %b2 : tensor<4x5xf32>, tensor<5x6xf32>)
func.func @matmul_maps(%a: tensor<5x4xf32>, %b: tensor<6x5xf32>, %c: tensor<4x5xf32>, %b2: tensor<5x6xf32>, %o: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<5x4xf32>, tensor<6x5xf32>) outs(%o : tensor<4x6xf32>) -> tensor<4x6xf32>
  %1 = linalg.matmul ins(%c, %b2 : tensor<4x5xf32>, tensor<5x6xf32>) outs(%o : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0, %1 : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// map prints as MLIR prints it: in the short form while its body is one op on the inputs;
// softmax keeps its dimension.
// CHECK-LABEL: func.func @map_softmax
// CHECK: linalg.map { arith.negf } ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>)
// CHECK-NEXT: linalg.softmax dimension(0) ins(%{{.*}} : tensor<4xf32>) outs(%o : tensor<4xf32>) -> tensor<4xf32>
func.func @map_softmax(%a: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.map { arith.negf } ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>)
  %1 = linalg.softmax dimension(0) ins(%0 : tensor<4xf32>) outs(%o : tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
