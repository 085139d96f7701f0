// Checks that dispatch formation stops at util.optimization_barrier (a splat constant behind one
// is not cloned into the dispatch reading it, an elementwise producer behind one is not fused
// into its consumer), and that --drop-optimization-barriers then makes each result an alias of
// its operand.
// RUN: weir-opt --split-input-file --convert-elementwise-to-linalg --form-dispatch-regions %s | filecheck %s --check-prefix=FORM
// RUN: weir-opt --split-input-file --drop-optimization-barriers %s | filecheck %s --check-prefix=DROP

// FORM-LABEL: func.func @splat_behind_barrier(
// FORM-SAME: %[[X:.*]]: tensor<4xf32>
// FORM-NEXT: %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// FORM-NEXT: %[[B:.*]] = util.optimization_barrier %[[C]] : tensor<4xf32>
// FORM-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// FORM-NOT: arith.constant dense
// FORM: linalg.generic {{.*}} ins(%[[X]], %[[B]] :
// FORM: })
// FORM-NEXT: func.return %[[R]]
// DROP-LABEL: func.func @splat_behind_barrier(
// DROP-NEXT: %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// DROP-NEXT: %[[S:.*]] = arith.addf %x, %[[C]] : tensor<4xf32>
// DROP-NEXT: func.return %[[S]]
func.func @splat_behind_barrier(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<2.0> : tensor<4xf32>
  %b = util.optimization_barrier %c : tensor<4xf32>
  %s = arith.addf %x, %b : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Two elementwise ops, a barrier between them: two dispatches, the barrier between them.
// FORM-LABEL: func.func @no_fusion_across(
// FORM: %[[E:.*]] = "flow.dispatch.region"(%{{.*}}) ({
// FORM: math.exp
// FORM: })
// FORM-NEXT: %[[B:.*]] = util.optimization_barrier %[[E]] : tensor<?xf32>
// FORM-NEXT: %[[A:.*]] = "flow.dispatch.region"(%{{.*}}) ({
// FORM-NOT: math.exp
// FORM: linalg.generic {{.*}} ins(%[[B]] :
// FORM: math.absf
// FORM: })
// FORM-NEXT: func.return %[[A]]
// DROP-LABEL: func.func @no_fusion_across(
// DROP-NEXT: %[[E:.*]] = math.exp %x : tensor<?xf32>
// DROP-NEXT: %[[A:.*]] = math.absf %[[E]] : tensor<?xf32>
// DROP-NEXT: func.return %[[A]]
func.func @no_fusion_across(%x: tensor<?xf32>) -> tensor<?xf32> {
  %e = math.exp %x : tensor<?xf32>
  %b = util.optimization_barrier %e : tensor<?xf32>
  %a = math.absf %b : tensor<?xf32>
  return %a : tensor<?xf32>
}

// -----

// Without the barrier the same two ops are one dispatch (what the test above guards against).
// FORM-LABEL: func.func @fused_without(
// FORM: "flow.dispatch.region"
// FORM: math.exp
// FORM: math.absf
// FORM: })
// FORM-NEXT: func.return
func.func @fused_without(%x: tensor<?xf32>) -> tensor<?xf32> {
  %e = math.exp %x : tensor<?xf32>
  %a = math.absf %e : tensor<?xf32>
  return %a : tensor<?xf32>
}

// -----

// Several values at once: each result becomes its own operand.
// DROP-LABEL: func.func @several(
// DROP-SAME: %[[X:.*]]: tensor<4xf32>, %[[N:.*]]: i32
// DROP-NEXT: func.return %[[N]], %[[X]]
func.func @several(%x: tensor<4xf32>, %n: i32) -> (i32, tensor<4xf32>) {
  %b:2 = util.optimization_barrier %x, %n : tensor<4xf32>, i32
  return %b#1, %b#0 : i32, tensor<4xf32>
}
