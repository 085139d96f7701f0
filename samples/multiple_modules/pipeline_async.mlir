// The pipeline of pipeline_sync.mlir with asynchronous calls: both imports follow the
// coarse-fences ABI, so each call gets a fence saying when its arguments are ready and one it
// signals when its result is. Compiled with --iree-execution-model=async-external, @run itself
// takes a wait and a signal fence. The imports are not marked `nosideeffects`, so @run waits on
// each call's signal fence right after the call (the callee might touch state the compiler
// cannot see); samples/custom_module_async shows a call the caller does not wait for.
func.func private @module_a.abs(%input: tensor<4096xf32>) -> tensor<4096xf32> attributes {
  iree.abi.model = "coarse-fences"
}
func.func private @module_b.mul(%lhs: tensor<4096xf32>, %rhs: tensor<4096xf32>,
                                %output: tensor<4096xf32> {iree.abi.output = 0 : index})
    -> tensor<4096xf32> attributes {
  iree.abi.model = "coarse-fences"
}

func.func @run(%input: tensor<4096xf32>) -> tensor<4096xf32> {
  // Not ready when the call returns: its fence travels with it to the next call.
  %abs = call @module_a.abs(%input) : (tensor<4096xf32>) -> tensor<4096xf32>
  // Storage `mul` writes its result into (in place across the module boundary).
  %storage = tensor.empty() : tensor<4096xf32>
  // Use the call's result, not %storage: only the result carries the fence that says the
  // contents have been written.
  %result = call @module_b.mul(%abs, %abs, %storage)
      : (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
  return %result : tensor<4096xf32>
}
