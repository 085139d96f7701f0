// Checks that arith comparisons, casts and select parse and print on tensors as MLIR writes them
// (xDSL takes only scalars for these), and that each becomes a linalg.generic on scalars.
// RUN: weir-opt --split-input-file %s | filecheck %s
// RUN: weir-opt --split-input-file --convert-elementwise-to-linalg %s | filecheck %s --check-prefix=FLOW

// A float comparison on tensors gives a tensor of i1 of the operands' shape.
// CHECK-LABEL: func.func @cmpf
// CHECK: %[[C:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : tensor<2x3xf32>
// CHECK: return %[[C]] : tensor<2x3xi1>
// FLOW-LABEL: func.func @cmpf
// FLOW: linalg.generic
// FLOW: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
func.func @cmpf(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xi1> {
  %0 = arith.cmpf olt, %a, %b : tensor<2x3xf32>
  return %0 : tensor<2x3xi1>
}

// -----

// An integer comparison and a select with a tensor condition, spelled with both types.
// CHECK-LABEL: func.func @clamp_low
// CHECK: %[[C:.*]] = arith.cmpi slt, %{{.*}}, %{{.*}} : tensor<4xi32>
// CHECK: arith.select %[[C]], %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xi32>
func.func @clamp_low(%a: tensor<4xi32>, %lo: tensor<4xi32>) -> tensor<4xi32> {
  %c = arith.cmpi slt, %a, %lo : tensor<4xi32>
  %0 = arith.select %c, %lo, %a : tensor<4xi1>, tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Integer and float casts on tensors keep the shape and change the element type.
// CHECK-LABEL: func.func @casts
// CHECK: arith.extsi %{{.*}} : tensor<4xi8> to tensor<4xi32>
// CHECK: arith.sitofp %{{.*}} : tensor<4xi32> to tensor<4xf32>
// CHECK: arith.fptoui %{{.*}} : tensor<4xf32> to tensor<4xi16>
// CHECK: arith.trunci %{{.*}} : tensor<4xi16> to tensor<4xi8>
// FLOW-LABEL: func.func @casts
// FLOW: arith.extsi %{{.*}} : i8 to i32
// FLOW: arith.trunci %{{.*}} : i16 to i8
func.func @casts(%a: tensor<4xi8>) -> tensor<4xi8> {
  %0 = arith.extsi %a : tensor<4xi8> to tensor<4xi32>
  %1 = arith.sitofp %0 : tensor<4xi32> to tensor<4xf32>
  %2 = arith.fptoui %1 : tensor<4xf32> to tensor<4xi16>
  %3 = arith.trunci %2 : tensor<4xi16> to tensor<4xi8>
  return %3 : tensor<4xi8>
}

// -----

// arith.remf, which xDSL lacks, parses on scalars and tensors.
// CHECK-LABEL: func.func @remf
// CHECK: arith.remf %{{.*}}, %{{.*}} : tensor<3xf64>
func.func @remf(%a: tensor<3xf64>) -> tensor<3xf64> {
  %0 = arith.remf %a, %a : tensor<3xf64>
  return %0 : tensor<3xf64>
}
