// Checks that a util.optimization_barrier whose types do not match its operands, or whose
// results differ from its operands in type (generic form), is rejected at its location. The
// valid forms are in optimization_barrier.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

func.func @too_few_types(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // ERR: optimization_barrier_errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: util.optimization_barrier has 2 operand(s) but 1 type(s)
  %a:2 = util.optimization_barrier %x, %y : tensor<4xf32>
  return
}

// -----

func.func @result_type(%x: tensor<4xf32>) {
  // ERR: optimization_barrier_errors.mlir:[[# @LINE + 1]]:3: error: 'util.optimization_barrier' op results (tensor<4xi32>) must have the types of the operands (tensor<4xf32>)
  %a = "util.optimization_barrier"(%x) : (tensor<4xf32>) -> tensor<4xi32>
  return
}
