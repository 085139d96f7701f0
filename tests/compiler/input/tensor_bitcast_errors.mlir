// Checks that a flow.tensor.bitcast whose two types hold different numbers of bits, or whose
// dynamic sizes in braces do not match its types, is rejected by the verifier, and that one weir
// cannot lower (between element widths other than bytes and packed sub-byte elements, two
// sub-byte types, i1 without packed storage, 6-bit elements, packing with dynamic sizes; a shape
// change with dynamic sizes) is a located error of --lower-tensor-bitcasts. The valid forms are in lower_tensor_bitcasts.mlir.
// RUN: not weir-opt --split-input-file --lower-tensor-bitcasts %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

func.func @bits_differ(%x: tensor<4xi8>) -> tensor<4xi16> {
  // ERR: tensor_bitcast_errors.mlir:[[# @LINE + 1]]:3: error: 'flow.tensor.bitcast' op tensor<4xi8> holds 32 bits but tensor<4xi16> holds 64
  %0 = flow.tensor.bitcast %x : tensor<4xi8> -> tensor<4xi16>
  return %0 : tensor<4xi16>
}

// -----

func.func @missing_dims(%x: tensor<?xi8>) -> tensor<?xi8> {
  // ERR: tensor_bitcast_errors.mlir:[[# @LINE + 1]]:3: error: 'flow.tensor.bitcast' op the source type tensor<?xi8> needs 1 dynamic dimension(s) in {...}, got 0
  %0 = flow.tensor.bitcast %x : tensor<?xi8> -> tensor<?xi8>
  return %0 : tensor<?xi8>
}

// -----

func.func @widths(%x: tensor<4xi8>) -> tensor<1xi32> {
  // ERR: tensor_bitcast_errors.mlir:[[# @LINE + 1]]:3: error: flow.tensor.bitcast from tensor<4xi8> to tensor<1xi32> is not supported: weir reinterprets only element types of one width, or integers of whole bytes as packed sub-byte elements
  %0 = flow.tensor.bitcast %x : tensor<4xi8> -> tensor<1xi32>
  return %0 : tensor<1xi32>
}

// -----

func.func @dynamic_reshape(%x: tensor<?xi8>, %n: index, %m: index) -> tensor<?x2xi8> {
  // ERR: tensor_bitcast_errors.mlir:[[# @LINE + 1]]:3: error: flow.tensor.bitcast from tensor<?xi8> to tensor<?x2xi8> is not supported: a change of shape needs static shapes
  %0 = flow.tensor.bitcast %x : tensor<?xi8>{%n} -> tensor<?x2xi8>{%m}
  return %0 : tensor<?x2xi8>
}

// -----

func.func @unpacked_i1(%x: tensor<1xi8>) -> tensor<8xi1> {
  // ERR: tensor_bitcast_errors.mlir:[[# @LINE + 1]]:3: error: flow.tensor.bitcast from tensor<1xi8> to tensor<8xi1> is not supported: an i1 tensor without #iree_encoding.packed_storage has one byte per element; packed i1 needs that encoding
  %0 = flow.tensor.bitcast %x : tensor<1xi8> -> tensor<8xi1>
  return %0 : tensor<8xi1>
}

// -----

func.func @dynamic_packing(%x: tensor<?xi8>, %n: index, %m: index) -> tensor<?xi4> {
  // ERR: tensor_bitcast_errors.mlir:[[# @LINE + 1]]:3: error: flow.tensor.bitcast from tensor<?xi8> to tensor<?xi4> is not supported: packing sub-byte elements needs static shapes
  %0 = flow.tensor.bitcast %x : tensor<?xi8>{%n} -> tensor<?xi4>{%m}
  return %0 : tensor<?xi4>
}

// -----

func.func @sub_byte_both_sides(%x: tensor<4xi4>) -> tensor<8xi2> {
  // ERR: tensor_bitcast_errors.mlir:[[# @LINE + 1]]:3: error: flow.tensor.bitcast from tensor<4xi4> to tensor<8xi2> is not supported: one side must have elements of whole bytes
  %0 = flow.tensor.bitcast %x : tensor<4xi4> -> tensor<8xi2>
  return %0 : tensor<8xi2>
}

// -----

func.func @six_bit_floats(%x: tensor<3xi8>) -> tensor<4xf6E2M3FN> {
  // ERR: tensor_bitcast_errors.mlir:[[# @LINE + 1]]:3: error: flow.tensor.bitcast from tensor<3xi8> to tensor<4xf6E2M3FN> is not supported: f6E2M3FN elements straddle bytes; weir packs only 1-, 2- and 4-bit elements
  %0 = flow.tensor.bitcast %x : tensor<3xi8> -> tensor<4xf6E2M3FN>
  return %0 : tensor<4xf6E2M3FN>
}

// -----

func.func @reshape_changes_type(%x: tensor<4xi32>) -> tensor<2x2xf32> {
  // ERR: tensor_bitcast_errors.mlir:[[# @LINE + 1]]:3: error: 'flow.tensor.reshape' op a reshape keeps the element type: tensor<4xi32> -> tensor<2x2xf32>
  %0 = flow.tensor.reshape %x : tensor<4xi32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dynamic_reshape(%x: tensor<?x4xf32>, %n: index) -> tensor<?xf32> {
  // ERR: tensor_bitcast_errors.mlir:[[# @LINE + 1]]:3: error: flow.tensor.reshape from tensor<?x4xf32> to tensor<?xf32> is not supported: a change of shape needs static shapes
  %0 = flow.tensor.reshape %x : tensor<?x4xf32>{%n} -> tensor<?xf32>{%n}
  return %0 : tensor<?xf32>
}
