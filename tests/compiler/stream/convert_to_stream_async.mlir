// Checks that --convert-to-stream gives async.execute regions their timepoints: a region's work
// waits for its token and value dependencies and for nothing else, its token is the timepoint of
// its work, the regions themselves are gone, and the host waits only where a result leaves.
// RUN: weir-opt --split-input-file --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s
// RUN: weir-opt --split-input-file --iree-execution-model=async-external --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s --check-prefix=ASYNC

// Checks two independent branches joined at the end: each branch's execute waits only for its
// own allocation, the join's execute waits for both branches' executes (one flattened join), and
// the synchronous ABI awaits the join's execute once, before the export.
// CHECK-LABEL: func.func @two_branches(
// CHECK-NOT: async.
// CHECK: %[[A_OUT:.*]], %[[A_ALLOC:.*]] = "stream.resource.alloca"
// CHECK-NEXT: %[[A_DONE:.*]] = "stream.cmd.execute"(%[[A_ALLOC]])
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}, %[[A_OUT]])
// CHECK: %[[B_OUT:.*]], %[[B_ALLOC:.*]] = "stream.resource.alloca"
// CHECK-NEXT: %[[B_DONE:.*]] = "stream.cmd.execute"(%[[B_ALLOC]])
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}, %[[B_OUT]])
// CHECK: %[[SUM_OUT:.*]], %[[SUM_ALLOC:.*]] = "stream.resource.alloca"
// CHECK-NEXT: %[[BOTH:.*]] = "stream.timepoint.join"(%[[A_DONE]], %[[B_DONE]], %[[SUM_ALLOC]])
// CHECK-NEXT: %[[SUM_DONE:.*]] = "stream.cmd.execute"(%[[BOTH]])
// CHECK-NEXT: "stream.cmd.dispatch"(%[[A_OUT]], %[[B_OUT]], %[[SUM_OUT]])
// CHECK-NEXT: })
// CHECK-NEXT: "stream.timepoint.await"(%[[SUM_DONE]])
// CHECK-NEXT: "stream.tensor.export"(%[[SUM_OUT]])
// CHECK-NOT: async.
// ASYNC-LABEL: func.func @two_branches(
// ASYNC-NOT: "stream.timepoint.await"
// ASYNC: "stream.timepoint.chain_external"
// ASYNC-NOT: "stream.timepoint.await"
// ASYNC: func.return
func.func @two_branches(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %ta, %a = async.execute -> !async.value<tensor<4xf32>> {
    %s = arith.mulf %x, %x : tensor<4xf32>
    async.yield %s : tensor<4xf32>
  }
  %tb, %b = async.execute -> !async.value<tensor<4xf32>> {
    %t = arith.addf %y, %y : tensor<4xf32>
    async.yield %t : tensor<4xf32>
  }
  %tj, %j = async.execute [%ta, %tb] (%a as %av: !async.value<tensor<4xf32>>, %b as %bv: !async.value<tensor<4xf32>>) -> !async.value<tensor<4xf32>> {
    %u = arith.addf %av, %bv : tensor<4xf32>
    async.yield %u : tensor<4xf32>
  }
  %r = async.await %j : !async.value<tensor<4xf32>>
  return %r : tensor<4xf32>
}

// -----

// Checks a token dependency without data: the second region reads nothing the first writes, yet
// its execute waits for the first region's execute.
// CHECK-LABEL: func.func @token_only(
// CHECK: %[[FIRST:.*]] = "stream.cmd.execute"
// CHECK: %[[SECOND_OUT:.*]], %[[SECOND_ALLOC:.*]] = "stream.resource.alloca"
// CHECK-NEXT: %[[AFTER:.*]] = "stream.timepoint.join"(%[[SECOND_ALLOC]], %[[FIRST]])
// CHECK-NEXT: "stream.cmd.execute"(%[[AFTER]])
func.func @token_only(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t1, %r1 = async.execute -> !async.value<tensor<4xf32>> {
    %s = arith.mulf %x, %x : tensor<4xf32>
    async.yield %s : tensor<4xf32>
  }
  %t2, %r2 = async.execute [%t1] -> !async.value<tensor<4xf32>> {
    %t = arith.addf %y, %y : tensor<4xf32>
    async.yield %t : tensor<4xf32>
  }
  %v1 = async.await %r1 : !async.value<tensor<4xf32>>
  %v2 = async.await %r2 : !async.value<tensor<4xf32>>
  return %v1, %v2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Checks that awaiting a token on the host orders the work after it behind the token without
// blocking the host, and that a scalar yielded by a region is its host value (no wait at all).
// CHECK-LABEL: func.func @await_token(
// CHECK: %[[SCALE:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: %[[REGION:.*]] = "stream.cmd.execute"
// CHECK-NOT: "stream.timepoint.await"
// CHECK: %[[AFTER:.*]] = "stream.timepoint.join"(%{{.*}}, %[[REGION]])
// CHECK-NEXT: "stream.cmd.execute"(%[[AFTER]])
// CHECK: func.return %{{.*}}, %[[SCALE]]
func.func @await_token(%x: tensor<4xf32>, %f: f32) -> (tensor<4xf32>, f32) {
  %t1, %s = async.execute -> !async.value<f32> {
    %m = arith.mulf %f, %f : f32
    async.yield %m : f32
  }
  %t2 = async.execute {
    %unused = arith.mulf %x, %x : tensor<4xf32>
    async.yield
  }
  async.await %t2 : !async.token
  %d = arith.addf %x, %x : tensor<4xf32>
  %v = async.await %s : !async.value<f32>
  return %d, %v : tensor<4xf32>, f32
}

// -----

// Checks nesting: the inner region's work also waits for the outer region's dependencies, and a
// loop inside a region carries its timepoint out into the region's token.
// CHECK-LABEL: func.func @nested(
// CHECK: %[[OUTER_DEP:.*]] = "stream.cmd.execute"
// CHECK: %[[INNER_ALLOC_READY:.*]] = "stream.timepoint.join"(%{{.*}}, %[[OUTER_DEP]])
// CHECK-NEXT: "stream.cmd.execute"(%[[INNER_ALLOC_READY]])
// CHECK: scf.for
// CHECK: "stream.cmd.execute"
// CHECK: scf.yield
func.func @nested(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %t0, %r0 = async.execute -> !async.value<tensor<4xf32>> {
    %s = arith.mulf %x, %x : tensor<4xf32>
    async.yield %s : tensor<4xf32>
  }
  %t1, %r1 = async.execute [%t0] -> !async.value<tensor<4xf32>> {
    %ti, %ri = async.execute -> !async.value<tensor<4xf32>> {
      %e = arith.addf %x, %x : tensor<4xf32>
      async.yield %e : tensor<4xf32>
    }
    %inner = async.await %ri : !async.value<tensor<4xf32>>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %inner) -> (tensor<4xf32>) {
      %next = arith.addf %acc, %x : tensor<4xf32>
      scf.yield %next : tensor<4xf32>
    }
    async.yield %l : tensor<4xf32>
  }
  %v = async.await %r1 : !async.value<tensor<4xf32>>
  return %v : tensor<4xf32>
}
