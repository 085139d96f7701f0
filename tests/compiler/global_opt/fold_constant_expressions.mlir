// Checks that --fold-constant-expressions stores as a constant an elementwise generic computed
// from constants alone (a batch norm's 1 / sqrt(var + eps), a chain of them), reading through
// the folded ones; and leaves alone a generic that reads a run-time value, one whose body the
// evaluator does not know (exp), and one whose assertion fails (the run time's to report).
// RUN: weir-opt --split-input-file --fold-constant-expressions %s | filecheck %s

// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>
// CHECK-NOT: math.sqrt
// CHECK: %[[S:.*]] = arith.constant dense_resource<folded{{.*}}> : tensor<4xf32>
// CHECK-NOT: math.sqrt
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[S]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.mulf
#id = affine_map<(d0) -> (d0)>
func.func @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %var = arith.constant dense<[3.0, 0.0, 8.0, 15.0]> : tensor<4xf32>
  %eps = arith.constant 1.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %v = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%var : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %eps : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.sqrt %in : f32
    %q = arith.divf %one, %r : f32
    linalg.yield %q : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %s : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}
// CHECK: folded{{.*}}: "0x040000000000003F0000803FABAAAA3E0000803E"

// -----

// CHECK-LABEL: func.func @left_alone(
// CHECK: math.exp
// CHECK: cf.assert
func.func @left_alone() -> (tensor<2xf32>, tensor<2xf32>) {
  %c = arith.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%c : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%c : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %ok = arith.cmpf one, %in, %zero : f32
    cf.assert %ok, "zero element"
    linalg.yield %in : f32
  } -> tensor<2xf32>
  return %x, %y : tensor<2xf32>, tensor<2xf32>
}
