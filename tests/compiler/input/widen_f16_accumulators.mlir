// Checks --weir-accumulate-f16-in-f32: an f16 matmul becomes extf of its init, a matmul into f32
// and a truncf of the result; an f32 matmul is left alone, and so is an f16 one without the flag
// (the default: it accumulates in f16, rounding after each step, as IREE's does).
// RUN: weir-compile --compile-to=input --weir-accumulate-f16-in-f32 %s | filecheck %s
// RUN: weir-compile --compile-to=input %s | filecheck %s --check-prefix=DEFAULT

// CHECK-LABEL: func.func @narrow(
// CHECK-NEXT: %[[W:.*]] = arith.extf %c : tensor<2x4xf16> to tensor<2x4xf32>
// CHECK-NEXT: %[[M:.*]] = linalg.matmul ins(%a, %b : tensor<2x8xf16>, tensor<8x4xf16>) outs(%[[W]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[M]] : tensor<2x4xf32> to tensor<2x4xf16>
// CHECK-NEXT: func.return %[[R]]
// DEFAULT-LABEL: func.func @narrow(
// DEFAULT-NEXT: linalg.matmul ins(%a, %b : tensor<2x8xf16>, tensor<8x4xf16>) outs(%c : tensor<2x4xf16>) -> tensor<2x4xf16>
func.func @narrow(%a: tensor<2x8xf16>, %b: tensor<8x4xf16>, %c: tensor<2x4xf16>) -> tensor<2x4xf16> {
  %r = linalg.matmul ins(%a, %b : tensor<2x8xf16>, tensor<8x4xf16>) outs(%c : tensor<2x4xf16>) -> tensor<2x4xf16>
  return %r : tensor<2x4xf16>
}

// CHECK-LABEL: func.func @wide(
// CHECK-NEXT: linalg.matmul ins(%a, %b : tensor<2x8xf32>, tensor<8x4xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
func.func @wide(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<2x8xf32>, tensor<8x4xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
