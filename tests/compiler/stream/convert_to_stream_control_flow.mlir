// Checks that host control flow stays structured through the stream conversion: a tensor crossing
// a region boundary is carried as (external resource, timepoint, dynamic dims...), so loops only
// schedule work ordered by carried timepoints and the host waits only where a result leaves.
// RUN: weir-opt --split-input-file --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s

// Checks scf.for: the initial value enters with an immediate timepoint, the body's dispatch waits
// on the carried timepoint, and the yield passes the new resource with its execute's timepoint.
// CHECK-LABEL: func.func @loop(
// CHECK: %[[A:.*]] = "stream.tensor.import"
// CHECK: %[[NOW:.*]] = "stream.timepoint.immediate"
// CHECK: %[[R:.*]], %[[R_READY:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[A]], %[[ACC_READY:.*]] = %[[NOW]]) -> (!stream.resource<external>, !stream.timepoint) {
// CHECK: %[[OUT:.*]], %[[ALLOCATED:.*]] = "stream.resource.alloca"
// CHECK: %[[AFTER:.*]] = "stream.timepoint.join"(%[[ACC_READY]], %[[ALLOCATED]])
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"(%[[AFTER]])
// CHECK-NEXT: "stream.cmd.dispatch"(%[[ACC]], %[[A]], %[[OUT]])
// CHECK-NOT: "stream.timepoint.await"
// CHECK: scf.yield %[[OUT]], %[[DONE]] : !stream.resource<external>, !stream.timepoint
// CHECK: "stream.timepoint.await"(%[[R_READY]])
// CHECK: "stream.tensor.export"(%[[R]])
func.func @loop(%a: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    %s = arith.addf %acc, %a : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}


// -----

// Checks that a carried tensor of dynamic shape carries its dims, which tensor.dim inside the
// loop and the export after it read.
// CHECK-LABEL: func.func @grow(
// CHECK: %[[D0:.*]] = "hal.buffer_view.dim"
// CHECK: %[[A:.*]] = "stream.tensor.import"(%{{.*}}, %[[D0]])
// CHECK: %[[R:.*]], %[[R_READY:.*]], %[[R_DIM:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[A]], %{{.*}} = %{{.*}}, %[[D:.*]] = %[[D0]]) -> (!stream.resource<external>, !stream.timepoint, index) {
// CHECK: %[[D1:.*]] = arith.addi %[[D]], %{{.*}} : index
// CHECK: %[[SIZE:.*]] = "stream.tensor.sizeof"(%[[D1]])
// CHECK: %[[E:.*]], %[[E_READY:.*]] = "stream.resource.alloca"(%[[SIZE]])
// CHECK: scf.yield %[[E]], %[[E_READY]], %[[D1]] : !stream.resource<external>, !stream.timepoint, index
// CHECK: "stream.tensor.export"(%[[R]], %[[R_DIM]])
func.func @grow(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<?xf32>) {
    %d = tensor.dim %acc, %c0 : tensor<?xf32>
    %d1 = arith.addi %d, %c1 : index
    %e = tensor.empty(%d1) : tensor<?xf32>
    scf.yield %e : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}


// -----

// Checks scf.if: both regions yield a resource and its timepoint; a constant reaching a carried
// position is copied into an external allocation, so the result has one resource type.
// CHECK-LABEL: func.func @pick(
// CHECK: %[[R:.*]], %[[R_READY:.*]] = scf.if %{{.*}} -> (!stream.resource<external>, !stream.timepoint) {
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"
// CHECK: scf.yield %{{.*}}, %[[DONE]] : !stream.resource<external>, !stream.timepoint
// CHECK: } else {
// CHECK: %[[K:.*]] = "stream.resource.constant"
// CHECK: %[[COPY:.*]], %[[COPY_ALLOCATED:.*]] = "stream.resource.alloca"
// CHECK: %[[COPIED:.*]] = "stream.cmd.execute"(%[[COPY_ALLOCATED]])
// CHECK-NEXT: "stream.cmd.copy"(%[[K]], %[[COPY]], %{{.*}})
// CHECK: scf.yield %[[COPY]], %[[COPIED]] : !stream.resource<external>, !stream.timepoint
// CHECK: "stream.timepoint.await"(%[[R_READY]])
// CHECK: "stream.tensor.export"(%[[R]])
func.func @pick(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    %d = arith.addf %a, %a : tensor<4xf32>
    scf.yield %d : tensor<4xf32>
  } else {
    %k = arith.constant dense<1.0> : tensor<4xf32>
    scf.yield %k : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}


// -----

// Checks scf.while: scalars stay as they are, the tensor is carried as a resource and timepoint
// through the before region, scf.condition, the after region and the results.
// CHECK-LABEL: func.func @halve(
// CHECK: %[[COUNT:.*]], %[[R:.*]], %[[R_READY:.*]] = scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (index, !stream.resource<external>, !stream.timepoint) -> (index, !stream.resource<external>, !stream.timepoint) {
// CHECK: scf.condition(%{{.*}}) %{{.*}}, %{{.*}}, %{{.*}} : index, !stream.resource<external>, !stream.timepoint
// CHECK: } do {
// CHECK: ^bb0(%{{.*}}: index, %[[Y:.*]]: !stream.resource<external>, %[[Y_READY:.*]]: !stream.timepoint):
// CHECK: "stream.timepoint.join"(%[[Y_READY]],
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}} : index, !stream.resource<external>, !stream.timepoint
// CHECK: "stream.timepoint.await"(%[[R_READY]])
// CHECK: func.return %{{.*}}, %[[COUNT]] : !hal.buffer_view, index
func.func @halve(%a: tensor<4xf32>, %n: index) -> (tensor<4xf32>, index) {
  %c0 = arith.constant 0 : index
  %r:2 = scf.while (%i = %c0, %x = %a) : (index, tensor<4xf32>) -> (index, tensor<4xf32>) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %x : index, tensor<4xf32>
  } do {
  ^bb0(%j: index, %y: tensor<4xf32>):
    %c1 = arith.constant 1 : index
    %next = arith.addi %j, %c1 : index
    %d = arith.mulf %y, %y : tensor<4xf32>
    scf.yield %next, %d : index, tensor<4xf32>
  }
  return %r#1, %r#0 : tensor<4xf32>, index
}
