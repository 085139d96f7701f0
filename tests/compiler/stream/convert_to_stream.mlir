// Checks that host tensors become resources with explicit, sized allocations, that the dispatch
// runs in a stream.cmd.execute ordered by timepoints, and that the result is awaited before export.
// RUN: weir-opt --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s

// CHECK-LABEL: func.func @simple_mul(
// CHECK: %[[A:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input0"}> : (!hal.buffer_view) -> !stream.resource<external>
// CHECK: %[[B:.*]] = "stream.tensor.import"(%{{.*}}) <{encoding = tensor<4xf32>, name = "input1"}>
// CHECK: %[[SIZE:.*]] = "stream.tensor.sizeof"() <{encoding = tensor<4xf32>}> : () -> index
// CHECK: %[[OUT:.*]], %[[ALLOCATED:.*]] = "stream.resource.alloca"(%[[SIZE]]) : (index) -> (!stream.resource<external>, !stream.timepoint)
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"(%[[ALLOCATED]]) ({
// CHECK-NEXT: "stream.cmd.dispatch"(%[[A]], %[[B]], %[[OUT]]) <{entry_point = @simple_mul_dispatch_0::@simple_mul_dispatch_0, access = ["ro", "ro", "wo"]
// CHECK: "stream.timepoint.await"(%[[DONE]])
// CHECK: %[[VIEW:.*]] = "stream.tensor.export"(%[[OUT]]) <{encoding = tensor<4xf32>}>
// CHECK: func.return %[[VIEW]]
func.func @simple_mul(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
