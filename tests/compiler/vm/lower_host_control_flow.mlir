// Checks that structured host control flow becomes blocks and branches (cf.br / cf.cond_br with
// block arguments for every carried value), and that the VM conversion maps those branches one to
// one onto vm.br / vm.cond_br.
// RUN: weir-opt --split-input-file --lower-host-control-flow %s | filecheck %s
// RUN: weir-opt --split-input-file --lower-host-control-flow --convert-to-vm %s | filecheck %s --check-prefix=VM

// Checks scf.for: a header block compares the induction variable with the upper bound, the body
// steps it and branches back with the yielded values, the exit block receives the results.
// CHECK-LABEL: func.func @sum(
// CHECK-SAME: %[[N:.*]]: index)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: cf.br ^[[HEADER:.*]](%[[C0]], %[[C0]] : index, index)
// CHECK: ^[[HEADER]](%[[IV:.*]]: index, %[[ACC:.*]]: index):
// CHECK: %[[BELOW:.*]] = arith.cmpi slt, %[[IV]], %[[N]] : index
// CHECK: cf.cond_br %[[BELOW]], ^[[BODY:.*]](%[[IV]], %[[ACC]] : index, index), ^[[EXIT:.*]](%[[ACC]] : index)
// CHECK: ^[[BODY]](%[[I:.*]]: index, %[[S:.*]]: index):
// CHECK: %[[T:.*]] = arith.addi %[[S]], %[[I]] : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[I]], %[[C1]] : index
// CHECK: cf.br ^[[HEADER]](%[[NEXT]], %[[T]] : index, index)
// CHECK: ^[[EXIT]](%[[R:.*]]: index):
// CHECK: func.return %[[R]] : index
// VM-LABEL: "vm.func"() <{sym_name = "sum"
// VM: "vm.br"(%{{.*}}, %{{.*}}) [^[[HEADER:.*]]] : (index, index) -> ()
// VM: ^[[HEADER]](%{{.*}}: index, %{{.*}}: index):
// VM: "vm.cond_br"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) [^{{.*}}, ^{{.*}}]
// VM-NOT: cf.
// VM: "vm.return"
func.func @sum(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %c0) -> (index) {
    %t = arith.addi %s, %i : index
    scf.yield %t : index
  }
  return %r : index
}

// -----

// Checks scf.if with results: each region branches to the join block with what it yields.
// CHECK-LABEL: func.func @pick(
// CHECK-SAME: %[[C:[^:]*]]: i1, %[[A:[^:]*]]: index, %[[B:[^:]*]]: index)
// CHECK: cf.cond_br %[[C]], ^[[THEN:.*]], ^[[ELSE:.*]]
// CHECK: ^[[THEN]]:
// CHECK: %[[T:.*]] = arith.addi %[[A]], %[[B]] : index
// CHECK: cf.br ^[[JOIN:.*]](%[[T]] : index)
// CHECK: ^[[ELSE]]:
// CHECK: cf.br ^[[JOIN]](%[[B]] : index)
// CHECK: ^[[JOIN]](%[[R:.*]]: index):
// CHECK: func.return %[[R]] : index
func.func @pick(%c: i1, %a: index, %b: index) -> index {
  %r = scf.if %c -> (index) {
    %t = arith.addi %a, %b : index
    scf.yield %t : index
  } else {
    scf.yield %b : index
  }
  return %r : index
}

// -----

// Checks scf.if without an else region: a false condition branches straight to the join block.
// CHECK-LABEL: func.func @no_else(
// CHECK: cf.cond_br %{{.*}}, ^[[THEN:.*]], ^[[JOIN:.*]]
// CHECK: ^[[THEN]]:
// CHECK: cf.br ^[[JOIN]]
// CHECK: ^[[JOIN]]:
// CHECK: func.return
func.func @no_else(%c: i1, %a: index) -> index {
  scf.if %c {
    %t = arith.addi %a, %a : index
  }
  return %a : index
}

// -----

// Checks scf.while: the before region ends in a conditional branch to the after region (which
// branches back) or to the exit, both receiving what scf.condition passes on.
// CHECK-LABEL: func.func @halve(
// CHECK-SAME: %[[X:.*]]: index)
// CHECK: cf.br ^[[BEFORE:.*]](%[[X]] : index)
// CHECK: ^[[BEFORE]](%[[V:.*]]: index):
// CHECK: %[[MORE:.*]] = arith.cmpi sgt, %[[V]], %{{.*}} : index
// CHECK: cf.cond_br %[[MORE]], ^[[AFTER:.*]](%[[V]] : index), ^[[EXIT:.*]](%[[V]] : index)
// CHECK: ^[[AFTER]](%[[W:.*]]: index):
// CHECK: %[[H:.*]] = arith.divsi %[[W]], %{{.*}} : index
// CHECK: cf.br ^[[BEFORE]](%[[H]] : index)
// CHECK: ^[[EXIT]](%[[R:.*]]: index):
// CHECK: func.return %[[R]] : index
func.func @halve(%x: index) -> index {
  %r = scf.while (%v = %x) : (index) -> index {
    %c1 = arith.constant 1 : index
    %more = arith.cmpi sgt, %v, %c1 : index
    scf.condition(%more) %v : index
  } do {
  ^bb0(%w: index):
    %c2 = arith.constant 2 : index
    %h = arith.divsi %w, %c2 : index
    scf.yield %h : index
  }
  return %r : index
}

