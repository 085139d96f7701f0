// Checks that each executable gets one serialised binary per target backend.
// RUN: weir-opt --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --translate-executables %s | filecheck %s

// CHECK: "hal.executable"() <{sym_name = "f_dispatch_0"}>
// CHECK-NEXT: "hal.executable.binary"() <{sym_name = "reference", target = "reference", format = "reference", entry_points = ["f_dispatch_0"], data = "f_dispatch_0_reference"}>
// CHECK-NOT: stream.executable
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = math.exp %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
