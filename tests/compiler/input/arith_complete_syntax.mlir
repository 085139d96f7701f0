// Checks that the arith ops and flags xDSL does not know parse and print as MLIR writes them:
// index_castui, scaling_extf/scaling_truncf and addui_extended on index (each on scalars and
// tensors), `exact` on divisions and right shifts, overflow flags on trunci, fastmath on
// extf/truncf and truncf's rounding mode; and that the printed form parses again unchanged.
// RUN: weir-opt --split-input-file %s | filecheck %s
// RUN: weir-opt --split-input-file %s | weir-opt --split-input-file - | filecheck %s

// CHECK-LABEL: func.func @new_ops
// CHECK-SAME: (%[[I:[^:]*]]: i32, %[[T:[^:]*]]: tensor<4xi32>, %[[H:[^:]*]]: f16, %[[S:[^:]*]]: f32, %[[X:[^:]*]]: index, %[[HT:[^:]*]]: tensor<4xf16>, %[[ST:[^:]*]]: tensor<4xf32>)
// CHECK: arith.index_castui %[[I]] : i32 to index
// CHECK: arith.index_castui %[[T]] : tensor<4xi32> to tensor<4xindex>
// CHECK: arith.scaling_extf %[[H]], %[[S]] : f16, f32 to f64
// CHECK: arith.scaling_extf %[[HT]], %[[ST]] fastmath<fast> : tensor<4xf16>, tensor<4xf32> to tensor<4xf32>
// CHECK: arith.scaling_truncf %[[S]], %[[H]] : f32, f16 to bf16
// CHECK: arith.scaling_truncf %[[ST]], %[[ST]] to_nearest_even fastmath<nnan> : tensor<4xf32>, tensor<4xf32> to tensor<4xf16>
// CHECK: %[[SUM:.*]], %[[CARRY:.*]] = arith.addui_extended %[[X]], %[[X]] : index, i1
func.func @new_ops(%i: i32, %t: tensor<4xi32>, %h: f16, %s: f32, %x: index, %ht: tensor<4xf16>,
                   %st: tensor<4xf32>) -> index {
  %0 = arith.index_castui %i : i32 to index
  %1 = arith.index_castui %t : tensor<4xi32> to tensor<4xindex>
  %2 = arith.scaling_extf %h, %s : f16, f32 to f64
  %3 = arith.scaling_extf %ht, %st fastmath<fast> : tensor<4xf16>, tensor<4xf32> to tensor<4xf32>
  %4 = arith.scaling_truncf %s, %h : f32, f16 to bf16
  %5 = arith.scaling_truncf %st, %st to_nearest_even fastmath<nnan> : tensor<4xf32>, tensor<4xf32> to tensor<4xf16>
  %sum, %carry = arith.addui_extended %x, %x : index, i1
  return %0 : index
}

// -----

// CHECK-LABEL: func.func @flags
// CHECK: arith.divsi %{{.*}}, %{{.*}} exact : i32
// CHECK: arith.divui %{{.*}}, %{{.*}} exact : tensor<4xi32>
// CHECK: arith.shrsi %{{.*}}, %{{.*}} exact : i32
// CHECK: arith.shrui %{{.*}}, %{{.*}} : i32
// CHECK: arith.trunci %{{.*}} overflow<nsw,nuw> : i32 to i8
// CHECK: arith.trunci %{{.*}} : tensor<4xi32> to tensor<4xi16>
// CHECK: arith.extf %{{.*}} fastmath<fast> : f16 to f32
// CHECK: arith.truncf %{{.*}} downward : f32 to f16
// CHECK: arith.truncf %{{.*}} to_nearest_away fastmath<contract> : tensor<4xf32> to tensor<4xbf16>
func.func @flags(%a: i32, %t: tensor<4xi32>, %h: f16, %f: f32, %ft: tensor<4xf32>) -> i32 {
  %0 = arith.divsi %a, %a exact : i32
  %1 = arith.divui %t, %t exact : tensor<4xi32>
  %2 = arith.shrsi %a, %a exact : i32
  %3 = arith.shrui %a, %a : i32
  %4 = arith.trunci %a overflow<nsw, nuw> : i32 to i8
  %5 = arith.trunci %t : tensor<4xi32> to tensor<4xi16>
  %6 = arith.extf %h fastmath<fast> : f16 to f32
  %7 = arith.truncf %f downward : f32 to f16
  %8 = arith.truncf %ft to_nearest_away fastmath<contract> : tensor<4xf32> to tensor<4xbf16>
  return %0 : i32
}

// -----

// The predicate of cmpi as a string, as older MLIR prints it (IREE's subbyte tests write it).
// CHECK-LABEL: func.func @quoted_predicate
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : i8
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : tensor<4xi8>
func.func @quoted_predicate(%a: i8, %t: tensor<4xi8>) -> (i1, tensor<4xi1>) {
  %0 = arith.cmpi "sgt", %a, %a : i8
  %1 = arith.cmpi "ult", %t, %t : tensor<4xi8>
  return %0, %1 : i1, tensor<4xi1>
}
