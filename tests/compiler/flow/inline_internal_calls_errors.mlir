// Checks that recursion, direct or through another function, is reported at the call that closes
// the cycle (calls within a module are inlined, so it cannot be compiled), and nothing is printed;
// and, behind ABI stubs (whose tensor bodies are renamed `_NAME`), that the message still names
// the function as the source does.
// RUN: not weir-opt --split-input-file --inline-internal-calls %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file --wrap-entry-points --inline-internal-calls %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file --inline-internal-calls %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// A function calling itself inside a branch.
func.func @countdown(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %done = arith.cmpi eq, %n, %c0 : index
  %r = scf.if %done -> (tensor<4xf32>) {
    scf.yield %x : tensor<4xf32>
  } else {
    %c1 = arith.constant 1 : index
    %m = arith.subi %n, %c1 : index
    // ERR: inline_internal_calls_errors.mlir:[[# @LINE + 1]]:5: error: recursive call to @countdown is not supported (calls within a module are inlined)
    %y = func.call @countdown(%x, %m) : (tensor<4xf32>, index) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Two private functions calling each other.
func.func private @ping(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @pong(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @pong(%x: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: inline_internal_calls_errors.mlir:[[# @LINE + 1]]:3: error: recursive call to @ping is not supported (calls within a module are inlined)
  %0 = func.call @ping(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @ping(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
