// Checks how dispatch formation groups the data-movement ops: slices fuse into the math that
// reads them, a slice alone is a root sized by its dynamic size, a chain of inserts used only by
// each other is one region, and reshapes stay on the host between regions.
// RUN: weir-opt --split-input-file --convert-elementwise-to-linalg --form-dispatch-regions %s | filecheck %s

// Two windows of one input, one at a dynamic offset, feed a subtraction: one region.
// CHECK-LABEL: func.func @slice_into_math
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK-NEXT: tensor.extract_slice %x[1] [32] [1]
// CHECK-NEXT: tensor.extract_slice %x[%o] [32] [1]
// CHECK: linalg.generic
// CHECK: "flow.return"
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @slice_into_math(%x: tensor<33xf32>, %o: index) -> tensor<32xf32> {
  %a = tensor.extract_slice %x[1] [32] [1] : tensor<33xf32> to tensor<32xf32>
  %b = tensor.extract_slice %x[%o] [32] [1] : tensor<33xf32> to tensor<32xf32>
  %d = arith.subf %a, %b : tensor<32xf32>
  return %d : tensor<32xf32>
}

// -----

// A slice nobody fuses is a region of its own; its dynamic size is the region's result dim.
// CHECK-LABEL: func.func @slice_alone
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"(%n) ({
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %x[0, 0] [%n, 8] [1, 1]
// CHECK-NEXT: "flow.return"(%[[S]])
// CHECK-NEXT: }) : (index) -> tensor<?x8xi32>
func.func @slice_alone(%x: tensor<8x8xi32>, %n: index) -> tensor<?x8xi32> {
  %0 = tensor.extract_slice %x[0, 0] [%n, 8] [1, 1] : tensor<8x8xi32> to tensor<?x8xi32>
  return %0 : tensor<?x8xi32>
}

// -----

// Two inserts filling one empty tensor: one region with the empty tensor inside.
// CHECK-LABEL: func.func @insert_chain
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[I0:.*]] = tensor.insert_slice %a into %[[E]][0] [4] [1]
// CHECK-NEXT: %[[I1:.*]] = tensor.insert_slice %b into %[[I0]][4] [4] [1]
// CHECK-NEXT: "flow.return"(%[[I1]])
// CHECK-NOT: "flow.dispatch.region"
func.func @insert_chain(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = tensor.insert_slice %a into %e[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %1 = tensor.insert_slice %b into %0[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// The first insert is also returned, so it is not written over in place: two regions.
// CHECK-LABEL: func.func @insert_used_twice
// CHECK-NEXT: %[[R0:.*]] = "flow.dispatch.region"() ({
// CHECK: tensor.insert_slice %a
// CHECK: %[[R1:.*]] = "flow.dispatch.region"() ({
// CHECK-NEXT: tensor.insert_slice %b into %[[R0]][4] [4] [1]
// CHECK: func.return %[[R0]], %[[R1]]
func.func @insert_used_twice(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %0 = tensor.insert_slice %a into %e[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %1 = tensor.insert_slice %b into %0[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Static reshapes fuse like slices: the elementwise ops around them are one region.
// CHECK-LABEL: func.func @reshape_between
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[C:.*]] = tensor.collapse_shape %x
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<24xf32>)
// CHECK: %[[X:.*]] = tensor.expand_shape %[[A]]
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<2x12xf32>)
// CHECK: "flow.return"
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @reshape_between(%x: tensor<4x6xf32>) -> tensor<2x12xf32> {
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %1 = math.absf %0 : tensor<24xf32>
  %2 = tensor.expand_shape %1 [[0, 1]] output_shape [2, 12] : tensor<24xf32> into tensor<2x12xf32>
  %3 = math.exp %2 : tensor<2x12xf32>
  return %3 : tensor<2x12xf32>
}

// -----

// A fill and an insert into it (a decomposed pad) with dynamic sizes: one region, sized by the
// destination's size.
// CHECK-LABEL: func.func @fill_and_insert
// CHECK: "flow.dispatch.region"(%n) ({
// CHECK: %[[F:.*]] = linalg.fill
// CHECK-NEXT: tensor.insert_slice %x into %[[F]][%lo] [%{{.*}}] [1]
// CHECK-NEXT: "flow.return"
func.func @fill_and_insert(%x: tensor<?xf32>, %n: index, %lo: index) -> tensor<?xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %0 = tensor.insert_slice %x into %f[%lo] [%d] [1] : tensor<?xf32> into tensor<?xf32>
  return %0 : tensor<?xf32>
}
