// Checks that dispatch regions form inside async.execute regions and never across their
// boundary: each async region's chain fuses into its own dispatch region, inside it, so the
// stream phase can order it by the async region's dependencies.
// RUN: weir-opt --convert-elementwise-to-linalg --form-dispatch-regions %s | filecheck %s

// CHECK-LABEL: func.func @branches
// CHECK: async.execute -> (!async.value<tensor<4xf32>>) {
// CHECK-NEXT: %[[A:.*]] = "flow.dispatch.region"() ({
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: async.yield %[[A]]
// CHECK: async.execute [%{{.*}}] (%{{.*}} as %[[V:.*]]: !async.value<tensor<4xf32>>) -> (!async.value<tensor<4xf32>>) {
// CHECK-NEXT: %[[B:.*]] = "flow.dispatch.region"() ({
// CHECK: arith.addf
// CHECK: async.yield %[[B]]
func.func @branches(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t0, %r0 = async.execute -> !async.value<tensor<4xf32>> {
    %e = math.exp %x : tensor<4xf32>
    %m = arith.mulf %e, %x : tensor<4xf32>
    async.yield %m : tensor<4xf32>
  }
  %t1, %r1 = async.execute [%t0] (%r0 as %v: !async.value<tensor<4xf32>>) -> !async.value<tensor<4xf32>> {
    %s = arith.addf %v, %x : tensor<4xf32>
    async.yield %s : tensor<4xf32>
  }
  %r = async.await %r1 : !async.value<tensor<4xf32>>
  return %r : tensor<4xf32>
}
