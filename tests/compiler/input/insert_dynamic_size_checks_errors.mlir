// Checks that a size equality the types leave open but constants settle is a compile error at
// the op's own location, naming both sides and both sizes. Every chunk fails and nothing is
// printed.
// RUN: not weir-opt --split-input-file --insert-dynamic-size-checks %s 2>&1 >/dev/null | filecheck %s
// RUN: not weir-opt --split-input-file --insert-dynamic-size-checks %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// An output sized by a constant against a static input.
func.func @constant_output(%a: tensor<4xf32>) -> tensor<?xf32> {
  %c5 = arith.constant 5 : index
  %e = tensor.empty(%c5) : tensor<?xf32>
  // CHECK: insert_dynamic_size_checks_errors.mlir:[[# @LINE + 1]]:3: error: 'linalg.generic': dimension 0 of operand 0 (%a) differs from dimension 0 of operand 1 (%e): 4 vs 5
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// A constant slice size against a static result.
func.func @constant_slice(%a: tensor<?xf32>) -> tensor<4xf32> {
  %c3 = arith.constant 3 : index
  // CHECK: insert_dynamic_size_checks_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.extract_slice': size 0 of the slice differs from dimension 0 of the result type: 3 vs 4
  %0 = tensor.extract_slice %a[0] [%c3] [1] : tensor<?xf32> to tensor<4xf32>
  return %0 : tensor<4xf32>
}
