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

// -----

// Bytes to packed i1: each byte read once per element, shifted down by the element's place in
// it (the first element in the lowest bit), then reshaped to the result.
// CHECK-LABEL: func.func @unpack_i1(
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<2x8xi1>
// CHECK-NEXT: %[[G:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2xi8>) outs(%[[E]] : tensor<2x8xi1>) {
// CHECK-NEXT: ^bb0(%[[W:.*]]: i8, %{{.*}}: i1):
// CHECK-NEXT: %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[P:.*]] = arith.index_cast %[[I]] : index to i8
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i8
// CHECK-NEXT: %[[AMOUNT:.*]] = arith.muli %[[P]], %[[ONE]] : i8
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.shrui %[[W]], %[[AMOUNT]] : i8
// CHECK-NEXT: %[[BIT:.*]] = arith.trunci %[[SHIFTED]] : i8 to i1
// CHECK-NEXT: linalg.yield %[[BIT]] : i1
// CHECK: tensor.reshape %[[G]](%{{.*}}) : (tensor<2x8xi1>, tensor<2xi64>) -> tensor<4x4xi1>
func.func @unpack_i1(%x: tensor<2xi8>) -> tensor<4x4xi1, #iree_encoding.packed_storage> {
  %0 = flow.tensor.bitcast %x : tensor<2xi8> -> tensor<4x4xi1, #iree_encoding.packed_storage>
  return %0 : tensor<4x4xi1, #iree_encoding.packed_storage>
}

// -----

// Packed f4E2M1FN to bytes: the elements' bits as i4, one slice per place in a byte, ORed
// together shifted to their places.
// CHECK-LABEL: func.func @pack_f4(
// CHECK-NEXT: %[[BITS:.*]] = arith.bitcast %x : tensor<4xf4E2M1FN> to tensor<4xi4>
// CHECK-NEXT: %[[S:.*]] = arith.constant dense<2> : tensor<2xi64>
// CHECK-NEXT: %[[G:.*]] = tensor.reshape %[[BITS]](%[[S]]) : (tensor<4xi4>, tensor<2xi64>) -> tensor<2x2xi4>
// CHECK-NEXT: %[[LOW:.*]] = tensor.extract_slice %[[G]][0, 0] [2, 1] [1, 1] : tensor<2x2xi4> to tensor<2xi4>
// CHECK-NEXT: %[[HIGH:.*]] = tensor.extract_slice %[[G]][0, 1] [2, 1] [1, 1] : tensor<2x2xi4> to tensor<2xi4>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<2xi8>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {{.*}} ins(%[[LOW]], %[[HIGH]] : tensor<2xi4>, tensor<2xi4>) outs(%[[E]] : tensor<2xi8>) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: i4, %[[B:.*]]: i4, %{{.*}}: i8):
// CHECK-NEXT: %[[WA:.*]] = arith.extui %[[A]] : i4 to i8
// CHECK-NEXT: %[[WB:.*]] = arith.extui %[[B]] : i4 to i8
// CHECK-NEXT: %[[FOUR:.*]] = arith.constant 4 : i8
// CHECK-NEXT: %[[UP:.*]] = arith.shli %[[WB]], %[[FOUR]] : i8
// CHECK-NEXT: %[[OR:.*]] = arith.ori %[[WA]], %[[UP]] : i8
// CHECK-NEXT: linalg.yield %[[OR]] : i8
// CHECK: func.return %[[R]] : tensor<2xi8>
func.func @pack_f4(%x: tensor<4xf4E2M1FN>) -> tensor<2xi8> {
  %0 = flow.tensor.bitcast %x : tensor<4xf4E2M1FN> -> tensor<2xi8>
  return %0 : tensor<2xi8>
}

// -----

// A packed value bitcast twice: the second bitcast still sees the packed i1 it was written
// with, though the first one's lowering has retyped its source.
// CHECK-LABEL: func.func @round_trip(
// CHECK: linalg.index 1
// CHECK: tensor.extract_slice
// CHECK-NOT: flow.tensor.bitcast
func.func @round_trip(%x: tensor<1xi16>) -> tensor<2xi8> {
  %0 = flow.tensor.bitcast %x : tensor<1xi16> -> tensor<16xi1, #iree_encoding.packed_storage>
  %1 = flow.tensor.bitcast %0 : tensor<16xi1, #iree_encoding.packed_storage> -> tensor<2xi8>
  return %1 : tensor<2xi8>
}

// -----

// flow.tensor.reshape is such a bitcast that keeps the element type: a tensor.reshape alone.
// ROUNDTRIP-LABEL: func.func @flow_reshape(
// ROUNDTRIP-NEXT: flow.tensor.reshape %x : tensor<8x8x1x1xf32> -> tensor<8x8xf32>
// CHECK-LABEL: func.func @flow_reshape(
// CHECK-NEXT: %[[S:.*]] = arith.constant dense<8> : tensor<2xi64>
// CHECK-NEXT: %[[R:.*]] = tensor.reshape %x(%[[S]]) : (tensor<8x8x1x1xf32>, tensor<2xi64>) -> tensor<8x8xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @flow_reshape(%x: tensor<8x8x1x1xf32>) -> tensor<8x8xf32> {
  %0 = flow.tensor.reshape %x : tensor<8x8x1x1xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
