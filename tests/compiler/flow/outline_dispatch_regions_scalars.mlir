// Host scalars of any type that a dispatch region uses become arguments of the outlined function
// (future push constants) and operands of the flow.dispatch, after the tensors.
// RUN: weir-opt --split-input-file --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions %s | filecheck %s

// Checks that an f32 used in a generic body and an i8 filled into a tensor are captured with
// their own types.
// CHECK: func.func @scale_dispatch_0(%{{[0-9]+}}: tensor<4xf32>, %[[S:[0-9]+]]: f32) -> tensor<4xf32>
// CHECK: arith.mulf %{{.*}}, %[[S]] : f32
// CHECK: func.func @scale_dispatch_1(%[[K:[0-9]+]]: i8) -> tensor<4xi8>
// CHECK: linalg.fill ins(%[[K]] : i8)
// CHECK-LABEL: func.func @scale(
// CHECK: "flow.dispatch"(%x, %s) <{entry_point = @scale_dispatch_0::@scale_dispatch_0{{.*}} : (tensor<4xf32>, f32) -> tensor<4xf32>
// CHECK: "flow.dispatch"(%k) <{entry_point = @scale_dispatch_1::@scale_dispatch_1{{.*}} : (i8) -> tensor<4xi8>
func.func @scale(%x: tensor<4xf32>, %s: f32, %k: i8) -> (tensor<4xf32>, tensor<4xi8>) {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.mulf %v, %s : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi8>
  %1 = linalg.fill ins(%k : i8) outs(%ei : tensor<4xi8>) -> tensor<4xi8>
  return %0, %1 : tensor<4xf32>, tensor<4xi8>
}

// -----

// Checks that scalars and dynamic dims share the push constants, in the order the region uses
// them; weir.binding_dims records which of them are the dims of the argument and the result.
// CHECK: func.func @dyn_dispatch_0(%{{[0-9]+}}: tensor<?xbf16>, %{{[0-9]+}}: index, %[[B:[0-9]+]]: bf16, %{{[0-9]+}}: index) -> tensor<?xbf16> attributes {weir.binding_dims = {{\[\[}}2 : index], [0 : index]]}
// CHECK: arith.addf %{{.*}}, %[[B]] : bf16
// CHECK-LABEL: func.func @dyn(
// CHECK: "flow.dispatch"(%x, %n, %b, %{{.*}}, %n) {{.*}} : (tensor<?xbf16>, index, bf16, index, index) -> tensor<?xbf16>
func.func @dyn(%x: tensor<?xbf16>, %b: bf16) -> tensor<?xbf16> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xbf16>
  %e = tensor.empty(%n) : tensor<?xbf16>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<?xbf16>) outs(%e : tensor<?xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %y = arith.addf %v, %b : bf16
    linalg.yield %y : bf16
  } -> tensor<?xbf16>
  return %0 : tensor<?xbf16>
}