// -----

// Checks scf.index_switch: one equality test per case, in order, the last falling through to the
// default region; every region branches to the join block.
// CHECK-LABEL: func.func @switch(
// CHECK-SAME: %[[K:[^:]*]]: index, %[[A:[^:]*]]: index)
// CHECK: cf.br ^[[TEST3:.*]]
// CHECK: ^[[TEST3]]:
// CHECK: %[[L3:.*]] = arith.constant 3 : index
// CHECK: %[[EQ3:.*]] = arith.cmpi eq, %[[K]], %[[L3]] : index
// CHECK: cf.cond_br %[[EQ3]], ^[[CASE3:.*]], ^[[TEST7:.*]]
// CHECK: ^[[TEST7]]:
// CHECK: %[[L7:.*]] = arith.constant 7 : index
// CHECK: %[[EQ7:.*]] = arith.cmpi eq, %[[K]], %[[L7]] : index
// CHECK: cf.cond_br %[[EQ7]], ^[[CASE7:.*]], ^[[DEFAULT:.*]]
// CHECK: ^[[DEFAULT]]:
// CHECK: cf.br ^[[JOIN:.*]](%[[A]] : index)
// CHECK: ^[[CASE3]]:
// CHECK: cf.br ^[[JOIN]](
// CHECK: ^[[CASE7]]:
// CHECK: cf.br ^[[JOIN]](
// CHECK: ^[[JOIN]](%[[R:.*]]: index):
// CHECK: func.return %[[R]] : index
func.func @switch(%k: index, %a: index) -> index {
  %r = scf.index_switch %k -> index
  case 3 {
    %t = arith.addi %a, %a : index
    scf.yield %t : index
  }
  case 7 {
    %t = arith.muli %a, %a : index
    scf.yield %t : index
  }
  default {
    scf.yield %a : index
  }
  return %r : index
}

// -----

// Checks nested loops: the outer loop is lowered first, then the inner one inside its body, whose
// exit block continues the outer body and branches back to the outer header.
// CHECK-LABEL: func.func @nested(
// CHECK: cf.br ^[[OUTER:.*]](
// CHECK: ^[[OUTER]](%{{.*}}: index, %{{.*}}: index):
// CHECK: cf.cond_br %{{.*}}, ^[[OUTER_BODY:.*]](%{{.*}}, %{{.*}} : index, index), ^[[DONE:.*]](%{{.*}} : index)
// CHECK: ^[[OUTER_BODY]](%[[I:.*]]: index, %[[S:.*]]: index):
// CHECK: cf.br ^[[INNER:.*]](%{{.*}}, %[[S]] : index, index)
// CHECK: ^[[INNER]](%[[J:.*]]: index, %{{.*}}: index):
// CHECK: arith.cmpi slt, %[[J]], %[[I]] : index
// CHECK: cf.cond_br %{{.*}}, ^[[INNER_BODY:.*]](%{{.*}}, %{{.*}} : index, index), ^[[INNER_EXIT:.*]](%{{.*}} : index)
// CHECK: ^[[INNER_BODY]](
// CHECK: cf.br ^[[INNER]](
// CHECK: ^[[INNER_EXIT]](%[[Q:.*]]: index):
// CHECK: cf.br ^[[OUTER]](%{{.*}}, %[[Q]] : index, index)
// CHECK: ^[[DONE]](%[[R:.*]]: index):
// CHECK: func.return %[[R]] : index
func.func @nested(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%s = %c0) -> (index) {
    %q = scf.for %j = %c0 to %i step %c1 iter_args(%t = %s) -> (index) {
      %u = arith.addi %t, %c1 : index
      scf.yield %u : index
    }
    scf.yield %q : index
  }
  return %r : index
}

// -----

// A host check (cf.assert, as the stream phase emits for dynamic reshapes) becomes a conditional
// branch to a block that fails the invocation with the check's message.
// CHECK-LABEL: func.func @checked
// CHECK: cf.cond_br %{{.*}}, ^[[OK:.*]], ^[[FAIL:.*]]
// CHECK: ^[[OK]]:
// CHECK-NEXT: func.return
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: %[[MSG:.*]] = "vm.const"() <{value = "sizes differ"}> : () -> !vm.str
// CHECK-NEXT: "vm.fail"(%[[MSG]]) : (!vm.str) -> ()
func.func @checked(%a: index, %b: index) {
  %same = arith.cmpi eq, %a, %b : index
  cf.assert %same, "sizes differ"
  func.return
}

// -----

// util.assert_eq (the input phase's dynamic size checks) compares its operands and fails with
// its message and both values, so the runtime error names the sizes.
// CHECK-LABEL: func.func @sizes_equal
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[A:.*]], %[[B:.*]] : index
// CHECK-NEXT: cf.cond_br %[[SAME]], ^[[OK:.*]], ^[[FAIL:.*]]
// CHECK: ^[[OK]]:
// CHECK-NEXT: func.return
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: %[[MSG:.*]] = "vm.const"() <{value = "sizes differ"}> : () -> !vm.str
// CHECK-NEXT: "vm.fail"(%[[MSG]], %[[A]], %[[B]]) : (!vm.str, index, index) -> ()
func.func @sizes_equal(%a: index, %b: index) {
  "util.assert_eq"(%a, %b) <{message = "sizes differ"}> : (index, index) -> ()
  func.return
}
