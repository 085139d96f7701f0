// Checks that a public function's scalar of a type weir has no element type for is a compile
// error at the function, before anything reaches the runtime. The valid cases are in
// wrap_entry_points_scalars.mlir.
// RUN: not weir-opt --wrap-entry-points %s 2>&1 >/dev/null | filecheck %s

// CHECK: wrap_entry_points_scalars_errors.mlir:[[# @LINE + 1]]:1: error: element type i3 is not supported
func.func @triple(%a: i3) -> i3 {
  return %a : i3
}
