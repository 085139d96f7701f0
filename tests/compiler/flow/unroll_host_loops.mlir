// Checks that --unroll-host-loops unrolls an scf.for with constant bounds and a few steps (each
// step's ops in order, the induction variable a constant, what it carries passed on, the index
// arithmetic folded and its constants left unread gone), unrolls a nest whole, replaces a loop of no steps by what it carries in,
// and keeps loops whose bounds are values and loops of more than 64 steps.
// RUN: weir-opt --split-input-file --unroll-host-loops %s | filecheck %s

// CHECK-LABEL: func.func @three_steps(
// CHECK-NOT: scf.for
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK: %c3 = arith.constant 3 : index
// CHECK-NEXT: %[[O0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[S0:.*]] = tensor.extract_slice %x[%[[O0]]] [4] [1]
// CHECK-NEXT: %[[A0:.*]] = arith.addf %a, %[[S0]]
// CHECK-NEXT: %[[O1:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[S1:.*]] = tensor.extract_slice %x[%[[O1]]] [4] [1]
// CHECK-NEXT: %[[A1:.*]] = arith.addf %[[A0]], %[[S1]]
// CHECK-NEXT: %[[O2:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[S2:.*]] = tensor.extract_slice %x[%[[O2]]] [4] [1]
// CHECK-NEXT: %[[A2:.*]] = arith.addf %[[A1]], %[[S2]]
// CHECK-NEXT: func.return %[[A2]]
func.func @three_steps(%a: tensor<4xf32>, %x: tensor<8xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    // An exporter's clamp of the index into [0, 3): index_cast, compare, select, min/max.
    %ii = arith.index_cast %i : index to i64
    %z = arith.constant 0 : i64
    %neg = arith.cmpi slt, %ii, %z : i64
    %wrapped = arith.addi %ii, %z : i64
    %pick = arith.select %neg, %wrapped, %ii : i64
    %lo = arith.maxsi %pick, %z : i64
    %two = arith.constant 2 : i64
    %doubled = arith.muli %lo, %two : i64
    %off = arith.index_cast %doubled : i64 to index
    %s = tensor.extract_slice %x[%off] [4] [1] : tensor<8xf32> to tensor<4xf32>
    %n = arith.addf %acc, %s : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @nest(
// CHECK-NOT: scf.for
// CHECK-COUNT-6: arith.addf
// CHECK-NOT: arith.addf
func.func @nest(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%outer = %a) -> (tensor<4xf32>) {
    %q = scf.for %j = %c0 to %c3 step %c1 iter_args(%acc = %outer) -> (tensor<4xf32>) {
      %n = arith.addf %acc, %acc : tensor<4xf32>
      scf.yield %n : tensor<4xf32>
    }
    scf.yield %q : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @no_steps(
// CHECK-NOT: scf.for
// CHECK: func.return %a
func.func @no_steps(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c5 = arith.constant 5 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c5 to %c1 step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    %n = arith.addf %acc, %acc : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @kept(
// CHECK: scf.for %{{.*}} = %{{.*}} to %n
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
func.func @kept(%a: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c65 = arith.constant 65 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    %x = arith.addf %acc, %acc : tensor<4xf32>
    scf.yield %x : tensor<4xf32>
  }
  %long = scf.for %i = %c0 to %c65 step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    %y = arith.addf %acc, %acc : tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  }
  return %r, %long : tensor<4xf32>, tensor<4xf32>
}
