// Checks that --pack-transients gives an execute's transients one slab, each at an offset
// chosen by its live range in phases (commands between two barriers may run at once;
// transients whose commands never meet share bytes, offsets aligned to 64; the best of several
// placement orders), while transients something else uses, with a dynamic size, or external
// ones keep their own allocations.
// RUN: weir-opt --split-input-file --pack-transients %s | filecheck %s

// A is live over commands 0-2 (dispatch, barrier, dispatch), B over 2-4, C over 4-6: A and C
// share offset 0, B sits after them; the slab holds 64 + 32 bytes.
// CHECK-LABEL: func.func @chain(
// CHECK: %[[SIZE:.*]] = arith.constant 96 : index
// CHECK-NEXT: %[[SLAB:.*]], %[[READY:.*]] = "stream.resource.alloca"(%[[SIZE]]) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
// CHECK-NEXT: %[[OUT:.*]], %[[OUT_READY:.*]] = "stream.resource.alloca"(%{{.*}}) {{.*}} -> (!stream.resource<external>, !stream.timepoint)
// CHECK-NEXT: %[[JOIN:.*]] = "stream.timepoint.join"(%[[READY]], %[[OUT_READY]])
// CHECK-NOT: "stream.resource.alloca"
// CHECK-DAG: %[[A:.*]] = "stream.resource.subview"(%[[SLAB]], %[[C0:.*]], %[[C64:.*]]) : {{.*}} -> !stream.resource<transient>
// CHECK-DAG: %[[B:.*]] = "stream.resource.subview"(%[[SLAB]], %[[C64B:.*]], %[[C32:.*]]) :
// CHECK-DAG: %[[C:.*]] = "stream.resource.subview"(%[[SLAB]], %[[C0C:.*]], %[[C64C:.*]]) :
// CHECK: "stream.cmd.execute"(%[[JOIN]])
// CHECK-NEXT: "stream.cmd.dispatch"(%arg0, %[[A]])
// CHECK-NEXT: "stream.cmd.barrier"
// CHECK-NEXT: "stream.cmd.dispatch"(%[[A]], %[[B]])
// CHECK-NEXT: "stream.cmd.barrier"
// CHECK-NEXT: "stream.cmd.dispatch"(%[[B]], %[[C]])
// CHECK-NEXT: "stream.cmd.barrier"
// CHECK-NEXT: "stream.cmd.dispatch"(%[[C]], %[[OUT]])
func.func @chain(%arg0: !stream.resource<external>) -> !stream.resource<external> {
  %s64 = arith.constant 64 : index
  %s32 = arith.constant 32 : index
  %a, %a_ready = "stream.resource.alloca"(%s64) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %b, %b_ready = "stream.resource.alloca"(%s32) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %c, %c_ready = "stream.resource.alloca"(%s64) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %out, %out_ready = "stream.resource.alloca"(%s64) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<external>, !stream.timepoint)
  %j = "stream.timepoint.join"(%a_ready, %b_ready, %c_ready, %out_ready) : (!stream.timepoint, !stream.timepoint, !stream.timepoint, !stream.timepoint) -> !stream.timepoint
  %t = "stream.cmd.execute"(%j) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%arg0, %a) <{entry_point = @d0::@d0, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<transient>) -> ()
    "stream.cmd.barrier"() : () -> ()
    "stream.cmd.dispatch"(%a, %b) <{entry_point = @d1::@d1, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<transient>) -> ()
    "stream.cmd.barrier"() : () -> ()
    "stream.cmd.dispatch"(%b, %c) <{entry_point = @d2::@d2, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<transient>) -> ()
    "stream.cmd.barrier"() : () -> ()
    "stream.cmd.dispatch"(%c, %out) <{entry_point = @d3::@d3, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<external>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  "stream.timepoint.await"(%t) : (!stream.timepoint) -> ()
  func.return %out : !stream.resource<external>
}

// -----

