// Checks that module.function declarations become buffer-view imports and their calls are
// wrapped in tensor export/import, keeping the declaration's attributes.
// RUN: weir-opt --wrap-imports %s | filecheck %s

// CHECK: func.func private @module_a.abs(!hal.buffer_view) -> !hal.buffer_view
func.func private @module_a.abs(tensor<8xf32>) -> tensor<8xf32>

// CHECK-LABEL: func.func @run
func.func @run(%x: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK: %[[V:.*]] = "hal.tensor.export"(%{{.*}}) <{name = "module_a.abs:arg0"
  // CHECK: %[[R:.*]] = func.call @module_a.abs(%[[V]]) : (!hal.buffer_view) -> !hal.buffer_view
  // CHECK: "hal.tensor.import"(%[[R]]) <{name = "module_a.abs:result"}>
  %0 = call @module_a.abs(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
