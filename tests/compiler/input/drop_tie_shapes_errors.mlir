// Checks that a flow.tensor.tie_shape whose sizes in braces do not match its type's dynamic
// dimensions is rejected by the verifier. The valid form is in drop_tie_shapes.mlir.
// RUN: not weir-opt --split-input-file --drop-tie-shapes %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

func.func @missing_dims(%x: tensor<?x?xi32>, %h: index) -> tensor<?x?xi32> {
  // ERR: drop_tie_shapes_errors.mlir:[[# @LINE + 1]]:3: error: 'flow.tensor.tie_shape' op the operand type tensor<?x?xi32> needs 2 dynamic dimension(s) in {...}, got 1
  %0 = flow.tensor.tie_shape %x : tensor<?x?xi32>{%h}
  return %0 : tensor<?x?xi32>
}
