// Checks that --schedule-execution merges dependent executes on one device into one execute
// (barriers between their commands where data flows, the merged await joining what the first awaited and the
// later allocations), takes every open execute a fan-in depends on, and leaves apart: executes
// separated by a host await, executes on other devices, executes of different async.execute
// regions, and executes that also wait for a fence from outside. In a loop's body, executes
// that also wait for the work before the loop or for what the loop carries merge when every
// timepoint of the function is its one device's work, and stay apart when a fence comes from
// outside.
// RUN: weir-opt --split-input-file --schedule-execution %s | filecheck %s

// CHECK-LABEL: func.func @chain(
// CHECK: %[[A:.*]], %[[A_READY:.*]] = "stream.resource.alloca"
// CHECK: %[[B:.*]], %[[B_READY:.*]] = "stream.resource.alloca"
// CHECK: %[[C:.*]], %[[C_READY:.*]] = "stream.resource.alloca"
// CHECK: %[[WAIT:.*]] = "stream.timepoint.join"(%[[A_READY]], %[[B_READY]], %[[C_READY]])
// CHECK-NEXT: %[[DONE:.*]] = "stream.cmd.execute"(%[[WAIT]])
// CHECK-NEXT: "stream.cmd.dispatch"(%arg0, %[[A]]) <{entry_point = @d0::@d0
// CHECK-NEXT: "stream.cmd.barrier"()
// CHECK-NEXT: "stream.cmd.dispatch"(%[[A]], %[[B]]) <{entry_point = @d1::@d1
// CHECK-NEXT: "stream.cmd.barrier"()
// CHECK-NEXT: "stream.cmd.dispatch"(%[[B]], %[[C]]) <{entry_point = @d2::@d2
// CHECK-NEXT: })
// CHECK-NOT: "stream.cmd.execute"
// CHECK: "stream.timepoint.await"(%[[DONE]])
func.func @chain(%arg0: !stream.resource<external>) -> !stream.resource<external> {
  %s = arith.constant 16 : index
  %a, %a_ready = "stream.resource.alloca"(%s) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %t0 = "stream.cmd.execute"(%a_ready) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%arg0, %a) <{entry_point = @d0::@d0, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<transient>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  %b, %b_ready = "stream.resource.alloca"(%s) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %j1 = "stream.timepoint.join"(%t0, %b_ready) : (!stream.timepoint, !stream.timepoint) -> !stream.timepoint
  %t1 = "stream.cmd.execute"(%j1) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%a, %b) <{entry_point = @d1::@d1, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<transient>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  %c, %c_ready = "stream.resource.alloca"(%s) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<external>, !stream.timepoint)
  %j2 = "stream.timepoint.join"(%t1, %c_ready) : (!stream.timepoint, !stream.timepoint) -> !stream.timepoint
  %t2 = "stream.cmd.execute"(%j2) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%b, %c) <{entry_point = @d2::@d2, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<external>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  "stream.timepoint.await"(%t2) : (!stream.timepoint) -> ()
  func.return %c : !stream.resource<external>
}

// -----

