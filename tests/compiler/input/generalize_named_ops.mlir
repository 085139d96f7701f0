// Checks that named linalg ops no kernel implements become linalg.generic (or transpose +
// matmul), and that the ones a kernel implements are kept.
// RUN: weir-opt --split-input-file --generalize-named-ops %s | filecheck %s

// matvec: a reduction generic whose body multiplies and accumulates.
// CHECK-LABEL: func.func @matvec
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a, %x : tensor<3x4xf32>, tensor<4xf32>) outs(%y : tensor<3xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.matvec
func.func @matvec(%a: tensor<3x4xf32>, %x: tensor<4xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = linalg.matvec ins(%a, %x : tensor<3x4xf32>, tensor<4xf32>) outs(%y : tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// vecmat: the vector indexes the reduction loop, the matrix (k, n).
// CHECK-LABEL: func.func @vecmat
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
func.func @vecmat(%x: tensor<4xf32>, %a: tensor<4x3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = linalg.vecmat ins(%x, %a : tensor<4xf32>, tensor<4x3xf32>) outs(%y : tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// dot with i8 inputs into i32: a full reduction whose body sign-extends the inputs first.
// CHECK-LABEL: func.func @dot
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.muli
// CHECK: arith.addi
func.func @dot(%a: tensor<8xi8>, %b: tensor<8xi8>, %o: tensor<i32>) -> tensor<i32> {
  %0 = linalg.dot ins(%a, %b : tensor<8xi8>, tensor<8xi8>) outs(%o : tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// matmul_transpose_b: the rhs is transposed into a fresh tensor, then a plain matmul.
// CHECK-LABEL: func.func @matmul_transpose_b
// CHECK: %[[E:.*]] = tensor.empty() : tensor<5x6xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%b:tensor<6x5xf32>) outs(%[[E]]:tensor<5x6xf32>) permutation = [1, 0]
// CHECK: linalg.matmul ins(%a, %[[T]] : tensor<4x5xf32>, tensor<5x6xf32>) outs(%o : tensor<4x6xf32>)
func.func @matmul_transpose_b(%a: tensor<4x5xf32>, %b: tensor<6x5xf32>, %o: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = linalg.matmul_transpose_b ins(%a, %b : tensor<4x5xf32>, tensor<6x5xf32>) outs(%o : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// batch_matmul_transpose_a with a dynamic batch: the transpose's init reads the size with tensor.dim.
// CHECK-LABEL: func.func @batch_matmul_transpose_a
// CHECK: %[[D:.*]] = tensor.dim %a, %{{.*}} : tensor<?x5x4xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?x4x5xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%a:tensor<?x5x4xf32>) outs(%[[E]]:tensor<?x4x5xf32>) permutation = [0, 2, 1]
// CHECK: linalg.batch_matmul ins(%[[T]], %b : tensor<?x4x5xf32>, tensor<?x5x3xf32>)
func.func @batch_matmul_transpose_a(%a: tensor<?x5x4xf32>, %b: tensor<?x5x3xf32>, %o: tensor<?x4x3xf32>) -> tensor<?x4x3xf32> {
  %0 = linalg.batch_matmul_transpose_a ins(%a, %b : tensor<?x5x4xf32>, tensor<?x5x3xf32>) outs(%o : tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
  return %0 : tensor<?x4x3xf32>
}

// -----

// matmul whose indexing_maps transpose the lhs: transpose + plain matmul.
// CHECK-LABEL: func.func @matmul_maps_transpose
// CHECK: linalg.transpose ins(%a:tensor<5x4xf32>)
// CHECK: linalg.matmul ins(
// CHECK-NOT: indexing_maps = [affine_map
func.func @matmul_maps_transpose(%a: tensor<5x4xf32>, %b: tensor<5x6xf32>, %o: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<5x4xf32>, tensor<5x6xf32>) outs(%o : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// matmul broadcasting its lhs: a generic contraction with the op's own maps.
// CHECK-LABEL: func.func @matmul_maps_broadcast
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
func.func @matmul_maps_broadcast(%a: tensor<5xf32>, %b: tensor<5x6xf32>, %o: tensor<3x6xf32>) -> tensor<3x6xf32> {
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<5xf32>, tensor<5x6xf32>) outs(%o : tensor<3x6xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// Kernel ops stay: plain matmul, batch_matmul, fill, conv and pooling in any supported layout.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.fill
// CHECK: linalg.matmul ins
// CHECK: linalg.batch_matmul ins
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK: linalg.pooling_nhwc_sum
// CHECK-NOT: linalg.generic
func.func @kept(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %ba: tensor<2x3x4xf32>, %bb: tensor<2x4x5xf32>, %x: tensor<1x6x6x2xf32>, %w: tensor<3x3x2xf32>) -> (tensor<3x5xf32>, tensor<2x3x5xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%acc : tensor<3x5xf32>) -> tensor<3x5xf32>
  %be = tensor.empty() : tensor<2x3x5xf32>
  %1 = linalg.batch_matmul ins(%ba, %bb : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%be : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %ce = tensor.empty() : tensor<1x4x4x2xf32>
  %2 = linalg.depthwise_conv_2d_nhwc_hwc ins(%x, %w : tensor<1x6x6x2xf32>, tensor<3x3x2xf32>) outs(%ce : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %3 = linalg.pooling_nhwc_sum ins(%x, %win : tensor<1x6x6x2xf32>, tensor<3x3xf32>) outs(%ce : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %0, %1, %2, %3 : tensor<3x5xf32>, tensor<2x3x5xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// Elementwise named ops: a parallel generic each, with the op's own body.
// CHECK-LABEL: func.func @elementwise
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.subf
// CHECK: linalg.generic
// CHECK: math.sqrt
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK-NOT: linalg.sub
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %0 = linalg.sub ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = linalg.sqrt ins(%0 : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = linalg.max ins(%1, %a : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// copy: an identity generic.
// CHECK-LABEL: func.func @copy
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xi32>) outs(%o : tensor<4xi32>)
// CHECK-NEXT: ^{{.*}}(%[[X:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: linalg.yield %[[X]] : i32
func.func @copy(%a: tensor<4xi32>, %o: tensor<4xi32>) -> tensor<4xi32> {
  %0 = linalg.copy ins(%a : tensor<4xi32>) outs(%o : tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// map, long and short form: the mapper gains an (unused) output argument.
// CHECK-LABEL: func.func @map
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%o : tensor<4xf32>)
// CHECK-NEXT: ^{{.*}}(%x: f32, %y: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %x, %y : f32
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK: math.absf
func.func @map(%a: tensor<4xf32>, %b: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.map ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%o : tensor<4xf32>)
    (%x: f32, %y: f32) {
      %m = arith.mulf %x, %y : f32
      linalg.yield %m : f32
    }
  %1 = linalg.map { math.absf } ins(%0 : tensor<4xf32>) outs(%o : tensor<4xf32>)
  return %1 : tensor<4xf32>
}

// -----

// softmax over dimension 1: max-reduce from -inf, sum-reduce of exp(x - max), then divide.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK: %[[M0:.*]] = linalg.fill ins(%[[NINF]] : f32)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a : tensor<2x5x3xf32>) outs(%[[M0]] : tensor<2x3xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%a, %[[MAX]] : tensor<2x5x3xf32>, tensor<2x3xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%a, %[[MAX]], %[[SUM]] : tensor<2x5x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) outs(%o : tensor<2x5x3xf32>)
// CHECK: arith.divf
func.func @softmax(%a: tensor<2x5x3xf32>, %o: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %0 = linalg.softmax dimension(1) ins(%a : tensor<2x5x3xf32>) outs(%o : tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}

// -----

// linalg.reduce in MLIR's short form stays a reduce (tests/compiler/ir/test_ir_upstream_forms.py
// checks the body it stands for).
// CHECK-LABEL: func.func @reduce_short_form
// CHECK: linalg.reduce { arith.maxsi } ins(%a : tensor<4x5xi32>) outs(%o : tensor<5xi32>) dimensions = [0]
func.func @reduce_short_form(%a: tensor<4x5xi32>, %o: tensor<5xi32>) -> tensor<5xi32> {
  %0 = linalg.reduce { arith.maxsi } ins(%a : tensor<4x5xi32>) outs(%o : tensor<5xi32>) dimensions = [0]
  return %0 : tensor<5xi32>
}

// -----

// quantized_matmul: a contraction of the operands less their zero points, each converted to
// the accumulator's type.
// CHECK-LABEL: func.func @quantized_matmul
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b, %za, %zb : tensor<3x4xi8>, tensor<4x5xi8>, i32, i32) outs(%c : tensor<3x5xi32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: i8, %[[B:.*]]: i8, %[[ZA:.*]]: i32, %[[ZB:.*]]: i32, %[[ACC:.*]]: i32):
// CHECK-NEXT: %[[WA:.*]] = arith.extsi %[[A]] : i8 to i32
// CHECK-NEXT: %[[DA:.*]] = arith.subi %[[WA]], %[[ZA]] : i32
// CHECK-NEXT: %[[WB:.*]] = arith.extsi %[[B]] : i8 to i32
// CHECK-NEXT: %[[DB:.*]] = arith.subi %[[WB]], %[[ZB]] : i32
// CHECK-NEXT: %[[P:.*]] = arith.muli %[[DA]], %[[DB]] : i32
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[ACC]], %[[P]] : i32
// CHECK-NEXT: linalg.yield %[[S]] : i32
// CHECK-NOT: linalg.quantized_matmul
func.func @quantized_matmul(%a: tensor<3x4xi8>, %b: tensor<4x5xi8>, %za: i32, %zb: i32,
                            %c: tensor<3x5xi32>) -> tensor<3x5xi32> {
  %0 = linalg.quantized_matmul ins(%a, %b, %za, %zb : tensor<3x4xi8>, tensor<4x5xi8>, i32, i32) outs(%c : tensor<3x5xi32>) -> tensor<3x5xi32>
  return %0 : tensor<3x5xi32>
}
