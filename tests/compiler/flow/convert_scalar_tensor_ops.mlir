// Tensors built from scalars become linalg, so they run (and fuse) in dispatches; the scalars
// stay host values the dispatch captures.
// RUN: weir-opt --split-input-file --convert-scalar-tensor-ops %s | filecheck %s

// Checks that tensor.splat is a fill of an empty tensor with the same dynamic sizes.
// CHECK-LABEL: func.func @splat
// CHECK: %[[E:.*]] = tensor.empty(%n) : tensor<?x4xf32>
// CHECK: linalg.fill ins(%s : f32) outs(%[[E]] : tensor<?x4xf32>)
// CHECK-NOT: tensor.splat
func.func @splat(%s: f32, %n: index) -> tensor<?x4xf32> {
  %0 = tensor.splat %s[%n] : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Checks that tensor.from_elements yields element k where the row-major position is k.
// CHECK-LABEL: func.func @from_elements
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[S:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK: %[[P:.*]] = arith.addi %[[S]], %[[J]] : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[M2:.*]] = arith.cmpi eq, %[[P]], %[[C2]] : index
// CHECK: %[[V2:.*]] = arith.select %[[M2]], %c, %d : i32
// CHECK: arith.select %{{.*}}, %b, %[[V2]] : i32
// CHECK: %[[V0:.*]] = arith.select %{{.*}}, %a, %{{.*}} : i32
// CHECK: linalg.yield %[[V0]] : i32
// CHECK-NOT: tensor.from_elements
func.func @from_elements(%a: i32, %b: i32, %d: i32) -> tensor<2x2xi32> {
  %c = arith.constant 5 : i32
  %0 = tensor.from_elements %a, %b, %c, %d : tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

// Checks that tensor.insert copies the destination except where every index matches.
// CHECK-LABEL: func.func @insert
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf16>
// CHECK: linalg.generic {{.*}} ins(%t : tensor<?x?xf16>) outs(%[[E]] : tensor<?x?xf16>)
// CHECK: ^bb0(%[[OLD:.*]]: f16, %{{.*}}: f16):
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[E0:.*]] = arith.cmpi eq, %[[D0]], %i : index
// CHECK: %[[D1:.*]] = linalg.index 1 : index
// CHECK: %[[E1:.*]] = arith.cmpi eq, %[[D1]], %j : index
// CHECK: %[[BOTH:.*]] = arith.andi %[[E0]], %[[E1]] : i1
// CHECK: %[[NEW:.*]] = arith.select %[[BOTH]], %v, %[[OLD]] : f16
// CHECK: linalg.yield %[[NEW]] : f16
func.func @insert(%t: tensor<?x?xf16>, %v: f16, %i: index, %j: index) -> tensor<?x?xf16> {
  %0 = tensor.insert %v into %t[%i, %j] : tensor<?x?xf16>
  return %0 : tensor<?x?xf16>
}

// -----

// Checks that inserting into a 0-d tensor replaces its one element.
// CHECK-LABEL: func.func @insert_0d
// CHECK: %[[T:.*]] = arith.constant true
// CHECK: arith.select %[[T]], %v, %{{.*}} : i8
func.func @insert_0d(%t: tensor<i8>, %v: i8) -> tensor<i8> {
  %0 = tensor.insert %v into %t[] : tensor<i8>
  return %0 : tensor<i8>
}