// Two independent executes stay apart until the consumer of both takes them, in program order;
// nothing flows between the two, so no barrier separates them (they may run at once).
// CHECK-LABEL: func.func @fan_in(
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}) <{entry_point = @left::@left
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}) <{entry_point = @right::@right
// CHECK-NEXT: "stream.cmd.barrier"()
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}) <{entry_point = @both::@both
// CHECK-NEXT: })
// CHECK-NOT: "stream.cmd.execute"
// CHECK: "stream.timepoint.await"(%[[DONE]])
func.func @fan_in(%arg0: !stream.resource<external>, %out: !stream.resource<external>) {
  %s = arith.constant 16 : index
  %a, %a_ready = "stream.resource.alloca"(%s) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %b, %b_ready = "stream.resource.alloca"(%s) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %t0 = "stream.cmd.execute"(%a_ready) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%arg0, %a) <{entry_point = @left::@left, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<transient>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  %t1 = "stream.cmd.execute"(%b_ready) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%arg0, %b) <{entry_point = @right::@right, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<transient>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  %j = "stream.timepoint.join"(%t0, %t1) : (!stream.timepoint, !stream.timepoint) -> !stream.timepoint
  %t2 = "stream.cmd.execute"(%j) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%a, %b, %out) <{entry_point = @both::@both, access = ["ro", "ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 3>}> : (!stream.resource<transient>, !stream.resource<transient>, !stream.resource<external>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  "stream.timepoint.await"(%t2) : (!stream.timepoint) -> ()
  func.return
}

// -----

// A join of the first execute's timepoint, made before the second merges, ends up after the
// execute that all three become (it then joins that execute's timepoint), however many merge.
// CHECK-LABEL: func.func @join_between(
// CHECK: %[[A:.*]], %[[A_READY:.*]] = "stream.resource.alloca"
// CHECK: %[[X:.*]], %[[X_READY:.*]] = "stream.resource.alloca"
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"(%[[A_READY]])
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}) <{entry_point = @d0::@d0
// CHECK-NEXT: "stream.cmd.barrier"()
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}) <{entry_point = @d1::@d1
// CHECK-NEXT: "stream.cmd.barrier"()
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}) <{entry_point = @d2::@d2
// CHECK-NEXT: })
// CHECK-NEXT: %[[BOTH:.*]] = "stream.timepoint.join"(%[[DONE]], %[[X_READY]])
// CHECK-NOT: "stream.cmd.execute"
// CHECK: "stream.timepoint.await"(%[[BOTH]])
func.func @join_between(%arg0: !stream.resource<external>, %out: !stream.resource<external>) {
  %s = arith.constant 16 : index
  %a, %a_ready = "stream.resource.alloca"(%s) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %x, %x_ready = "stream.resource.alloca"(%s) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %t0 = "stream.cmd.execute"(%a_ready) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%arg0, %a) <{entry_point = @d0::@d0, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<transient>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  %j = "stream.timepoint.join"(%t0, %x_ready) : (!stream.timepoint, !stream.timepoint) -> !stream.timepoint
  %t1 = "stream.cmd.execute"(%t0) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%a, %x) <{entry_point = @d1::@d1, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<transient>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  %t2 = "stream.cmd.execute"(%t1) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%x, %out) <{entry_point = @d2::@d2, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<external>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  "stream.timepoint.await"(%j) : (!stream.timepoint) -> ()
  func.return
}

// -----

// A host await between two executes is a synchronisation point: both stay.
// CHECK-LABEL: func.func @host_await_between(
// CHECK: %[[FIRST:.*]] = "stream.cmd.execute"
// CHECK: "stream.timepoint.await"(%[[FIRST]])
// CHECK: "stream.cmd.execute"(%[[FIRST]])
func.func @host_await_between(%arg0: !stream.resource<external>, %out: !stream.resource<external>) {
  %t0 = "stream.cmd.execute"() <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%arg0, %out) <{entry_point = @d0::@d0, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<external>) -> ()
  }) : () -> !stream.timepoint
  "stream.timepoint.await"(%t0) : (!stream.timepoint) -> ()
  %t1 = "stream.cmd.execute"(%t0) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%out, %arg0) <{entry_point = @d1::@d1, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<external>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  "stream.timepoint.await"(%t1) : (!stream.timepoint) -> ()
  func.return
}

// -----

// Work on another device, work of different async.execute regions, and work that also waits
// for a fence from outside keep their own executes.
// CHECK-LABEL: func.func @kept_apart(
// CHECK: %[[A:.*]] = "stream.cmd.execute"() <{affinity = #hal.device.affinity<@dev_a>}>
// CHECK: %[[B:.*]] = "stream.cmd.execute"(%[[A]]) <{affinity = #hal.device.affinity<@dev_b>}>
// CHECK: %[[R1:.*]] = "stream.cmd.execute"(%[[B]]) <{affinity = #hal.device.affinity<@dev_b>}> ({
// CHECK: }) {weir.async_region = 1 : index}
// CHECK: %[[R2:.*]] = "stream.cmd.execute"(%[[R1]]) <{affinity = #hal.device.affinity<@dev_b>}> ({
// CHECK: }) {weir.async_region = 2 : index}
// CHECK: %[[OUTSIDE:.*]] = "stream.timepoint.import"
// CHECK: %[[BOTH:.*]] = "stream.timepoint.join"(%[[R2]], %[[OUTSIDE]])
// CHECK: "stream.cmd.execute"(%[[BOTH]]) <{affinity = #hal.device.affinity<@dev_b>}>
func.func @kept_apart(%arg0: !stream.resource<external>, %out: !stream.resource<external>, %fence: !hal.fence) {
  %a = "stream.cmd.execute"() <{affinity = #hal.device.affinity<@dev_a>}> ({
    "stream.cmd.dispatch"(%arg0, %out) <{entry_point = @d0::@d0, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<external>) -> ()
  }) : () -> !stream.timepoint
  %b = "stream.cmd.execute"(%a) <{affinity = #hal.device.affinity<@dev_b>}> ({
    "stream.cmd.dispatch"(%out, %arg0) <{entry_point = @d1::@d1, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<external>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  %r1 = "stream.cmd.execute"(%b) <{affinity = #hal.device.affinity<@dev_b>}> ({
    "stream.cmd.dispatch"(%arg0, %out) <{entry_point = @d2::@d2, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<external>) -> ()
  }) {weir.async_region = 1 : index} : (!stream.timepoint) -> !stream.timepoint
  %r2 = "stream.cmd.execute"(%r1) <{affinity = #hal.device.affinity<@dev_b>}> ({
    "stream.cmd.dispatch"(%out, %arg0) <{entry_point = @d3::@d3, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<external>) -> ()
  }) {weir.async_region = 2 : index} : (!stream.timepoint) -> !stream.timepoint
  %outside = "stream.timepoint.import"(%fence) : (!hal.fence) -> !stream.timepoint
  %both = "stream.timepoint.join"(%r2, %outside) : (!stream.timepoint, !stream.timepoint) -> !stream.timepoint
  %last = "stream.cmd.execute"(%both) <{affinity = #hal.device.affinity<@dev_b>}> ({
    "stream.cmd.dispatch"(%arg0, %out) <{entry_point = @d4::@d4, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<external>) -> ()
  }) {weir.async_region = 2 : index} : (!stream.timepoint) -> !stream.timepoint
  "stream.timepoint.await"(%last) : (!stream.timepoint) -> ()
  func.return
}

