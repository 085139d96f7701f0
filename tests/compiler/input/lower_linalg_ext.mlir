// Checks that --lower-linalg-ext writes topk as a stable sort of the outputs' values then the
// input's (positions as indices when none are given) sliced to k (topk_v2: equal values ordered
// by index in the sort, then, when is_sorted, moved within their runs as IREE's bubble sort
// leaves them: run starts, run bounds, a gather), arg_compare as a reduction
// generic keeping (value, index) with selects on the region's verdict, and attention as linalg
// (scores, softmax reductions, product with V), affine index ops as arith, the Winograd transforms
// as two contractions with their matrices, and leaves sort to its kernel.
// RUN: weir-opt --split-input-file --lower-linalg-ext %s | filecheck %s

// CHECK-LABEL: func.func @topk(
// CHECK: %[[IOTA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<10xi32>)
// CHECK: linalg.index 0
// CHECK: %[[V:.*]] = tensor.concat dim(0) %v, %x : (tensor<3xf32>, tensor<10xf32>) -> tensor<13xf32>
// CHECK-NEXT: %[[I:.*]] = tensor.concat dim(0) %i, %[[IOTA]] : (tensor<3xi32>, tensor<10xi32>) -> tensor<13xi32>
// CHECK-NEXT: %[[SV:.*]], %[[SI:.*]] = iree_linalg_ext.sort dimension(0) outs(%[[V]], %[[I]] : tensor<13xf32>, tensor<13xi32>) {
// CHECK-NEXT: ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[B]] : f32
// CHECK-NEXT: iree_linalg_ext.yield %[[GT]] : i1
// CHECK: tensor.extract_slice %[[SV]][0] [3] [1] : tensor<13xf32> to tensor<3xf32>
// CHECK-NEXT: tensor.extract_slice %[[SI]][0] [3] [1] : tensor<13xi32> to tensor<3xi32>
// CHECK-NOT: iree_linalg_ext.topk
func.func @topk(%x: tensor<10xf32>, %v: tensor<3xf32>, %i: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0:2 = iree_linalg_ext.topk dimension(0) ins(%x : tensor<10xf32>) outs(%v, %i : tensor<3xf32>, tensor<3xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<3xf32>, tensor<3xi32>
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @topk_v2(
// CHECK: %[[SV:.*]], %[[SI:.*]] = iree_linalg_ext.sort dimension(1) outs(%{{.*}}, %{{.*}} : tensor<2x13xf32>, tensor<2x13xi32>) {
// CHECK-NEXT: ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[IA:.*]]: i32, %[[IB:.*]]: i32):
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[LT:.*]] = arith.cmpf ogt, %[[B]], %[[A]] : f32
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[EARLIER:.*]] = arith.cmpi slt, %[[IA]], %[[IB]] : i32
// CHECK-NEXT: %[[NOTLT:.*]] = arith.xori %[[LT]], %[[TRUE]] : i1
// CHECK-NEXT: %[[TIED:.*]] = arith.andi %[[NOTLT]], %[[EARLIER]] : i1
// CHECK-NEXT: %[[BETTER:.*]] = arith.ori %[[GT]], %[[TIED]] : i1
// CHECK-NEXT: iree_linalg_ext.yield %[[BETTER]] : i1
// CHECK: %[[KV:.*]] = tensor.extract_slice %[[SV]][0, 0] [2, 3] [1, 1]
// CHECK: %[[KI:.*]] = tensor.extract_slice %[[SI]][0, 0] [2, 3] [1, 1]
// CHECK: %[[STARTS:.*]] = linalg.generic {{.*}} ins(%[[KV]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xi1>)
// CHECK: tensor.extract %[[KV]]
// CHECK: %[[S:.*]], %[[E:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[STARTS]] : tensor<2x3xi1>)
// CHECK: %[[OV:.*]], %[[OI:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[E]], %{{.*}} : tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>)
// CHECK: arith.remsi
// CHECK: tensor.extract %[[KV]]
// CHECK-NEXT: tensor.extract %[[KI]]
// CHECK: return %[[OV]], %[[OI]]
func.func @topk_v2(%x: tensor<2x10xf32>, %v: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
  %0:2 = iree_linalg_ext.topk_v2 dimension(1) is_sorted ins(%x : tensor<2x10xf32>) outs(%v, %i : tensor<2x3xf32>, tensor<2x3xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<2x3xf32>, tensor<2x3xi32>
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @topk_v2_unsorted_values_only(
// CHECK: iree_linalg_ext.sort dimension(0)
// CHECK-NEXT: ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[B]] : f32
// CHECK-NEXT: iree_linalg_ext.yield %[[GT]] : i1
// CHECK: %[[KV:.*]] = tensor.extract_slice %{{.*}}[0] [3] [1]
// CHECK-NOT: linalg.generic
// CHECK: return %[[KV]]
func.func @topk_v2_unsorted_values_only(%x: tensor<10xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  %0 = iree_linalg_ext.topk_v2 dimension(0) ins(%x : tensor<10xf32>) outs(%v : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @arg_compare(
// CHECK-NEXT: %{{.*}}, %{{.*}} = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x5xf32>) outs(%bv, %bi : tensor<2xf32>, tensor<2xi32>) {
// CHECK-NEXT: ^{{.*}}(%[[X:.*]]: f32, %[[BEST:.*]]: f32, %[[BI:.*]]: i32):
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[X]], %[[BEST]] : f32
// CHECK-NEXT: %[[POS:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[POS]], %base : index
// CHECK-NEXT: %[[CAST:.*]] = arith.index_cast %[[SUM]] : index to i32
// CHECK-NEXT: %[[NV:.*]] = arith.select %[[GT]], %[[X]], %[[BEST]] : f32
// CHECK-NEXT: %[[NI:.*]] = arith.select %[[GT]], %[[CAST]], %[[BI]] : i32
// CHECK-NEXT: linalg.yield %[[NV]], %[[NI]] : f32, i32
func.func @arg_compare(%x: tensor<2x5xf32>, %bv: tensor<2xf32>, %bi: tensor<2xi32>, %base: index) -> (tensor<2xf32>, tensor<2xi32>) {
  %1:2 = iree_linalg_ext.arg_compare dimension(1) ins(%x : tensor<2x5xf32>) outs(%bv, %bi : tensor<2xf32>, tensor<2xi32>) index_base(%base : index) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<2xf32>, tensor<2xi32>
  return %1#0, %1#1 : tensor<2xf32>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @attention(
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x3x4xf32>, tensor<1x5x4xf32>)
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %v : tensor<1x3x5xf32>, tensor<1x5x2xf32>) outs(%{{.*}} : tensor<1x3x2xf32>)
// CHECK-NOT: iree_linalg_ext.attention
func.func @attention(%q: tensor<1x3x4xf32>, %k: tensor<1x5x4xf32>, %v: tensor<1x5x2xf32>, %scale: f32, %o: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  %0 = iree_linalg_ext.attention {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>,
                     affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2)>,
                     affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>,
                     affine_map<(d0, d1, d2, d3, d4) -> ()>,
                     affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>]}
      ins(%q, %k, %v, %scale : tensor<1x3x4xf32>, tensor<1x5x4xf32>, tensor<1x5x2xf32>, f32) outs(%o : tensor<1x3x2xf32>) {
  ^bb0(%s: f32):
    iree_linalg_ext.yield %s : f32
  } -> tensor<1x3x2xf32>
  return %0 : tensor<1x3x2xf32>
}

// -----

// CHECK-LABEL: func.func @sort_stays(
// CHECK-NEXT: iree_linalg_ext.sort dimension(0)
func.func @sort_stays(%v: tensor<5xf32>) -> tensor<5xf32> {
  %0 = iree_linalg_ext.sort dimension(0) outs(%v : tensor<5xf32>) {
  ^bb0(%a: f32, %b: f32):
    %lt = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %lt : i1
  } -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// affine.linearize_index and delinearize_index become index arithmetic.
// CHECK-LABEL: func.func @affine_index(
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[M:.*]] = arith.muli %i, %[[C4]] : index
// CHECK-NEXT: %[[L:.*]] = arith.addi %[[M]], %j : index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[R:.*]] = arith.remui %[[L]], %[[C3]] : index
// CHECK-NEXT: %[[Q:.*]] = arith.divui %[[L]], %[[C3]] : index
// CHECK-NEXT: func.return %[[Q]], %[[R]] : index, index
func.func @affine_index(%i: index, %j: index) -> (index, index) {
  %l = affine.linearize_index disjoint [%i, %j] by (3, 4) : index
  %d:2 = affine.delinearize_index %l into (4, 3) : index, index
  return %d#0, %d#1 : index, index
}

// -----

// A Winograd input transform: the image zero-padded to (tiles + 1) blocks of 6 per image
// dimension, each dimension's overlapping 8-row tiles cut out of its blocks (block t and the
// first 2 rows of block t + 1), then B^T . tile (over the tile's rows) and . B (its columns).
// CHECK-LABEL: func.func @winograd_input(
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x18x18x2xf32>)
// CHECK-NEXT: %[[P:.*]] = tensor.insert_slice %x into %[[Z]][0, 0, 0, 0] [1, 14, 10, 2] [1, 1, 1, 1]
// CHECK-NEXT: %[[E:.*]] = tensor.expand_shape %[[P]] {{.*}} : tensor<1x18x18x2xf32> into tensor<1x3x6x18x2xf32>
// CHECK-NEXT: %[[S0:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 0, 0] [1, 2, 6, 18, 2]
// CHECK-NEXT: %[[S1:.*]] = tensor.extract_slice %[[E]][0, 1, 0, 0, 0] [1, 2, 2, 18, 2]
// CHECK-NEXT: tensor.concat dim(2) %[[S0]], %[[S1]] : {{.*}} -> tensor<1x2x8x18x2xf32>
// CHECK: %[[T:.*]] = tensor.concat dim(4) {{.*}} -> tensor<1x2x8x2x8x2xf32>
// CHECK-NEXT: %[[BT:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00, -5.250000e+00, 0.000000e+00, 5.250000e+00,
// CHECK: %[[U:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d2, d3, d6, d4, d1, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5)>]
// CHECK-SAME: ins(%[[BT]], %[[T]] : tensor<8x8xf32>, tensor<1x2x8x2x8x2xf32>)
// CHECK: %[[B:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00, 0.000000e+00,
// CHECK: %[[V:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d6, d1)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d6, d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5)>]
// CHECK-SAME: ins(%[[B]], %[[U]] : tensor<8x8xf32>, tensor<8x8x1x2x2x2xf32>)
// CHECK: func.return %[[V]] : tensor<8x8x1x2x2x2xf32>
// CHECK-NOT: winograd
func.func @winograd_input(%x: tensor<1x14x10x2xf32>, %o: tensor<8x8x1x2x2x2xf32>) -> tensor<8x8x1x2x2x2xf32> {
  %0 = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions([1, 2]) ins(%x : tensor<1x14x10x2xf32>) outs(%o : tensor<8x8x1x2x2x2xf32>) -> tensor<8x8x1x2x2x2xf32>
  return %0 : tensor<8x8x1x2x2x2xf32>
}

// -----

// A Winograd output transform (NCHW): A^T . m, then . A written into (N, C, H', 6, W', 6),
// collapsed to (N, C, H, W).
// CHECK-LABEL: func.func @winograd_output(
// CHECK: %[[AT:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 0.000000e+00],
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[AT]], %m : tensor<6x8xf32>, tensor<8x8x1x2x2x3xf32>) outs(%{{.*}} : tensor<6x8x1x2x2x3xf32>)
// CHECK: %[[A:.*]] = arith.constant dense<{{.*}}> : tensor<8x6xf32>
// CHECK: %[[Z:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d6, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d6, d0, d2, d4, d1)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4, d5)>]
// CHECK-SAME: ins(%[[A]], %[[Y]] : tensor<8x6xf32>, tensor<6x8x1x2x2x3xf32>) outs(%{{.*}} : tensor<1x3x2x6x2x6xf32>)
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[Z]] {{\[\[}}0 : i64], [1 : i64], [2 : i64, 3 : i64], [4 : i64, 5 : i64]] : tensor<1x3x2x6x2x6xf32> into tensor<1x3x12x12xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @winograd_output(%m: tensor<8x8x1x2x2x3xf32>, %o: tensor<1x3x12x12xf32>) -> tensor<1x3x12x12xf32> {
  %0 = iree_linalg_ext.winograd.output_transform output_tile_size(6) kernel_size(3) image_dimensions([2, 3]) ins(%m : tensor<8x8x1x2x2x3xf32>) outs(%o : tensor<1x3x12x12xf32>) -> tensor<1x3x12x12xf32>
  return %0 : tensor<1x3x12x12xf32>
}

