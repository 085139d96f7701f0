// Checks that util.optimization_barrier prints in IREE's form (attributes, then operands and
// their types; none at all for a barrier of nothing) and parses back unchanged, for tensors and
// scalars, several values at once and dynamic shapes. Its errors are in
// optimization_barrier_errors.mlir; what the flow phase does with it is in
// tests/compiler/flow/optimization_barrier.mlir.
// RUN: weir-opt --split-input-file %s | weir-opt --split-input-file - | filecheck %s

// CHECK-LABEL: func.func @one(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>
func.func @one(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[B:.*]] = util.optimization_barrier %[[X]] : tensor<4xf32>
  // CHECK-NEXT: func.return %[[B]]
  %b = util.optimization_barrier %x : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @several(
// CHECK-SAME: %[[X:.*]]: tensor<?x2xi8>, %[[N:.*]]: i32
func.func @several(%x: tensor<?x2xi8>, %n: i32) -> (tensor<?x2xi8>, i32) {
  // CHECK-NEXT: %[[B:.*]], %[[M:.*]] = util.optimization_barrier {tag} %[[X]], %[[N]] : tensor<?x2xi8>, i32
  // CHECK-NEXT: func.return %[[B]], %[[M]]
  %b:2 = util.optimization_barrier {tag} %x, %n : tensor<?x2xi8>, i32
  return %b#0, %b#1 : tensor<?x2xi8>, i32
}

// -----

// CHECK-LABEL: func.func @nothing(
func.func @nothing() {
  // CHECK-NEXT: util.optimization_barrier{{$}}
  util.optimization_barrier
  return
}
