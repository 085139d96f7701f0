// A diamond over three devices: device_a doubles x, device_b and device_c each work on a copy
// of that (b: +1, c: squared), and device_a joins them: (2x)^2 - (2x + 1).
//   weir-compile diamond.mlir --iree-execution-model=async-external \
//     --iree-hal-target-device=device_a=local[0] --iree-hal-target-device=device_b=local[1] \
//     --iree-hal-target-device=device_c=local[2] --iree-hal-local-target-device-backends=vmvx \
//     -o diamond.wvm
//   weir-run-module --module=diamond.wvm --function=diamond --input=4xf32=1,2,3,4 \
//     --device=local-task --device=local-task --device=local-task
// prints 4xf32=1 11 29 55.
func.func public @diamond(
  %x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
) -> (
  tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>}
) {
  // a: 2x, sent to b and to c.
  %two = arith.constant dense<2.0> : tensor<4xf32>
  %a = arith.mulf %x, %two : tensor<4xf32>
  %a_on_b = flow.tensor.transfer %a : tensor<4xf32> to #hal.device.promise<@device_b>
  %a_on_c = flow.tensor.transfer %a : tensor<4xf32> to #hal.device.promise<@device_c>
  // b: 2x + 1.
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %b = arith.addf %a_on_b, %one : tensor<4xf32>
  // c: (2x)^2.
  %c = arith.mulf %a_on_c, %a_on_c : tensor<4xf32>
  // a again: both results come back and are joined.
  %b_on_a = flow.tensor.transfer %b : tensor<4xf32> to #hal.device.promise<@device_a>
  %c_on_a = flow.tensor.transfer %c : tensor<4xf32> to #hal.device.promise<@device_a>
  %r = arith.subf %c_on_a, %b_on_a : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
