// Checks that scf.if and scf.while whose regions disagree with their results are rejected at
// the op's own location, naming the types. Every chunk fails, each with its own location, and
// nothing is printed. The valid forms are in verify_ops_valid.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

// if: a branch yields another type than the results.
func.func @if_yield(%c: i1, %a: tensor<4xf32>, %b: tensor<5xf32>) -> tensor<4xf32> {
  // ERR: verify_scf_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'scf.if' op the else region yields (tensor<5xf32>), but the results are (tensor<4xf32>)
  %0 = scf.if %c -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %b : tensor<5xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// if: results need an else region.
func.func @if_no_else(%c: i1, %a: tensor<4xf32>) -> tensor<4xf32> {
  // ERR: verify_scf_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'scf.if' op returns (tensor<4xf32>), so it needs an else region that yields them too
  %0 = scf.if %c -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// while: scf.condition forwards the results' types.
func.func @while_condition(%a: i32) -> i32 {
  // ERR: verify_scf_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'scf.while' op scf.condition forwards (f32), but the results are (i32)
  %0 = scf.while (%x = %a) : (i32) -> i32 {
    %c = arith.constant true
    %f = arith.constant 1.0 : f32
    scf.condition(%c) %f : f32
  } do {
  ^bb0(%y: i32):
    scf.yield %y : i32
  }
  return %0 : i32
}

// -----

// while: the after region takes what scf.condition forwards.
func.func @while_after(%a: i32) -> i32 {
  // ERR: verify_scf_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'scf.while' op the after region takes (i32, i32), but the results are (i32)
  %0 = scf.while (%x = %a) : (i32) -> i32 {
    %c = arith.constant true
    scf.condition(%c) %x : i32
  } do {
  ^bb0(%y: i32, %z: i32):
    scf.yield %y : i32
  }
  return %0 : i32
}

// -----

// while: the after region yields the before region's arguments.
func.func @while_yield(%a: i32) -> i32 {
  // ERR: verify_scf_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'scf.while' op the after region yields (i64), but the before region takes (i32)
  %0 = scf.while (%x = %a) : (i32) -> i32 {
    %c = arith.constant true
    scf.condition(%c) %x : i32
  } do {
  ^bb0(%y: i32):
    %w = arith.extsi %y : i32 to i64
    scf.yield %w : i64
  }
  return %0 : i32
}
