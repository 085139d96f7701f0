// A three-layer perceptron on a batch of 64: 784 -> 1024 (relu) -> 1024 (relu) -> 10, with the
// weights and biases as arguments.
func.func @mlp(%x: tensor<64x784xf32>,
               %w1: tensor<784x1024xf32>, %b1: tensor<1024xf32>,
               %w2: tensor<1024x1024xf32>, %b2: tensor<1024xf32>,
               %w3: tensor<1024x10xf32>, %b3: tensor<10xf32>) -> tensor<64x10xf32> {
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : tensor<64x1024xf32>
  %hidden = tensor.empty() : tensor<64x1024xf32>
  %acc_hidden = linalg.fill ins(%zero : f32) outs(%hidden : tensor<64x1024xf32>) -> tensor<64x1024xf32>

  %mm1 = linalg.matmul ins(%x, %w1 : tensor<64x784xf32>, tensor<784x1024xf32>) outs(%acc_hidden : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %bias1 = linalg.broadcast ins(%b1 : tensor<1024xf32>) outs(%hidden : tensor<64x1024xf32>) dimensions = [0]
  %pre1 = arith.addf %mm1, %bias1 : tensor<64x1024xf32>
  %h1 = arith.maximumf %pre1, %zeros : tensor<64x1024xf32>

  %mm2 = linalg.matmul ins(%h1, %w2 : tensor<64x1024xf32>, tensor<1024x1024xf32>) outs(%acc_hidden : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %bias2 = linalg.broadcast ins(%b2 : tensor<1024xf32>) outs(%hidden : tensor<64x1024xf32>) dimensions = [0]
  %pre2 = arith.addf %mm2, %bias2 : tensor<64x1024xf32>
  %h2 = arith.maximumf %pre2, %zeros : tensor<64x1024xf32>

  %out = tensor.empty() : tensor<64x10xf32>
  %acc_out = linalg.fill ins(%zero : f32) outs(%out : tensor<64x10xf32>) -> tensor<64x10xf32>
  %mm3 = linalg.matmul ins(%h2, %w3 : tensor<64x1024xf32>, tensor<1024x10xf32>) outs(%acc_out : tensor<64x10xf32>) -> tensor<64x10xf32>
  %bias3 = linalg.broadcast ins(%b3 : tensor<10xf32>) outs(%out : tensor<64x10xf32>) dimensions = [0]
  %0 = arith.addf %mm3, %bias3 : tensor<64x10xf32>
  return %0 : tensor<64x10xf32>
}
