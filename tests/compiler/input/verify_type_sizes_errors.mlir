// Checks that a tensor type with a dimension past 2^63 - 1, or more bytes than that, is
// rejected at the op (or function) that introduces it. Every chunk fails, each with its own
// location, and nothing is printed.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// A function argument of dimension 2^63.
// ERR: verify_type_sizes_errors.mlir:[[# @LINE + 1]]:1: error: 'func.func' op dimension 9223372036854775808 of tensor<9223372036854775808xf32> is larger than 9223372036854775807, the largest a dimension can be
func.func @argument(%a: tensor<9223372036854775808xf32>) -> tensor<9223372036854775808xf32> {
  return %a : tensor<9223372036854775808xf32>
}

// -----

// A result of dimension 2^64 (it failed in a later phase, at no location).
func.func @result() -> tensor<2x18446744073709551616xf32> {
  // ERR: verify_type_sizes_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.empty' op dimension 18446744073709551616 of tensor<2x18446744073709551616xf32> is larger than 9223372036854775807, the largest a dimension can be
  %0 = tensor.empty() : tensor<2x18446744073709551616xf32>
  return %0 : tensor<2x18446744073709551616xf32>
}

// -----

// Dimensions that fit, whose product of bytes does not.
func.func @bytes() -> tensor<4611686018427387904x2xf32> {
  // ERR: verify_type_sizes_errors.mlir:[[# @LINE + 1]]:3: error: 'tensor.empty' op tensor<4611686018427387904x2xf32> would hold 36893488147419103232 bytes, more than 9223372036854775807, the largest size a tensor can have
  %0 = tensor.empty() : tensor<4611686018427387904x2xf32>
  return %0 : tensor<4611686018427387904x2xf32>
}
