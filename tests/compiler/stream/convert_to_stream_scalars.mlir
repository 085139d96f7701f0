// Host scalars crossing into dispatches and tensor elements read back on the host.
// RUN: weir-opt --split-input-file --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s

// Checks that captured scalars become index push constants holding their bits: floats bitcast,
// narrow integers (i1 too) sign-extended to 64 bits, f64 bitcast straight to i64.
// CHECK-LABEL: func.func @push(
// (The region captures them in the order its body uses them.)
// CHECK: %[[DB:.*]] = arith.bitcast %{{.*}} : f64 to i64
// CHECK: %[[D:.*]] = arith.index_cast %[[DB]] : i64 to index
// CHECK: %[[FB:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[FW:.*]] = arith.extsi %[[FB]] : i32 to i64
// CHECK: %[[F:.*]] = arith.index_cast %[[FW]] : i64 to index
// CHECK: %[[PW:.*]] = arith.extsi %{{.*}} : i1 to i64
// CHECK: %[[P:.*]] = arith.index_cast %[[PW]] : i64 to index
// CHECK: "stream.cmd.dispatch"(%[[D]], %[[F]], %[[P]], %{{.*}}, %{{.*}}) <{entry_point = @push_dispatch_0::@push_dispatch_0
func.func @push(%x: tensor<4xf32>, %s: f32, %d: f64, %p: i1) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %w = arith.extf %v : f32 to f64
    %y = arith.mulf %w, %d : f64
    %z = arith.truncf %y : f64 to f32
    %a = arith.addf %z, %s : f32
    %r = arith.select %p, %a, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Checks that tensor.extract waits for the tensor, then loads the element at its row-major
// byte offset (the dynamic row length comes from the resource's dims).
// CHECK-LABEL: func.func @extract(
// CHECK: %[[N:.*]] = "hal.buffer_view.dim"(%{{.*}}) <{index = 1 : index}>
// CHECK: %[[DONE:.*]] = "stream.cmd.execute"
// CHECK: "stream.timepoint.await"(%[[DONE]])
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %[[N]] : index
// CHECK: %[[LIN:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK: %[[SIZE:.*]] = arith.constant 2 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[LIN]], %[[SIZE]] : index
// CHECK: %{{.*}} = "stream.resource.load"(%{{.*}}, %[[OFF]]) : (!stream.resource<transient>, index) -> i16
func.func @extract(%t: tensor<4x?xi16>, %i: index, %j: index) -> i16 {
  %0 = arith.addi %t, %t : tensor<4x?xi16>
  %1 = tensor.extract %0[%i, %j] : tensor<4x?xi16>
  return %1 : i16
}

// -----

// Checks that a 0-d argument's element is at offset 0 and needs no wait (it is ready).
// CHECK-LABEL: func.func @extract_0d(
// CHECK-NOT: stream.timepoint.await
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: "stream.resource.load"(%{{.*}}, %[[ZERO]]) : (!stream.resource<external>, index) -> bf16
func.func @extract_0d(%t: tensor<bf16>) -> bf16 {
  %1 = tensor.extract %t[] : tensor<bf16>
  return %1 : bf16
}
