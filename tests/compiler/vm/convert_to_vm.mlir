// Checks that the host program becomes a vm.module calling the hal module, with executables
// created once by the initializer into globals, and an export carrying its reflection.
// RUN: weir-opt --iree-hal-memoization=false --split-input-file --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --translate-executables --convert-stream-to-hal --convert-to-vm %s | filecheck %s
// RUN: weir-opt --iree-hal-memoization=false --split-input-file --iree-execution-model=async-external --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --translate-executables --convert-stream-to-hal --convert-to-vm %s | filecheck %s --check-prefix=ASYNC

// CHECK: "vm.module"() <{sym_name = "module", dependencies = ["module_a"]
// CHECK-DAG: "vm.import"() <{sym_name = "module_a.abs", cconv = "0r_r", model = "sync"}>
// CHECK-DAG: "vm.import"() <{sym_name = "hal.command_buffer.dispatch"
// CHECK-DAG: "vm.global"() <{sym_name = "_executable_run_dispatch_0", type = !hal.executable}>
// CHECK: "vm.func"() <{sym_name = "run"
// CHECK: "vm.call"(%{{.*}}) <{callee = @module_a.abs}>
// CHECK: "vm.global.load"() <{global = @_executable_run_dispatch_0}>
// CHECK: "vm.export"() <{function_ref = @run, export_name = "run", model = "sync", reflection = {iree.abi.declaration = "sync func @run(%input0: tensor<8xf32>) -> (%output0: tensor<8xf32>)"}}>
// CHECK: "vm.func"() <{sym_name = "__init"
// CHECK: "vm.call"(%{{.*}}, %{{.*}}) <{callee = @hal.executable.create}>
// CHECK: "vm.global.store"(%{{.*}}) <{global = @_executable_run_dispatch_0}>
func.func private @module_a.abs(tensor<8xf32>) -> tensor<8xf32>
func.func @run(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = call @module_a.abs(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = arith.addf %0, %x : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// Checks that with async-external a coarse-fences import and export keep their model and their
// fence arguments, and that chaining onto an outside fence is a call to hal.device.queue.barrier.
// ASYNC: "vm.module"() <{sym_name = "module", dependencies = ["custom"]
// ASYNC-DAG: "vm.import"() <{sym_name = "custom.call.async", cconv = "0rrr_r", model = "coarse-fences"}>
// ASYNC-DAG: "vm.import"() <{sym_name = "hal.device.queue.barrier", cconv = "0rrr_", model = "sync"}>
// ASYNC: "vm.func"() <{sym_name = "main"
// ASYNC: ^{{.*}}(%{{[^:]*}}: !hal.buffer_view, %[[WAIT:[^:]*]]: !hal.fence, %[[SIGNAL:[^:]*]]: !hal.fence):
// ASYNC: "vm.call"(%{{.*}}, %[[CALL_WAIT:[^,]*]], %[[CALL_SIGNAL:[^)]*]]) <{callee = @custom.call.async}>
// ASYNC: "vm.call"(%{{.*}}, %{{.*}}, %[[SIGNAL]]) <{callee = @hal.device.queue.barrier}>
// ASYNC: "vm.export"() <{function_ref = @main, export_name = "main", model = "coarse-fences"
func.func private @custom.call.async(tensor<?xi32>) -> tensor<?xi32> attributes {
  iree.abi.model = "coarse-fences", nosideeffects
}
func.func @main(%x: tensor<?xi32>) -> tensor<?xi32> {
  %0 = arith.muli %x, %x : tensor<?xi32>
  %1 = call @custom.call.async(%0) : (tensor<?xi32>) -> tensor<?xi32>
  %2 = arith.muli %1, %1 : tensor<?xi32>
  return %2 : tensor<?xi32>
}
