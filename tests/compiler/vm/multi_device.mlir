// Checks that --convert-to-vm creates each executable once per device that dispatches it: a global
// `_executable_<name>` for device 0 and `_executable_<name>__device<N>` for device N, each made by
// the initializer with hal.executable.create on the handle from hal.device.get of its ordinal,
// and that each dispatch loads the global of the device whose command buffer it records into.
// Constants are wrapped once too, by the initializer, into a global per device that uses them
// (`_constant_<n>[__device<N>]`), which each call loads. The module lists its devices in binding
// order.
// RUN: weir-opt --iree-hal-memoization=false --split-input-file --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --elide-transfers --translate-executables --convert-stream-to-hal --convert-to-vm %s | filecheck %s
// RUN: weir-opt --iree-hal-memoization=false --split-input-file --iree-execution-model=async-external --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] --materialize-target-devices --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --translate-executables --convert-stream-to-hal --convert-to-vm %s | filecheck %s --check-prefix=ASYNC

// The seed program: dispatch 0 runs only on device 0 and dispatch 1 only on device 1, so each
// executable has exactly one global.
// CHECK: "vm.module"() <{sym_name = "module", dependencies = [], devices = ["device_a", "device_b"]}>
// CHECK-NOT: "vm.global"() <{sym_name = "_executable_multi_device_mul_dispatch_1", type
// CHECK-DAG: "vm.global"() <{sym_name = "_executable_multi_device_mul_dispatch_0", type = !hal.executable}>
// CHECK-DAG: "vm.global"() <{sym_name = "_executable_multi_device_mul_dispatch_1__device1", type = !hal.executable}>
// CHECK-NOT: "vm.global"() <{sym_name = "_executable_multi_device_mul_dispatch_0__device
// CHECK-NOT: "vm.global"() <{sym_name = "_executable_multi_device_mul_dispatch_1", type
// CHECK-DAG: "vm.global"() <{sym_name = "_constant_0", type = !hal.buffer}>
// CHECK-DAG: "vm.global"() <{sym_name = "_constant_1__device1", type = !hal.buffer}>
// CHECK: "vm.func"() <{sym_name = "multi_device_mul"
// CHECK: %[[ZERO:.*]] = "vm.const"() <{value = 0 : i64}> : () -> index
// CHECK-NEXT: %[[DEV0:.*]] = "vm.call"(%[[ZERO]]) <{callee = @hal.device.get}>
// CHECK-NEXT: %[[ONE:.*]] = "vm.const"() <{value = 1 : i64}> : () -> index
// CHECK-NEXT: %[[DEV1:.*]] = "vm.call"(%[[ONE]]) <{callee = @hal.device.get}>
// CHECK: "vm.global.load"() <{global = @_constant_0}>
// CHECK: %[[CB0:.*]] = "vm.call"(%[[DEV0]]) <{callee = @hal.command_buffer.create}>
// CHECK-NEXT: %[[EXE0:.*]] = "vm.global.load"() <{global = @_executable_multi_device_mul_dispatch_0}>
// CHECK: "vm.call"(%[[CB0]], %[[EXE0]], {{.*}}) <{callee = @hal.command_buffer.dispatch}>
// CHECK: "vm.global.load"() <{global = @_constant_1__device1}>
// CHECK: %[[CB1:.*]] = "vm.call"(%[[DEV1]]) <{callee = @hal.command_buffer.create}>
// CHECK-NEXT: %[[EXE1:.*]] = "vm.global.load"() <{global = @_executable_multi_device_mul_dispatch_1__device1}>
// CHECK: "vm.call"(%[[CB1]], %[[EXE1]], {{.*}}) <{callee = @hal.command_buffer.dispatch}>
// CHECK: "vm.call"(%[[DEV1]], %{{.*}}, %{{.*}}, %{{.*}}) <{callee = @hal.device.queue.execute}>
// The initializer gets each device once, then creates the executables dispatched on it.
// CHECK: "vm.func"() <{sym_name = "__init"
// CHECK-NEXT: %[[I_ZERO:.*]] = "vm.const"() <{value = 0 : i64}> : () -> index
// CHECK-NEXT: %[[I_DEV0:.*]] = "vm.call"(%[[I_ZERO]]) <{callee = @hal.device.get}>
// CHECK-NEXT: %[[NAME0:.*]] = "vm.const"() <{value = "multi_device_mul_dispatch_0"}>
// CHECK-NEXT: %[[CREATED0:.*]] = "vm.call"(%[[I_DEV0]], %[[NAME0]]) <{callee = @hal.executable.create}>
// CHECK-NEXT: "vm.global.store"(%[[CREATED0]]) <{global = @_executable_multi_device_mul_dispatch_0}>
// CHECK-NEXT: %[[I_ONE:.*]] = "vm.const"() <{value = 1 : i64}> : () -> index
// CHECK-NEXT: %[[I_DEV1:.*]] = "vm.call"(%[[I_ONE]]) <{callee = @hal.device.get}>
// CHECK-NEXT: %[[NAME1:.*]] = "vm.const"() <{value = "multi_device_mul_dispatch_1"}>
// CHECK-NEXT: %[[CREATED1:.*]] = "vm.call"(%[[I_DEV1]], %[[NAME1]]) <{callee = @hal.executable.create}>
// CHECK-NEXT: "vm.global.store"(%[[CREATED1]]) <{global = @_executable_multi_device_mul_dispatch_1__device1}>
// CHECK-NEXT: %[[DATA0:.*]] = "vm.const.ref.rodata"()
// CHECK-NEXT: %[[BUF0:.*]] = "vm.call"(%[[I_DEV0]], %[[DATA0]]) <{callee = @hal.allocator.import_rodata}>
// CHECK-NEXT: "vm.global.store"(%[[BUF0]]) <{global = @_constant_0}>
// CHECK-NEXT: %[[DATA1:.*]] = "vm.const.ref.rodata"()
// CHECK-NEXT: %[[BUF1:.*]] = "vm.call"(%[[I_DEV1]], %[[DATA1]]) <{callee = @hal.allocator.import_rodata}>
// CHECK-NEXT: "vm.global.store"(%[[BUF1]]) <{global = @_constant_1__device1}>
// CHECK-NEXT: "vm.return"()

