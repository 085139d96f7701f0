// Checks that flow.tensor.bitcast prints in IREE's form (dynamic sizes in braces after each
// type) and parses back unchanged (ROUNDTRIP), and that --lower-tensor-bitcasts makes one
// between element types of one width an elementwise arith.bitcast, followed by a tensor.reshape
// when the shape changes. Its errors are in tensor_bitcast_errors.mlir.
// RUN: weir-opt --split-input-file %s | weir-opt --split-input-file - | filecheck %s --check-prefix=ROUNDTRIP
// RUN: weir-opt --split-input-file --lower-tensor-bitcasts %s | filecheck %s

// ROUNDTRIP-LABEL: func.func @reshaped(
// ROUNDTRIP-NEXT: flow.tensor.bitcast %x : tensor<4xi32> -> tensor<2x2xf32>
// CHECK-LABEL: func.func @reshaped(
// CHECK-NEXT: %[[B:.*]] = arith.bitcast %x : tensor<4xi32> to tensor<4xf32>
// CHECK-NEXT: %[[S:.*]] = arith.constant dense<2> : tensor<2xi64>
// CHECK-NEXT: %[[R:.*]] = tensor.reshape %[[B]](%[[S]]) : (tensor<4xf32>, tensor<2xi64>) -> tensor<2x2xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @reshaped(%x: tensor<4xi32>) -> tensor<2x2xf32> {
  %0 = flow.tensor.bitcast %x : tensor<4xi32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// ROUNDTRIP-LABEL: func.func @dynamic(
// ROUNDTRIP-NEXT: flow.tensor.bitcast %x : tensor<?x3xi16>{%n} -> tensor<?x3xf16>{%n}
// CHECK-LABEL: func.func @dynamic(
// CHECK-NEXT: %[[B:.*]] = arith.bitcast %x : tensor<?x3xi16> to tensor<?x3xf16>
// CHECK-NEXT: func.return %[[B]]
func.func @dynamic(%x: tensor<?x3xi16>, %n: index) -> tensor<?x3xf16> {
  %0 = flow.tensor.bitcast %x : tensor<?x3xi16>{%n} -> tensor<?x3xf16>{%n}
  return %0 : tensor<?x3xf16>
}

// -----

// Only the shape changes: a reshape alone.
// CHECK-LABEL: func.func @shape_only(
// CHECK-NEXT: %[[S:.*]] = arith.constant dense<[3, 2]> : tensor<2xi64>
// CHECK-NEXT: %[[R:.*]] = tensor.reshape %x(%[[S]]) : (tensor<6xi8>, tensor<2xi64>) -> tensor<3x2xi8>
// CHECK-NEXT: func.return %[[R]]
func.func @shape_only(%x: tensor<6xi8>) -> tensor<3x2xi8> {
  %0 = flow.tensor.bitcast %x : tensor<6xi8> -> tensor<3x2xi8>
  return %0 : tensor<3x2xi8>
}
