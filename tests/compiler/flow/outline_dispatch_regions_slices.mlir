// Checks that a slice's dynamic offset and size become dispatch arguments (the future push
// constants) of the outlined function, the size also naming the result's dynamic dim in
// weir.binding_dims, while a constant stride is cloned into the executable.
// RUN: weir-opt --convert-elementwise-to-linalg --form-dispatch-regions --outline-dispatch-regions %s | filecheck %s

// CHECK: func.func @offsets_dispatch_0(%[[X:[0-9]+]]: tensor<8x9xf32>, %[[I:[0-9]+]]: index, %[[N:[0-9]+]]: index) -> tensor<2x?xf32> attributes {weir.binding_dims = {{\[}}[], [1 : index]]}
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %[[X]][%[[I]], 1] [2, %[[N]]] [%[[C1]], 2]
// CHECK-NEXT: func.return %[[S]]
// CHECK-LABEL: func.func @offsets(
// CHECK-NEXT: "flow.dispatch"(%x, %i, %n, %n)
func.func @offsets(%x: tensor<8x9xf32>, %i: index, %n: index) -> tensor<2x?xf32> {
  %c1 = arith.constant 1 : index
  %0 = tensor.extract_slice %x[%i, 1] [2, %n] [%c1, 2] : tensor<8x9xf32> to tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}