// -----

// A loop body's two dependent executes, the first waiting for what the loop carries and the
// second also for an execute before the loop: one execute per step.
// CHECK-LABEL: func.func @loop_body(
// CHECK: %[[BEFORE:.*]] = "stream.cmd.execute"
// CHECK: scf.for
// CHECK: %[[WAIT:.*]] = "stream.timepoint.join"(%t, %a_ready, %[[BEFORE]])
// CHECK-NEXT: %[[STEP:.*]] = "stream.cmd.execute"(%[[WAIT]])
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}) <{entry_point = @d1::@d1
// CHECK-NEXT: "stream.cmd.barrier"()
// CHECK-NEXT: "stream.cmd.dispatch"({{.*}}) <{entry_point = @d2::@d2
// CHECK-NEXT: })
// CHECK-NEXT: scf.yield %[[STEP]]
func.func @loop_body(%arg0: !stream.resource<external>, %out: !stream.resource<external>) {
  %s = arith.constant 16 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %before = "stream.cmd.execute"() <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%arg0, %out) <{entry_point = @d0::@d0, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<external>) -> ()
  }) : () -> !stream.timepoint
  %done = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %before) -> (!stream.timepoint) {
    %a, %a_ready = "stream.resource.alloca"(%s) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
    %j1 = "stream.timepoint.join"(%t, %a_ready) : (!stream.timepoint, !stream.timepoint) -> !stream.timepoint
    %t1 = "stream.cmd.execute"(%j1) <{affinity = #hal.device.affinity<@dev>}> ({
      "stream.cmd.dispatch"(%out, %a) <{entry_point = @d1::@d1, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<transient>) -> ()
    }) : (!stream.timepoint) -> !stream.timepoint
    %j2 = "stream.timepoint.join"(%t1, %before) : (!stream.timepoint, !stream.timepoint) -> !stream.timepoint
    %t2 = "stream.cmd.execute"(%j2) <{affinity = #hal.device.affinity<@dev>}> ({
      "stream.cmd.dispatch"(%a, %out) <{entry_point = @d2::@d2, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<external>) -> ()
    }) : (!stream.timepoint) -> !stream.timepoint
    scf.yield %t2 : !stream.timepoint
  }
  "stream.timepoint.await"(%done) : (!stream.timepoint) -> ()
  func.return
}

// -----

// The same loop in a function that imports a fence: what the loop carries might be that
// fence, so the step that waits for it keeps its own execute.
// CHECK-LABEL: func.func @loop_body_with_a_fence(
// CHECK: scf.for
// CHECK: "stream.cmd.execute"
// CHECK: "stream.cmd.execute"
// CHECK: scf.yield
func.func @loop_body_with_a_fence(%arg0: !stream.resource<external>, %out: !stream.resource<external>, %fence: !hal.fence) {
  %s = arith.constant 16 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %outside = "stream.timepoint.import"(%fence) : (!hal.fence) -> !stream.timepoint
  %done = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %outside) -> (!stream.timepoint) {
    %a, %a_ready = "stream.resource.alloca"(%s) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
    %t1 = "stream.cmd.execute"(%a_ready) <{affinity = #hal.device.affinity<@dev>}> ({
      "stream.cmd.dispatch"(%out, %a) <{entry_point = @d1::@d1, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<transient>) -> ()
    }) : (!stream.timepoint) -> !stream.timepoint
    %j2 = "stream.timepoint.join"(%t1, %t) : (!stream.timepoint, !stream.timepoint) -> !stream.timepoint
    %t2 = "stream.cmd.execute"(%j2) <{affinity = #hal.device.affinity<@dev>}> ({
      "stream.cmd.dispatch"(%a, %out) <{entry_point = @d2::@d2, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<external>) -> ()
    }) : (!stream.timepoint) -> !stream.timepoint
    scf.yield %t2 : !stream.timepoint
  }
  "stream.timepoint.await"(%done) : (!stream.timepoint) -> ()
  func.return
}
