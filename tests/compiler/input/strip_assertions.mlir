// Checks --iree-opt-strip-assertions: cf.assert ops in linalg bodies are removed with the scalar
// ops that only computed their conditions; without the flag (IREE's default) the assert stays, a
// run-time check of its dispatch. Run through weir-compile: the pass acts only under that flag.
// RUN: weir-compile --compile-to=input --iree-opt-strip-assertions %s | filecheck %s
// RUN: weir-compile --compile-to=input %s | filecheck %s --check-prefix=KEPT

// A batch-norm style reciprocal whose divisor is asserted non-zero, as torch-mlir exports it.
// CHECK-LABEL: func.func @reciprocal
// CHECK: linalg.generic
// CHECK-NEXT: ^{{.*}}(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.divf %{{.*}}, %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NOT: cf.assert
// KEPT-LABEL: func.func @reciprocal
// KEPT: %[[NZ:.*]] = arith.cmpf one
// KEPT-NEXT: cf.assert %[[NZ]], "unimplemented: tensor with zero element"
func.func @reciprocal(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %nz = arith.cmpf one, %in, %zero : f32
    cf.assert %nz, "unimplemented: tensor with zero element"
    %r = arith.divf %one, %in : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// An index check whose condition is also used by the body keeps that condition.
// CHECK-LABEL: func.func @clamped
// CHECK: linalg.generic
// CHECK: %[[LT:.*]] = arith.cmpi slt
// CHECK-NOT: cf.assert
// CHECK: arith.select %[[LT]]
func.func @clamped(%i: tensor<4xi64>) -> tensor<4xi64> {
  %c8 = arith.constant 8 : i64
  %e = tensor.empty() : tensor<4xi64>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%i : tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%in: i64, %out: i64):
    %lt = arith.cmpi slt, %in, %c8 : i64
    cf.assert %lt, "index out of range"
    %r = arith.select %lt, %in, %c8 : i64
    linalg.yield %r : i64
  } -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
