// Checks that linalg.batch_matvec with sizes that disagree and linalg.negf with other than one
// input are rejected at their location. The valid forms are in linalg_negf_batch_matvec.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

func.func @k_differs(%a: tensor<2x3x4xi8>, %v: tensor<2x3xi8>, %o: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // ERR: linalg_negf_batch_matvec_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.batch_matvec' op size of K differs: matrix dimension 2 is 4, vector dimension 1 is 3
  %0 = linalg.batch_matvec ins(%a, %v : tensor<2x3x4xi8>, tensor<2x3xi8>) outs(%o : tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @batch_differs(%a: tensor<2x3x4xi8>, %v: tensor<5x4xi8>, %o: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // ERR: linalg_negf_batch_matvec_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.batch_matvec' op size of B differs
  %0 = linalg.batch_matvec ins(%a, %v : tensor<2x3x4xi8>, tensor<5x4xi8>) outs(%o : tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @two_inputs(%x: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: linalg_negf_batch_matvec_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.negf' op expects 1 input(s) and 1 output, got 2 and 1
  %0 = linalg.negf ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%o : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
