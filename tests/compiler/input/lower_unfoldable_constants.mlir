// Checks --lower-unfoldable-constants: tensor constants become dense_resource constants whose
// bytes (splats expanded) are in the module's resources, so no later pass can clone or fold
// them; scalar ones become plain arith.constant.
// RUN: weir-opt --split-input-file --lower-unfoldable-constants %s | filecheck %s

// Checks that a splat and a list both become resources holding every element's bytes.
// CHECK-LABEL: func.func @tensors(
func.func @tensors() -> (tensor<4xi8>, tensor<2xf32>) {
  // CHECK-NEXT: %[[S:.*]] = arith.constant dense_resource<[[SPLAT:.*]]> : tensor<4xi8>
  // CHECK-NEXT: %[[L:.*]] = arith.constant dense_resource<[[LIST:.*]]> : tensor<2xf32>
  // CHECK-NEXT: func.return %[[S]], %[[L]]
  %s = util.unfoldable_constant dense<3> : tensor<4xi8>
  %l = util.unfoldable_constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %s, %l : tensor<4xi8>, tensor<2xf32>
}
// CHECK: [[SPLAT]]: "0x0400000003030303"
// CHECK: [[LIST]]: "0x040000000000803F00000040"

// -----

// Checks that scalars become arith.constant, keeping their type.
// CHECK-LABEL: func.func @scalars(
func.func @scalars() -> (i32, f16) {
  // CHECK-NEXT: arith.constant 7 : i32
  // CHECK-NEXT: arith.constant 2.500000e+00 : f16
  %a = util.unfoldable_constant 7 : i32
  %b = util.unfoldable_constant 2.5 : f16
  return %a, %b : i32, f16
}

// -----

// Checks that i1 and bf16 elements get weir's storage layout (one byte per i1).
// CHECK-LABEL: func.func @narrow(
func.func @narrow() -> (tensor<3xi1>, tensor<2xbf16>) {
  // CHECK-NEXT: arith.constant dense_resource<[[MASK:.*]]> : tensor<3xi1>
  // CHECK-NEXT: arith.constant dense_resource<[[BF:.*]]> : tensor<2xbf16>
  %m = util.unfoldable_constant dense<[true, false, true]> : tensor<3xi1>
  %h = util.unfoldable_constant dense<[1.0, -2.0]> : tensor<2xbf16>
  return %m, %h : tensor<3xi1>, tensor<2xbf16>
}
// CHECK: [[MASK]]: "0x04000000010001"
// CHECK: [[BF]]: "0x04000000803F00C0"
