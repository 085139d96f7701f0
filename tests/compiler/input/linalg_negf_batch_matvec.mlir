// Checks that linalg.negf and linalg.batch_matvec parse, pass the input phase's op check and
// print as written (ROUNDTRIP), and that --generalize-named-ops makes negf a parallel generic
// negating each element and batch_matvec a reduction generic over (batch, row, k) that widens
// its operands to the accumulator's type, multiplies and accumulates. Their errors are in
// linalg_negf_batch_matvec_errors.mlir.
// RUN: weir-opt --split-input-file --check-supported-ops %s | weir-opt --split-input-file - | filecheck %s --check-prefix=ROUNDTRIP
// RUN: weir-opt --split-input-file --generalize-named-ops %s | filecheck %s

// ROUNDTRIP-LABEL: func.func @negf(
// ROUNDTRIP-NEXT: %[[N:.*]] = linalg.negf ins(%x : tensor<4xf16>) outs(%o : tensor<4xf16>) -> tensor<4xf16>
// CHECK-LABEL: func.func @negf(
// CHECK-NEXT: %[[N:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf16>) outs(%o : tensor<4xf16>) {
// CHECK-NEXT: ^{{.*}}(%[[IN:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[IN]] : f16
// CHECK-NEXT: linalg.yield %[[NEG]] : f16
// CHECK-NOT: linalg.negf
func.func @negf(%x: tensor<4xf16>, %o: tensor<4xf16>) -> tensor<4xf16> {
  %0 = linalg.negf ins(%x : tensor<4xf16>) outs(%o : tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// ROUNDTRIP-LABEL: func.func @batch_matvec(
// ROUNDTRIP-NEXT: linalg.batch_matvec ins(%a, %v : tensor<2x3x4xi8>, tensor<2x4xi8>) outs(%o : tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-LABEL: func.func @batch_matvec(
// CHECK-NEXT: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %v : tensor<2x3x4xi8>, tensor<2x4xi8>) outs(%o : tensor<2x3xi32>) {
// CHECK-NEXT: ^{{.*}}(%[[A:.*]]: i8, %[[V:.*]]: i8, %[[ACC:.*]]: i32):
// CHECK-NEXT: %[[AW:.*]] = arith.extsi %[[A]] : i8 to i32
// CHECK-NEXT: %[[VW:.*]] = arith.extsi %[[V]] : i8 to i32
// CHECK-NEXT: %[[P:.*]] = arith.muli %[[AW]], %[[VW]] : i32
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[ACC]], %[[P]] : i32
// CHECK-NEXT: linalg.yield %[[S]] : i32
// CHECK-NOT: linalg.batch_matvec
func.func @batch_matvec(%a: tensor<2x3x4xi8>, %v: tensor<2x4xi8>, %o: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = linalg.batch_matvec ins(%a, %v : tensor<2x3x4xi8>, tensor<2x4xi8>) outs(%o : tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// Dynamic sizes print as written.
// ROUNDTRIP-LABEL: func.func @negf_dynamic(
// ROUNDTRIP-NEXT: linalg.negf ins(%x : tensor<?x2xf32>) outs(%o : tensor<?x2xf32>) -> tensor<?x2xf32>
func.func @negf_dynamic(%x: tensor<?x2xf32>, %o: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %0 = linalg.negf ins(%x : tensor<?x2xf32>) outs(%o : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}
