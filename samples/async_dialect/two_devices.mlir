// The two branches of two_branches.mlir, each on its own device: an async region's
// `stream.affinity` says where its work runs; the join runs on device_a.
//   weir-compile two_devices.mlir --iree-hal-target-device=device_a=local[0] \
//     --iree-hal-target-device=device_b=local[1] -o two_devices.wvm
//   weir-run-module --module=two_devices.wvm --device=local-task --device=local-task \
//     --function=two_devices --input=4xf32=1,2,3,4 --input=4xf32=5,6,7,8
// prints 4xf32=11 16 23 32.
func.func @two_devices(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %token_a, %a = async.execute -> !async.value<tensor<4xf32>>
      attributes {stream.affinity = #hal.device.promise<@device_a>} {
    %square = arith.mulf %x, %x : tensor<4xf32>
    async.yield %square : tensor<4xf32>
  }
  %token_b, %b = async.execute -> !async.value<tensor<4xf32>>
      attributes {stream.affinity = #hal.device.promise<@device_b>} {
    %twice = arith.addf %y, %y : tensor<4xf32>
    async.yield %twice : tensor<4xf32>
  }
  %token_sum, %sum = async.execute
      (%a as %a_value: !async.value<tensor<4xf32>>, %b as %b_value: !async.value<tensor<4xf32>>)
      -> !async.value<tensor<4xf32>>
      attributes {stream.affinity = #hal.device.promise<@device_a>} {
    %joined = arith.addf %a_value, %b_value : tensor<4xf32>
    async.yield %joined : tensor<4xf32>
  }
  %result = async.await %sum : !async.value<tensor<4xf32>>
  return %result : tensor<4xf32>
}
