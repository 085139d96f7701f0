// Checks that tensor.pad becomes an empty tensor filled with the padding value plus an insert of
// the source at the low padding, and tensor.concat an empty tensor plus one insert per input at
// running offsets; dynamic sizes and offsets are computed on the host.
// RUN: weir-opt --split-input-file --decompose-pad-and-concat %s | filecheck %s

// A static pad: fill with the yielded constant, insert at the low padding.
// CHECK-LABEL: func.func @pad_static
// CHECK-NEXT: %[[C:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<6x5xf32>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[C]] : f32) outs(%[[E]] : tensor<6x5xf32>)
// CHECK-NEXT: %[[I:.*]] = tensor.insert_slice %x into %[[F]][1, 0] [3, 4] [1, 1] : tensor<3x4xf32> into tensor<6x5xf32>
// CHECK-NEXT: func.return %[[I]]
func.func @pad_static(%x: tensor<3x4xf32>) -> tensor<6x5xf32> {
  %c = arith.constant 1.5 : f32
  %0 = tensor.pad %x low[1, 0] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %c : f32
  } : tensor<3x4xf32> to tensor<6x5xf32>
  return %0 : tensor<6x5xf32>
}

// -----

// A dynamic low padding of a dynamic source: the constant in the body is hoisted, the result
// size is low + dim + high on the host, the insert's offset is the low padding itself.
// CHECK-LABEL: func.func @pad_dynamic
// CHECK-NEXT: %[[C:.*]] = arith.constant 7 : i32
// CHECK: %[[D:.*]] = tensor.dim %x
// CHECK-NEXT: %[[S1:.*]] = arith.addi %lo, %[[D]] : index
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[S2:.*]] = arith.addi %[[S1]], %[[TWO]] : index
// CHECK-NEXT: %[[E:.*]] = tensor.empty(%[[S2]]) : tensor<?x4xi32>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[C]] : i32) outs(%[[E]] : tensor<?x4xi32>)
// CHECK-NEXT: tensor.insert_slice %x into %[[F]][%lo, 0] [%[[D]], 4] [1, 1]
// CHECK-NOT: tensor.pad
func.func @pad_dynamic(%x: tensor<?x4xi32>, %lo: index) -> tensor<?x4xi32> {
  %0 = tensor.pad %x low[%lo, 0] high[2, 0] {
  ^bb0(%i: index, %j: index):
    %c = arith.constant 7 : i32
    tensor.yield %c : i32
  } : tensor<?x4xi32> to tensor<?x4xi32>
  return %0 : tensor<?x4xi32>
}

// -----

// A concat of three along a middle dimension, one of them dynamic: the running offset (3 + dim)
// is both the third insert's offset and, plus 5, the result's size.
// CHECK-LABEL: func.func @concat
// CHECK: %[[D:.*]] = tensor.dim %b
// CHECK-NEXT: %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[O:.*]] = arith.addi %[[THREE]], %[[D]] : index
// CHECK-NEXT: %[[FIVE:.*]] = arith.constant 5 : index
// CHECK-NEXT: %[[N:.*]] = arith.addi %[[O]], %[[FIVE]] : index
// CHECK-NEXT: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<2x?x4xf32>
// CHECK-NEXT: %[[I0:.*]] = tensor.insert_slice %a into %[[E]][0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK-NEXT: %[[I1:.*]] = tensor.insert_slice %b into %[[I0]][0, 3, 0] [2, %[[D]], 4] [1, 1, 1]
// CHECK-NEXT: %[[I2:.*]] = tensor.insert_slice %c into %[[I1]][0, %[[O]], 0] [2, 5, 4] [1, 1, 1]
// CHECK-NEXT: func.return %[[I2]]
func.func @concat(%a: tensor<2x3x4xf32>, %b: tensor<2x?x4xf32>, %c: tensor<2x5x4xf32>) -> tensor<2x?x4xf32> {
  %0 = tensor.concat dim(1) %a, %b, %c : (tensor<2x3x4xf32>, tensor<2x?x4xf32>, tensor<2x5x4xf32>) -> tensor<2x?x4xf32>
  return %0 : tensor<2x?x4xf32>
}
