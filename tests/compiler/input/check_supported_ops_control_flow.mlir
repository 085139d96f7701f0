// Checks that structured host control flow (scf.for, scf.if, scf.index_switch, scf.while) is
// accepted, and that the scf ops weir does not compile (scf.parallel, scf.execute_region) are
// rejected at their own location, naming the op.
// RUN: not weir-opt --split-input-file --check-supported-ops %s 2>/dev/null | filecheck %s
// RUN: not weir-opt --split-input-file --check-supported-ops %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @accepted
// CHECK: scf.for
// CHECK: scf.if
// CHECK: scf.index_switch
// CHECK: scf.while
// CHECK: scf.condition
func.func @accepted(%n: index, %c: i1) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = scf.for %i = %c0 to %n step %c1 iter_args(%s = %c0) -> (index) {
    %t = arith.addi %s, %i : index
    scf.yield %t : index
  }
  %b = scf.if %c -> (index) {
    scf.yield %a : index
  } else {
    scf.yield %n : index
  }
  %d = scf.index_switch %b -> index
  case 1 {
    scf.yield %c1 : index
  }
  default {
    scf.yield %c0 : index
  }
  %e = scf.while (%v = %d) : (index) -> index {
    %more = arith.cmpi slt, %v, %n : index
    scf.condition(%more) %v : index
  } do {
  ^bb0(%w: index):
    %x = arith.addi %w, %c1 : index
    scf.yield %x : index
  }
  return %e : index
}

// -----

func.func @parallel(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // ERR: check_supported_ops_control_flow.mlir:[[# @LINE + 1]]:3: error: 'scf.parallel' is not supported
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    scf.reduce
  }) : (index, index, index) -> ()
  return %n : index
}

// -----

func.func @execute_region(%n: index) -> index {
  // ERR: check_supported_ops_control_flow.mlir:[[# @LINE + 1]]:3: error: 'scf.execute_region' is not supported
  %r = scf.execute_region -> index {
    scf.yield %n : index
  }
  return %r : index
}
