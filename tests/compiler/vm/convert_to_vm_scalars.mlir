// Host scalar math becomes typed vm.arith ops, constants take their canonical register form, and
// tensor.extract is a call of hal.buffer.load.
// RUN: weir-opt --split-input-file --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream --translate-executables --convert-stream-to-hal --convert-to-vm %s | filecheck %s

// Checks that each arith/math op on scalars is one vm.arith naming the op, its result type and
// its operands' type (select: the chosen values'; compares: with their predicate), and that
// constants are sign-extended from their width (255 : i8 is -1), i1 as a bool, floats rounded.
// CHECK-LABEL: "vm.func"() <{sym_name = "ops"
// CHECK: %[[C:.*]] = "vm.const"() <{value = -1 : i64}> : () -> i8
// CHECK: %[[T:.*]] = "vm.const"() <{value = true}> : () -> i1
// CHECK: %[[H:.*]] = "vm.const"() <{value = 0.0999755859375 : f64}> : () -> f16
// CHECK: "vm.arith"(%0, %[[C]]) <{op = "addi", dtype = "i8", arg_dtype = "i8"}> : (i8, i8) -> i8
// CHECK: "vm.arith"(%0, %1) <{op = "cmpi", dtype = "i1", arg_dtype = "i8", predicate = "ult"}>
// CHECK: "vm.arith"(%2, %[[H]]) <{op = "mulf", dtype = "f16", arg_dtype = "f16"}>
// CHECK: "vm.arith"(%0) <{op = "extsi", dtype = "i32", arg_dtype = "i8"}> : (i8) -> i32
// CHECK: "vm.arith"(%3) <{op = "exp", dtype = "bf16", arg_dtype = "bf16"}>
// CHECK: "vm.arith"(%2, %2) <{op = "cmpf", dtype = "i1", arg_dtype = "f16", predicate = "uno"}>
// CHECK: %[[Q:.*]] = "vm.arith"(%4, %[[T]]) <{op = "xori", dtype = "i1", arg_dtype = "i1"}>
// CHECK: "vm.arith"(%[[Q]], %0, %1) <{op = "select", dtype = "i8", arg_dtype = "i8"}> : (i1, i8, i8) -> i8
// CHECK: "vm.export"() <{function_ref = @ops, {{.*}} weir.abi.scalar_types = "i8,i8,f16,bf16,i1;i8,i1,f16,i32,bf16,i1,i8"}}>
func.func @ops(%a: i8, %b: i8, %h: f16, %g: bf16, %p: i1) -> (i8, i1, f16, i32, bf16, i1, i8) {
  %c = arith.constant 255 : i8
  %t = arith.constant true
  %h1 = arith.constant 0.1 : f16
  %0 = arith.addi %a, %c : i8
  %1 = arith.cmpi ult, %a, %b : i8
  %2 = arith.mulf %h, %h1 : f16
  %3 = arith.extsi %a : i8 to i32
  %4 = math.exp %g : bf16
  %5 = arith.cmpf uno, %h, %h : f16
  %q = arith.xori %p, %t : i1
  %6 = arith.select %q, %a, %b : i8
  return %0, %1, %2, %3, %4, %5, %6 : i8, i1, f16, i32, bf16, i1, i8
}

// -----

// Checks that an element read on the host calls hal.buffer.load with its byte offset and the
// element type's name.
// CHECK: "vm.import"() <{sym_name = "hal.buffer.load", cconv = "0rIr_r", model = "sync"}>
// CHECK-LABEL: "vm.func"() <{sym_name = "first"
// CHECK: "vm.call"(%{{.*}}) <{callee = @hal.fence.await}>
// CHECK: %[[DT:.*]] = "vm.const"() <{value = "f64"}> : () -> !vm.str
// CHECK: %[[X:.*]] = "vm.call"(%{{.*}}, %{{.*}}, %[[DT]]) <{callee = @hal.buffer.load}> : (!hal.buffer, index, !vm.str) -> f64
// CHECK: "vm.return"(%[[X]])
func.func @first(%t: tensor<8xf64>) -> f64 {
  %0 = arith.negf %t : tensor<8xf64>
  %c0 = arith.constant 0 : index
  %1 = tensor.extract %0[%c0] : tensor<8xf64>
  return %1 : f64
}