// -----

// A Winograd filter transform (FCHW): G . g . G^T into (8, 8, C, F).
// CHECK-LABEL: func.func @winograd_filter(
// CHECK: %[[G:.*]] = arith.constant dense<{{.*}}> : tensor<8x3xf32>
// CHECK: %[[H:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d3, d2, d4, d1)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>]
// CHECK-SAME: ins(%[[G]], %g : tensor<8x3xf32>, tensor<4x2x3x3xf32>) outs(%{{.*}} : tensor<8x3x2x4xf32>)
// CHECK: %[[GT:.*]] = arith.constant dense<{{.*}}> : tensor<3x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[GT]], %[[H]] : tensor<3x8xf32>, tensor<8x3x2x4xf32>) outs(%{{.*}} : tensor<8x8x2x4xf32>)
func.func @winograd_filter(%g: tensor<4x2x3x3xf32>, %o: tensor<8x8x2x4xf32>) -> tensor<8x8x2x4xf32> {
  %0 = iree_linalg_ext.winograd.filter_transform output_tile_size(6) kernel_size(3) kernel_dimensions([2, 3]) ins(%g : tensor<4x2x3x3xf32>) outs(%o : tensor<8x8x2x4xf32>) -> tensor<8x8x2x4xf32>
  return %0 : tensor<8x8x2x4xf32>
}