// With async-external (and no elision) the copies are calls to hal.device.queue.copy on the source
// device, and a hal.device.queue.barrier on device 0 signals the caller's fence.
// ASYNC: "vm.import"() <{sym_name = "hal.device.queue.copy", cconv = "0rrrrIrII_", model = "sync"}>
// ASYNC: "vm.func"() <{sym_name = "multi_device_mul"
// ASYNC: ^{{.*}}(%{{[^:]*}}: !hal.buffer_view, %[[WAIT:[^:]*]]: !hal.fence, %[[SIGNAL:[^:]*]]: !hal.fence):
// ASYNC: %[[DEV0:.*]] = "vm.call"(%{{.*}}) <{callee = @hal.device.get}>
// ASYNC-NEXT: "vm.const"() <{value = 1 : i64}>
// ASYNC-NEXT: %[[DEV1:.*]] = "vm.call"(%{{.*}}) <{callee = @hal.device.get}>
// ASYNC: "vm.call"(%[[DEV0]], %[[WAIT]], %[[D0_DONE:[^,]*]], %{{.*}}) <{callee = @hal.device.queue.execute}>
// ASYNC: "vm.call"(%[[DEV0]], %[[D0_DONE]], %[[COPIED:[^,]*]], {{.*}}) <{callee = @hal.device.queue.copy}>
// ASYNC: "vm.call"(%[[DEV1]], %[[COPIED]], %[[D1_DONE:[^,]*]], %{{.*}}) <{callee = @hal.device.queue.execute}>
// ASYNC: "vm.call"(%[[DEV1]], %[[D1_DONE]], %[[BACK:[^,]*]], {{.*}}) <{callee = @hal.device.queue.copy}>
// ASYNC: "vm.call"(%[[DEV0]], %[[BACK]], %[[SIGNAL]]) <{callee = @hal.device.queue.barrier}>
// ASYNC: "vm.global.store"(%{{.*}}) <{global = @_executable_multi_device_mul_dispatch_0}>
// ASYNC: "vm.global.store"(%{{.*}}) <{global = @_executable_multi_device_mul_dispatch_1__device1}>
func.func public @multi_device_mul(
  %input_a: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
) -> (
  tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
) {
  %constant_a = arith.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %transient_a = arith.mulf %input_a, %constant_a : tensor<4xf32>
  %transient_b = flow.tensor.transfer %transient_a : tensor<4xf32> to #hal.device.promise<@device_b>
  %constant_b = arith.constant dense<[4.0, 5.0, 6.0, 7.0]> : tensor<4xf32>
  %result_b = arith.mulf %transient_b, %constant_b : tensor<4xf32>
  %result_a = flow.tensor.transfer %result_b : tensor<4xf32> to #hal.device.promise<@device_a>
  func.return %result_a : tensor<4xf32>
}

// -----

