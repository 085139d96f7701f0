// Checks that calls to functions of the same module are inlined wherever they are (also inside
// scf regions, and once per call when a helper is called several times), that a call to another
// exported function inlines that function's tensor body rather than its ABI stub, and that the
// private bodies are removed.
// RUN: weir-opt --split-input-file --inline-internal-calls %s | filecheck %s
// RUN: weir-opt --split-input-file --wrap-entry-points --inline-internal-calls %s | filecheck %s --check-prefix=ABI

// Checks a plain call at the top of a body.
// CHECK-LABEL: func.func @outer
// CHECK-NOT: func.call
// CHECK: arith.addf
// CHECK-NOT: func.func private @helper
func.func private @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @outer(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @helper(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks a call inside a loop body (to a helper that itself calls a helper) and a helper called
// twice: each call becomes a copy of the body where the call was.
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for %{{.*}} iter_args(%[[X:.*]] = %{{.*}}) -> (tensor<4xf32>) {
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[X]], %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[D]], %[[D]] : tensor<4xf32>
// CHECK-NEXT: scf.yield %[[M]] : tensor<4xf32>
// CHECK: func.func @twice
// CHECK-NEXT: %[[D1:.*]] = arith.addf %{{.*}}, %{{.*}} : tensor<4xf32>
// CHECK-NEXT: %[[D2:.*]] = arith.addf %[[D1]], %[[D1]] : tensor<4xf32>
// CHECK-NEXT: func.return %[[D2]]
// CHECK-NOT: func.call
// CHECK-NOT: func.func private
func.func private @double(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @square_double(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @double(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = arith.mulf %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func @in_loop(%a: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (tensor<4xf32>) {
    %y = func.call @square_double(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
func.func @twice(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @double(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @double(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Checks that an exported function calling another one with tensors gets the callee's tensor
// body inlined, not its buffer-view stub, and that both stubs stay exported.
// ABI-LABEL: func.func @neg(
// ABI-SAME: !hal.buffer_view
// ABI: func.func @neg_twice(%[[VIEW:.*]]: !hal.buffer_view)
// ABI: %[[A:.*]] = "hal.tensor.import"(%[[VIEW]])
// ABI-NEXT: %[[N1:.*]] = arith.negf %[[A]] : tensor<4xf32>
// ABI-NEXT: %[[N2:.*]] = arith.negf %[[N1]] : tensor<4xf32>
// ABI-NEXT: "hal.tensor.export"(%[[N2]])
// ABI-NOT: func.call
// ABI-NOT: func.func private
func.func @neg(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.negf %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @neg_twice(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @neg(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @neg(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
