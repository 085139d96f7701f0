// Checks --lower-checks: every check op becomes a call of an import of the runtime's `check`
// module, with tensors exported to buffer views and the imports declared once per module.
// The rejected forms are in lower_checks_errors.mlir.
// RUN: weir-opt --split-input-file --lower-checks %s | filecheck %s

// Checks that a scalar check passes its i32 as it is, and each import is declared once.
// CHECK-LABEL: func.func @scalars(
func.func @scalars(%x: i32) {
  // CHECK-NEXT: func.call @check.expect_true(%{{.*}}) : (i32) -> ()
  // CHECK-NEXT: func.call @check.expect_false(%{{.*}}) : (i32) -> ()
  // CHECK-NEXT: func.call @check.expect_true(%{{.*}}) : (i32) -> ()
  check.expect_true(%x) : i32
  check.expect_false(%x) : i32
  check.expect_true(%x) : i32
  return
}
// CHECK: func.func private @check.expect_true(i32)
// CHECK: func.func private @check.expect_false(i32)
// CHECK-NOT: func.func private @check.expect_true

// -----

// Checks that expect_eq exports both tensors (with their dynamic sizes) and passes the views.
// CHECK-LABEL: func.func @eq(
func.func @eq(%a: tensor<?x4xi32>, %b: tensor<?x4xi32>) {
  // CHECK: %[[D:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x4xi32>
  // CHECK: %[[L:.*]] = "hal.tensor.export"(%{{.*}}, %[[D]]) <{name = "check.expect_eq:lhs"}> : (tensor<?x4xi32>, index) -> !hal.buffer_view
  // CHECK: %[[R:.*]] = "hal.tensor.export"(%{{.*}}, %{{.*}}) <{name = "check.expect_eq:rhs"}>
  // CHECK: func.call @check.expect_eq(%[[L]], %[[R]]) : (!hal.buffer_view, !hal.buffer_view) -> ()
  check.expect_eq(%a, %b) : tensor<?x4xi32>
  return
}
// CHECK: func.func private @check.expect_eq(!hal.buffer_view, !hal.buffer_view)

// -----

// Checks that expect_eq_const compares against an arith.constant of the expected value.
// CHECK-LABEL: func.func @eq_const(
func.func @eq_const(%a: tensor<2xi8>) {
  // CHECK: %[[C:.*]] = arith.constant dense<[1, 2]> : tensor<2xi8>
  // CHECK: %[[L:.*]] = "hal.tensor.export"(%{{.*}}) <{name = "check.expect_eq_const:lhs"}>
  // CHECK: %[[R:.*]] = "hal.tensor.export"(%[[C]]) <{name = "check.expect_eq_const:rhs"}>
  // CHECK: func.call @check.expect_eq(%[[L]], %[[R]])
  check.expect_eq_const(%a, dense<[1, 2]> : tensor<2xi8>) : tensor<2xi8>
  return
}

// -----

// Checks that the almost-eq checks pass atol and rtol as f32 arguments, IREE's defaults
// (1e-4, 0) where the op gives none, and share one import with their _const form.
// CHECK-LABEL: func.func @almost(
func.func @almost(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // CHECK: %[[ATOL:.*]] = arith.constant 1.000000e-04 : f32
  // CHECK-NEXT: %[[RTOL:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT: func.call @check.expect_almost_eq(%{{.*}}, %{{.*}}, %[[ATOL]], %[[RTOL]]) : (!hal.buffer_view, !hal.buffer_view, f32, f32) -> ()
  check.expect_almost_eq(%a, %b) : tensor<3xf32>
  // CHECK: arith.constant 1.000000e-02 : f32
  // CHECK-NEXT: arith.constant 5.000000e-01 : f32
  // CHECK-NEXT: func.call @check.expect_almost_eq(
  check.expect_almost_eq(%a, %b, atol 1.0e-2, rtol 0.5) : tensor<3xf32>
  // CHECK: arith.constant dense<2.500000e+00> : tensor<3xf32>
  // CHECK: arith.constant 1.000000e-04 : f32
  // CHECK-NEXT: arith.constant 2.500000e-01 : f32
  // CHECK-NEXT: func.call @check.expect_almost_eq(
  check.expect_almost_eq_const(%a, dense<2.5> : tensor<3xf32>, rtol 0.25) : tensor<3xf32>
  return
}
// CHECK: func.func private @check.expect_almost_eq(!hal.buffer_view, !hal.buffer_view, f32, f32)
// CHECK-NOT: func.func private @check.expect_almost_eq

// -----

// Checks that expect_all_true exports its integer tensor, i1 included.
// CHECK-LABEL: func.func @all_true(
func.func @all_true(%m: tensor<2x2xi1>) {
  // CHECK: %[[V:.*]] = "hal.tensor.export"(%{{.*}}) <{name = "check.expect_all_true:operand"}> : (tensor<2x2xi1>) -> !hal.buffer_view
  // CHECK: func.call @check.expect_all_true(%[[V]]) : (!hal.buffer_view) -> ()
  check.expect_all_true(%m) : tensor<2x2xi1>
  return
}

// -----

// Checks that a declaration of the check module the program makes itself is reused when it
// agrees with the runtime's.
// CHECK: func.func private @check.expect_true(i32)
// CHECK-LABEL: func.func @declared(
func.func private @check.expect_true(i32)
func.func @declared(%x: i32) {
  // CHECK: func.call @check.expect_true(
  check.expect_true(%x) : i32
  return
}
// CHECK-NOT: func.func private @check.expect_true
