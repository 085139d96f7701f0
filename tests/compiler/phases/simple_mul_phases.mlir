// Checks the walkthrough's milestones on simple_mul at each --compile-to phase, and that
// --dump-compilation-phases-to writes every phase.
// RUN: weir-compile --compile-to=input %s | filecheck %s --check-prefix=INPUT
// RUN: weir-compile --compile-to=abi %s | filecheck %s --check-prefix=ABI
// RUN: weir-compile --compile-to=flow %s | filecheck %s --check-prefix=FLOW
// RUN: weir-compile --compile-to=stream %s | filecheck %s --check-prefix=STREAM
// RUN: weir-compile --iree-hal-memoization=false --compile-to=hal %s | filecheck %s --check-prefix=HAL
// RUN: weir-compile --iree-hal-memoization=false --compile-to=vm %s | filecheck %s --check-prefix=VM
// RUN: rm -rf %t && weir-compile --iree-hal-target-backends=vmvx --dump-compilation-phases-to=%t %s -o %t.wvm
// RUN: ls %t | filecheck %s --check-prefix=DUMP

// INPUT-LABEL: func.func @simple_mul(
// INPUT: arith.mulf %{{.*}}, %{{.*}} : tensor<4xf32>

// ABI-LABEL: func.func @simple_mul(
// ABI-SAME: !hal.buffer_view
// ABI: hal.tensor.import

// The outlined executable and the host-side dispatch.
// FLOW: "flow.executable"() <{sym_name = "simple_mul_dispatch_0"}>
// FLOW: linalg.generic
// FLOW-LABEL: func.func @simple_mul(
// FLOW: "flow.dispatch"

// Explicit allocation and execution on timepoints.
// STREAM-LABEL: func.func @simple_mul(
// STREAM: "stream.resource.alloca"
// STREAM: "stream.cmd.execute"
// STREAM: "stream.cmd.dispatch"
// STREAM: "stream.timepoint.await"

// The command buffer and queue submission.
// HAL: "hal.executable.binary"() <{sym_name = "reference"
// HAL-LABEL: func.func @simple_mul(
// HAL: "hal.command_buffer.dispatch"
// HAL: "hal.device.queue.execute"
// HAL: "hal.fence.await"

// The VM program.
// VM: "vm.module"() <{sym_name = "simple_mul_phases"
// VM: "vm.func"() <{sym_name = "simple_mul"
// VM: "vm.call"{{.*}}callee = @hal.device.queue.execute
// VM: "vm.export"() <{function_ref = @simple_mul

// DUMP: simple_mul_phases.abi.mlir
// DUMP: simple_mul_phases.flow.mlir
// DUMP: simple_mul_phases.global-optimization.mlir
// DUMP: simple_mul_phases.hal.mlir
// DUMP: simple_mul_phases.input.mlir
// DUMP: simple_mul_phases.stream.mlir
// DUMP: simple_mul_phases.vm.mlir
func.func @simple_mul(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %arg0, %arg1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
