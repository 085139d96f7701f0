// A pipeline calling into module_a and module_b, which must be loaded into the context first.
func.func private @module_a.abs(tensor<4096xf32>) -> tensor<4096xf32>
func.func private @module_b.mul(tensor<4096xf32>, tensor<4096xf32>,
                                tensor<4096xf32> {iree.abi.output = 0 : index}) -> tensor<4096xf32>

func.func @run(%input: tensor<4096xf32>) -> tensor<4096xf32> {
  %abs = call @module_a.abs(%input) : (tensor<4096xf32>) -> tensor<4096xf32>
  %storage = tensor.empty() : tensor<4096xf32>
  %result = call @module_b.mul(%abs, %abs, %storage)
      : (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
  return %result : tensor<4096xf32>
}
