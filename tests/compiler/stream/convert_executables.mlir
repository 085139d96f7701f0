// Checks that flow executables are carried over as stream executables with the same contents.
// RUN: weir-opt --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream %s | filecheck %s

// CHECK: "stream.executable"() <{sym_name = "f_dispatch_0"}>
// CHECK: "stream.executable.export"() <{sym_name = "f_dispatch_0", function_ref = @f_dispatch_0}>
// CHECK: func.func @f_dispatch_0
// CHECK-NOT: flow.executable
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = math.exp %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
