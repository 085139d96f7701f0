// Two independent branches joined at the end, written with MLIR's async dialect (seed 003).
//   weir-compile two_branches.mlir -o two_branches.wvm
//   weir-run-module --module=two_branches.wvm --device=local-task --function=two_branches \
//     --input=4xf32=1,2,3,4 --input=4xf32=5,6,7,8
// prints 4xf32=11 16 23 32 (x * x + (y + y)). Branches a and b depend on nothing but the
// arguments, so on local-task they run at the same time; the join starts when both are ready.
func.func @two_branches(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // Branch a: x * x.
  %token_a, %a = async.execute -> !async.value<tensor<4xf32>> {
    %square = arith.mulf %x, %x : tensor<4xf32>
    async.yield %square : tensor<4xf32>
  }
  // Branch b: y + y, independent of branch a.
  %token_b, %b = async.execute -> !async.value<tensor<4xf32>> {
    %twice = arith.addf %y, %y : tensor<4xf32>
    async.yield %twice : tensor<4xf32>
  }
  // The join waits for both branches: their tokens and their values.
  %token_sum, %sum = async.execute [%token_a, %token_b]
      (%a as %a_value: !async.value<tensor<4xf32>>, %b as %b_value: !async.value<tensor<4xf32>>)
      -> !async.value<tensor<4xf32>> {
    %joined = arith.addf %a_value, %b_value : tensor<4xf32>
    async.yield %joined : tensor<4xf32>
  }
  %result = async.await %sum : !async.value<tensor<4xf32>>
  return %result : tensor<4xf32>
}