// One executable dispatched on both devices (written already outlined, so both dispatches name
// it): one global per device, each created on its own device by the initializer.
// CHECK: "vm.module"() <{sym_name = "module", dependencies = [], devices = ["device_a", "device_b"]}>
// CHECK-DAG: "vm.global"() <{sym_name = "_executable_square", type = !hal.executable}>
// CHECK-DAG: "vm.global"() <{sym_name = "_executable_square__device1", type = !hal.executable}>
// CHECK: "vm.func"() <{sym_name = "twice"
// CHECK: %[[DEV0:.*]] = "vm.call"(%{{.*}}) <{callee = @hal.device.get}>
// CHECK: %[[DEV1:.*]] = "vm.call"(%{{.*}}) <{callee = @hal.device.get}>
// CHECK: %[[CB0:.*]] = "vm.call"(%[[DEV0]]) <{callee = @hal.command_buffer.create}>
// CHECK-NEXT: %[[EXE0:.*]] = "vm.global.load"() <{global = @_executable_square}>
// CHECK: "vm.call"(%[[CB0]], %[[EXE0]], {{.*}}) <{callee = @hal.command_buffer.dispatch}>
// CHECK: %[[CB1:.*]] = "vm.call"(%[[DEV1]]) <{callee = @hal.command_buffer.create}>
// CHECK-NEXT: %[[EXE1:.*]] = "vm.global.load"() <{global = @_executable_square__device1}>
// CHECK: "vm.call"(%[[CB1]], %[[EXE1]], {{.*}}) <{callee = @hal.command_buffer.dispatch}>
// CHECK: "vm.func"() <{sym_name = "__init"
// CHECK-NEXT: %[[I_ZERO:.*]] = "vm.const"() <{value = 0 : i64}> : () -> index
// CHECK-NEXT: %[[I_DEV0:.*]] = "vm.call"(%[[I_ZERO]]) <{callee = @hal.device.get}>
// CHECK-NEXT: %[[NAME0:.*]] = "vm.const"() <{value = "square"}>
// CHECK-NEXT: %[[CREATED0:.*]] = "vm.call"(%[[I_DEV0]], %[[NAME0]]) <{callee = @hal.executable.create}>
// CHECK-NEXT: "vm.global.store"(%[[CREATED0]]) <{global = @_executable_square}>
// CHECK-NEXT: %[[I_ONE:.*]] = "vm.const"() <{value = 1 : i64}> : () -> index
// CHECK-NEXT: %[[I_DEV1:.*]] = "vm.call"(%[[I_ONE]]) <{callee = @hal.device.get}>
// CHECK-NEXT: %[[NAME1:.*]] = "vm.const"() <{value = "square"}>
// CHECK-NEXT: %[[CREATED1:.*]] = "vm.call"(%[[I_DEV1]], %[[NAME1]]) <{callee = @hal.executable.create}>
// CHECK-NEXT: "vm.global.store"(%[[CREATED1]]) <{global = @_executable_square__device1}>
// CHECK-NEXT: "vm.return"()
// ASYNC: "vm.func"() <{sym_name = "__init"
// ASYNC: "vm.global.store"(%{{.*}}) <{global = @_executable_square}>
// ASYNC: "vm.global.store"(%{{.*}}) <{global = @_executable_square__device1}>
"flow.executable"() <{sym_name = "square"}> ({
  "flow.executable.export"() <{sym_name = "square", function_ref = @square}> : () -> ()
  builtin.module {
    func.func @square(%x: tensor<4xf32>) -> tensor<4xf32> attributes {weir.binding_dims = [[], []]} {
      %init = tensor.empty() : tensor<4xf32>
      %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%init : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %sq = arith.mulf %in, %in : f32
        linalg.yield %sq : f32
      } -> tensor<4xf32>
      func.return %0 : tensor<4xf32>
    }
  }
}) : () -> ()
func.func @twice(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}) {
  %0 = "flow.dispatch"(%x) <{entry_point = @square::@square, operandSegmentSizes = array<i32: 1, 0>}> : (tensor<4xf32>) -> tensor<4xf32>
  %1 = flow.tensor.transfer %0 : tensor<4xf32> to #hal.device.promise<@device_b>
  %2 = "flow.dispatch"(%1) <{entry_point = @square::@square, operandSegmentSizes = array<i32: 1, 0>}> : (tensor<4xf32>) -> tensor<4xf32>
  %3 = flow.tensor.transfer %2 : tensor<4xf32> to #hal.device.promise<@device_a>
  return %3 : tensor<4xf32>
}
