// Checks that flow.tensor.dynamic_constant prints in IREE's form and parses back unchanged
// (ROUNDTRIP), and that --lower-dynamic-constants makes it a constant of its static type, a
// tensor.cast to the dynamic type and a util.optimization_barrier on the cast, so what reads it
// sees only the dynamic type. Its errors are in dynamic_constant_errors.mlir.
// RUN: weir-opt --split-input-file %s | weir-opt --split-input-file - | filecheck %s --check-prefix=ROUNDTRIP
// RUN: weir-opt --split-input-file --lower-dynamic-constants %s | filecheck %s

// ROUNDTRIP-LABEL: func.func @list(
// ROUNDTRIP-NEXT: %[[C:.*]] = flow.tensor.dynamic_constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32> -> tensor<?xf32>
// ROUNDTRIP-NEXT: func.return %[[C]]
// CHECK-LABEL: func.func @list(
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %[[D:.*]] = tensor.cast %[[C]] : tensor<2xf32> to tensor<?xf32>
// CHECK-NEXT: %[[B:.*]] = util.optimization_barrier %[[D]] : tensor<?xf32>
// CHECK-NEXT: func.return %[[B]] : tensor<?xf32>
func.func @list() -> tensor<?xf32> {
  %c = flow.tensor.dynamic_constant dense<[1.0, 2.0]> : tensor<2xf32> -> tensor<?xf32>
  return %c : tensor<?xf32>
}

// -----

// A splat, some sizes kept static, attributes kept.
// ROUNDTRIP-LABEL: func.func @splat(
// ROUNDTRIP-NEXT: flow.tensor.dynamic_constant {tag} dense<3> : tensor<2x3xi8> -> tensor<?x3xi8>
// CHECK-LABEL: func.func @splat(
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<3> : tensor<2x3xi8>
// CHECK-NEXT: %[[D:.*]] = tensor.cast %[[C]] : tensor<2x3xi8> to tensor<?x3xi8>
// CHECK-NEXT: %[[B:.*]] = util.optimization_barrier %[[D]] : tensor<?x3xi8>
// CHECK-NEXT: func.return %[[B]] : tensor<?x3xi8>
func.func @splat() -> tensor<?x3xi8> {
  %c = flow.tensor.dynamic_constant {tag} dense<3> : tensor<2x3xi8> -> tensor<?x3xi8>
  return %c : tensor<?x3xi8>
}
