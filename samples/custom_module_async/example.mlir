// The program of the asynchronous custom-module sample: dispatches square the input, an
// asynchronous import written in Python doubles it, dispatches square it again. Compiled with
// --iree-execution-model=async-external, @main takes a wait fence and a signal fence and returns
// as soon as all of that is scheduled.
module @example {
  // Implemented by custom_module.py. With coarse fences the call receives a fence saying when
  // its input is ready and one it signals when its result is; `nosideeffects` lets the caller
  // go on without waiting for that signal.
  func.func private @custom.call.async(tensor<?xi32>) -> tensor<?xi32> attributes {
    iree.abi.model = "coarse-fences",
    nosideeffects
  }

  func.func @main(%arg0: tensor<?xi32>) -> tensor<?xi32> {
    %0 = arith.muli %arg0, %arg0 : tensor<?xi32>
    %1 = call @custom.call.async(%0) : (tensor<?xi32>) -> tensor<?xi32>
    %2 = arith.muli %1, %1 : tensor<?xi32>
    return %2 : tensor<?xi32>
  }
}