// A transient the host reads after the execute, and one of dynamic size, keep their own.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: "stream.resource.subview"
// CHECK: "stream.resource.alloca"(%n)
// CHECK: "stream.resource.alloca"(%{{.*}})
// CHECK-NOT: "stream.resource.subview"
func.func @kept(%arg0: !stream.resource<external>, %n: index) -> f32 {
  %s64 = arith.constant 64 : index
  %zero = arith.constant 0 : index
  %a, %a_ready = "stream.resource.alloca"(%n) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %b, %b_ready = "stream.resource.alloca"(%s64) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %j = "stream.timepoint.join"(%a_ready, %b_ready) : (!stream.timepoint, !stream.timepoint) -> !stream.timepoint
  %t = "stream.cmd.execute"(%j) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%arg0, %a) <{entry_point = @d0::@d0, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<transient>) -> ()
    "stream.cmd.barrier"() : () -> ()
    "stream.cmd.dispatch"(%a, %b) <{entry_point = @d1::@d1, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<transient>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  "stream.timepoint.await"(%t) : (!stream.timepoint) -> ()
  %v = "stream.resource.load"(%b, %zero) : (!stream.resource<transient>, index) -> f32
  func.return %v : f32
}

// -----

// Phases, not commands, make live ranges: C is written in the phase where A is last read (no
// barrier between d1 and d2: they may run at once), so C cannot take A's bytes although its
// commands come after A's last one.
// CHECK-LABEL: func.func @concurrent_phase(
// CHECK: %[[SIZE:.*]] = arith.constant 192 : index
// CHECK-NEXT: %[[SLAB:.*]], %{{.*}} = "stream.resource.alloca"(%[[SIZE]])
// CHECK-DAG: %[[A:.*]] = "stream.resource.subview"(%[[SLAB]], %[[A_AT:.*]], %{{.*}})
// CHECK-DAG: %[[B:.*]] = "stream.resource.subview"(%[[SLAB]], %[[B_AT:.*]], %{{.*}})
// CHECK-DAG: %[[C:.*]] = "stream.resource.subview"(%[[SLAB]], %[[C_AT:.*]], %{{.*}})
// CHECK-DAG: %[[A_AT]] = arith.constant 0 : index
// CHECK-DAG: %[[B_AT]] = arith.constant 64 : index
// CHECK-DAG: %[[C_AT]] = arith.constant 128 : index
// CHECK: "stream.cmd.dispatch"(%[[A]], %[[B]]) <{entry_point = @d1::@d1
// CHECK-NEXT: "stream.cmd.dispatch"(%arg0, %[[C]]) <{entry_point = @d2::@d2
func.func @concurrent_phase(%arg0: !stream.resource<external>) -> !stream.resource<external> {
  %s64 = arith.constant 64 : index
  %a, %a_ready = "stream.resource.alloca"(%s64) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %b, %b_ready = "stream.resource.alloca"(%s64) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %c, %c_ready = "stream.resource.alloca"(%s64) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %out, %out_ready = "stream.resource.alloca"(%s64) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<external>, !stream.timepoint)
  %j = "stream.timepoint.join"(%a_ready, %b_ready, %c_ready, %out_ready) : (!stream.timepoint, !stream.timepoint, !stream.timepoint, !stream.timepoint) -> !stream.timepoint
  %t = "stream.cmd.execute"(%j) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%arg0, %a) <{entry_point = @d0::@d0, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<transient>) -> ()
    "stream.cmd.barrier"() : () -> ()
    "stream.cmd.dispatch"(%a, %b) <{entry_point = @d1::@d1, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<transient>) -> ()
    "stream.cmd.dispatch"(%arg0, %c) <{entry_point = @d2::@d2, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<external>, !stream.resource<transient>) -> ()
    "stream.cmd.barrier"() : () -> ()
    "stream.cmd.dispatch"(%b, %c, %out) <{entry_point = @d3::@d3, access = ["ro", "ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 3>}> : (!stream.resource<transient>, !stream.resource<transient>, !stream.resource<external>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  "stream.timepoint.await"(%t) : (!stream.timepoint) -> ()
  func.return %out : !stream.resource<external>
}

// -----

// Largest first would stack D above B and C in the last phase (A at 0, B at 0, C at 320, D at
// 512: 704 bytes); placing by size times span first puts C, live across the region, at 0, and
// the slab meets the most that is live at once, B + C + D in the last phase: 640 bytes (A at
// 192 beside C, B at 192 once A is dead, D at 448).
// CHECK-LABEL: func.func @long_lived_small(
// CHECK: %[[SIZE:.*]] = arith.constant 640 : index
// CHECK-NEXT: %[[SLAB:.*]], %{{.*}} = "stream.resource.alloca"(%[[SIZE]])
// CHECK: %[[A_AT:.*]] = arith.constant 192 : index
// CHECK: %[[A:.*]] = "stream.resource.subview"(%[[SLAB]], %[[A_AT]], %{{.*}})
// CHECK: %[[C_AT:.*]] = arith.constant 0 : index
// CHECK: %[[C:.*]] = "stream.resource.subview"(%[[SLAB]], %[[C_AT]], %{{.*}})
// CHECK: %[[B_AT:.*]] = arith.constant 192 : index
// CHECK: %[[B:.*]] = "stream.resource.subview"(%[[SLAB]], %[[B_AT]], %{{.*}})
// CHECK: %[[D_AT:.*]] = arith.constant 448 : index
// CHECK: %[[D:.*]] = "stream.resource.subview"(%[[SLAB]], %[[D_AT]], %{{.*}})
// CHECK: "stream.cmd.execute"
// CHECK: "stream.cmd.dispatch"(%arg0, %[[A]], %[[C]])
// CHECK: "stream.cmd.dispatch"(%[[B]], %[[C]], %[[D]], %arg0)
func.func @long_lived_small(%arg0: !stream.resource<external>) {
  %s320 = arith.constant 320 : index
  %s256 = arith.constant 256 : index
  %s192 = arith.constant 192 : index
  %a, %a_ready = "stream.resource.alloca"(%s320) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %b, %b_ready = "stream.resource.alloca"(%s256) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %c, %c_ready = "stream.resource.alloca"(%s192) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %d, %d_ready = "stream.resource.alloca"(%s192) <{affinity = #hal.device.affinity<@dev>}> : (index) -> (!stream.resource<transient>, !stream.timepoint)
  %j = "stream.timepoint.join"(%a_ready, %b_ready, %c_ready, %d_ready) : (!stream.timepoint, !stream.timepoint, !stream.timepoint, !stream.timepoint) -> !stream.timepoint
  %t = "stream.cmd.execute"(%j) <{affinity = #hal.device.affinity<@dev>}> ({
    "stream.cmd.dispatch"(%arg0, %a, %c) <{entry_point = @d0::@d0, access = ["ro", "wo", "wo"], operandSegmentSizes = array<i32: 0, 0, 3>}> : (!stream.resource<external>, !stream.resource<transient>, !stream.resource<transient>) -> ()
    "stream.cmd.barrier"() : () -> ()
    "stream.cmd.dispatch"(%a, %arg0) <{entry_point = @d1::@d1, access = ["ro", "wo"], operandSegmentSizes = array<i32: 0, 0, 2>}> : (!stream.resource<transient>, !stream.resource<external>) -> ()
    "stream.cmd.barrier"() : () -> ()
    "stream.cmd.dispatch"(%arg0) <{entry_point = @d2::@d2, access = ["rw"], operandSegmentSizes = array<i32: 0, 0, 1>}> : (!stream.resource<external>) -> ()
    "stream.cmd.barrier"() : () -> ()
    "stream.cmd.dispatch"(%b, %c, %d, %arg0) <{entry_point = @d3::@d3, access = ["rw", "ro", "rw", "wo"], operandSegmentSizes = array<i32: 0, 0, 4>}> : (!stream.resource<transient>, !stream.resource<transient>, !stream.resource<transient>, !stream.resource<external>) -> ()
  }) : (!stream.timepoint) -> !stream.timepoint
  "stream.timepoint.await"(%t) : (!stream.timepoint) -> ()
  func.return
}
