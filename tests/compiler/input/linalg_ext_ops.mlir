// Checks that IREE's iree_linalg_ext ops and torch-mlir's tm_tensor copies (sort, topk, scan,
// scatter, gather, arg_compare, attention, map_load/map_store with affine index ops) parse in the
// forms IREE and torch-mlir print, pass the input phase's op check, and print back in a form that
// parses again (ROUNDTRIP). Their errors are in linalg_ext_ops_errors.mlir.
// RUN: weir-opt --split-input-file --check-supported-ops %s | weir-opt --split-input-file - | filecheck %s --check-prefix=ROUNDTRIP

// ROUNDTRIP-LABEL: func.func @sort(
// ROUNDTRIP-NEXT: %{{.*}} = iree_linalg_ext.sort dimension(1) outs(%v, %i : tensor<2x5xf32>, tensor<2x5xi32>) {
// ROUNDTRIP-NEXT: ^{{.*}}(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: i32, %{{.*}}: i32):
// ROUNDTRIP-NEXT: %[[C:.*]] = arith.cmpf olt, %[[A]], %[[B]] : f32
// ROUNDTRIP-NEXT: iree_linalg_ext.yield %[[C]] : i1
// ROUNDTRIP-NEXT: } -> (tensor<2x5xf32>, tensor<2x5xi32>)
func.func @sort(%v: tensor<2x5xf32>, %i: tensor<2x5xi32>) -> (tensor<2x5xf32>, tensor<2x5xi32>) {
  %0:2 = iree_linalg_ext.sort dimension(1) outs(%v, %i : tensor<2x5xf32>, tensor<2x5xi32>) {
  ^bb0(%a: f32, %b: f32, %c: i32, %d: i32):
    %lt = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %lt : i1
  } -> tensor<2x5xf32>, tensor<2x5xi32>
  return %0#0, %0#1 : tensor<2x5xf32>, tensor<2x5xi32>
}

// -----

// ROUNDTRIP-LABEL: func.func @scan(
// ROUNDTRIP-NEXT: %{{.*}} = iree_linalg_ext.scan dimension(0) inclusive(false) ins(%x : tensor<6xi32>) outs(%o, %acc : tensor<6xi32>, tensor<i32>) {
// ROUNDTRIP: } -> (tensor<6xi32>, tensor<i32>)
func.func @scan(%x: tensor<6xi32>, %o: tensor<6xi32>, %acc: tensor<i32>) -> tensor<6xi32> {
  %0:2 = iree_linalg_ext.scan dimension(0) inclusive(false) ins(%x : tensor<6xi32>) outs(%o, %acc : tensor<6xi32>, tensor<i32>) {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    iree_linalg_ext.yield %s : i32
  } -> tensor<6xi32>, tensor<i32>
  return %0#0 : tensor<6xi32>
}

// -----

// ROUNDTRIP-LABEL: func.func @scatter_gather(
// ROUNDTRIP-NEXT: %[[S:.*]] = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true) ins(%u, %idx, %m : tensor<2x4xf32>, tensor<2x1xi64>, tensor<2xi1>) outs(%kv : tensor<8x4xf32>) {
// ROUNDTRIP: } -> tensor<8x4xf32>
// ROUNDTRIP-NEXT: %{{.*}} = iree_linalg_ext.gather dimension_map = [0] ins(%[[S]], %idx : tensor<8x4xf32>, tensor<2x1xi64>) outs(%u : tensor<2x4xf32>) -> tensor<2x4xf32>
func.func @scatter_gather(%u: tensor<2x4xf32>, %idx: tensor<2x1xi64>, %m: tensor<2xi1>, %kv: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %0 = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true) ins(%u, %idx, %m : tensor<2x4xf32>, tensor<2x1xi64>, tensor<2xi1>) outs(%kv : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    iree_linalg_ext.yield %a : f32
  } -> tensor<8x4xf32>
  %1 = iree_linalg_ext.gather dimension_map = [0] ins(%0, %idx : tensor<8x4xf32>, tensor<2x1xi64>) outs(%u : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// ROUNDTRIP-LABEL: func.func @topk_arg_compare(
// ROUNDTRIP-NEXT: %{{.*}} = iree_linalg_ext.topk dimension(0) ins(%x : tensor<10xf32>) outs(%v, %i : tensor<3xf32>, tensor<3xi32>) {
// ROUNDTRIP: %{{.*}} = iree_linalg_ext.arg_compare dimension(0) ins(%x : tensor<10xf32>) outs(%bv, %bi : tensor<f32>, tensor<i32>) index_base(%base : index) {
func.func @topk_arg_compare(%x: tensor<10xf32>, %v: tensor<3xf32>, %i: tensor<3xi32>, %bv: tensor<f32>, %bi: tensor<i32>, %base: index) -> (tensor<3xi32>, tensor<i32>) {
  %0:2 = iree_linalg_ext.topk dimension(0) ins(%x : tensor<10xf32>) outs(%v, %i : tensor<3xf32>, tensor<3xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<3xf32>, tensor<3xi32>
  %1:2 = iree_linalg_ext.arg_compare dimension(0) ins(%x : tensor<10xf32>) outs(%bv, %bi : tensor<f32>, tensor<i32>) index_base(%base : index) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<f32>, tensor<i32>
  return %0#1, %1#1 : tensor<3xi32>, tensor<i32>
}

// -----

// ROUNDTRIP-LABEL: func.func @attention(
// ROUNDTRIP-NEXT: %{{.*}} = iree_linalg_ext.attention {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> ()>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>]} ins(%q, %k, %v, %scale : tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>, f32) outs(%o : tensor<1x3x4xf32>) {
func.func @attention(%q: tensor<1x3x4xf32>, %k: tensor<1x3x4xf32>, %v: tensor<1x3x4xf32>, %scale: f32, %o: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %0 = iree_linalg_ext.attention {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>,
                     affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2)>,
                     affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>,
                     affine_map<(d0, d1, d2, d3, d4) -> ()>,
                     affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>]}
      ins(%q, %k, %v, %scale : tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>, f32) outs(%o : tensor<1x3x4xf32>) {
  ^bb0(%s: f32):
    iree_linalg_ext.yield %s : f32
  } -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

// torch-mlir's forms: tm_tensor ops, scatter's dimension_map in an attribute dictionary.
// ROUNDTRIP-LABEL: func.func @tm_tensor(
// ROUNDTRIP: tm_tensor.sort dimension(1) outs(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xi64>) {
// ROUNDTRIP: tm_tensor.yield %{{.*}} : i1
// ROUNDTRIP: tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<4x8xf32>)
// ROUNDTRIP: tm_tensor.scatter dimension_map = [0] unique_indices(true) ins(%u, %idx : tensor<2x1x8xf32>, tensor<2x1xi64>) outs(%x : tensor<4x8xf32>) {
func.func @tm_tensor(%x: tensor<4x8xf32>, %i: tensor<4x8xi64>, %acc: tensor<4xf32>, %u: tensor<2x1x8xf32>, %idx: tensor<2x1xi64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:2 = tm_tensor.sort dimension(1) outs(%x, %i : tensor<4x8xf32>, tensor<4x8xi64>) {
  ^bb0(%a: f32, %b: f32, %c: i64, %d: i64):
    %ge = arith.cmpf oge, %a, %b : f32
    tm_tensor.yield %ge : i1
  } -> tensor<4x8xf32>, tensor<4x8xi64>
  %1:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<4x8xf32>) outs(%x, %acc : tensor<4x8xf32>, tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<4x8xf32>, tensor<4xf32>
  %2 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%u, %idx : tensor<2x1x8xf32>, tensor<2x1xi64>) outs(%x : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  } -> tensor<4x8xf32>
  return %0#0, %1#0, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// map_load / map_store with the affine index ops their regions use.
// ROUNDTRIP-LABEL: func.func @maps(
// ROUNDTRIP-NEXT: %{{.*}} = iree_linalg_ext.map_load %x into %o {
// ROUNDTRIP-NEXT: ^{{.*}}(%[[I:.*]]: index, %[[J:.*]]: index):
// ROUNDTRIP-NEXT: %[[L:.*]] = affine.linearize_index disjoint [%[[I]], %[[J]]] by (4, 4) : index
// ROUNDTRIP-NEXT: iree_linalg_ext.yield %[[L]], %pad : index, f32
// ROUNDTRIP-NEXT: } : tensor<16xf32> into tensor<4x4xf32> -> tensor<4x4xf32>
// ROUNDTRIP: affine.delinearize_index %{{.*}} into (4, 4) : index, index
// ROUNDTRIP: } : tensor<16xf32> into tensor<4x4xf32> -> tensor<4x4xf32>
func.func @maps(%x: tensor<16xf32>, %o: tensor<4x4xf32>, %pad: f32, %true: i1) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = iree_linalg_ext.map_load %x into %o {
  ^bb0(%i: index, %j: index):
    %l = affine.linearize_index disjoint [%i, %j] by (4, 4) : index
    iree_linalg_ext.yield %l, %pad : index, f32
  } : tensor<16xf32> into tensor<4x4xf32> -> tensor<4x4xf32>
  %1 = iree_linalg_ext.map_store %x into %o {
  ^bb0(%i: index):
    %d:2 = affine.delinearize_index %i into (4, 4) : index, index
    iree_linalg_ext.yield %d#0, %d#1, %true : index, index, i1
  } : tensor<16xf32> into tensor<4x4xf32> -> tensor<4x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// ROUNDTRIP-LABEL: func.func @winograd(
// ROUNDTRIP-NEXT: %{{.*}} = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions([1, 2]) ins(%x : tensor<1x14x10x2xf32>) outs(%u : tensor<8x8x1x2x2x2xf32>) -> tensor<8x8x1x2x2x2xf32>
// ROUNDTRIP-NEXT: %{{.*}} = iree_linalg_ext.winograd.filter_transform output_tile_size(6) kernel_size(3) kernel_dimensions([0, 1]) input_tile_dimensions([0, 1]) ins(%g : tensor<3x3x2x4xf32>) outs(%v : tensor<8x8x2x4xf32>) -> tensor<8x8x2x4xf32>
// ROUNDTRIP-NEXT: %{{.*}} = iree_linalg_ext.winograd.output_transform output_tile_size(6) kernel_size(3) image_dimensions([2, 3]) ins(%m : tensor<8x8x1x2x2x4xf32>) outs(%y : tensor<1x4x12x12xf32>) -> tensor<1x4x12x12xf32>
// ROUNDTRIP-NEXT: %{{.*}} = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions([0, 1]) ins(%t : tensor<5x8xf32>) outs(%w : tensor<8x8xf32>) -> tensor<8x8xf32>
func.func @winograd(%x: tensor<1x14x10x2xf32>, %u: tensor<8x8x1x2x2x2xf32>, %g: tensor<3x3x2x4xf32>, %v: tensor<8x8x2x4xf32>, %m: tensor<8x8x1x2x2x4xf32>, %y: tensor<1x4x12x12xf32>, %t: tensor<5x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8x1x2x2x2xf32>, tensor<8x8x2x4xf32>, tensor<1x4x12x12xf32>, tensor<8x8xf32>) {
  %0 = iree_linalg_ext.winograd.input_transform
       output_tile_size(6) kernel_size(3) image_dimensions([1, 2])
       ins(%x : tensor<1x14x10x2xf32>) outs(%u : tensor<8x8x1x2x2x2xf32>) -> tensor<8x8x1x2x2x2xf32>
  %1 = iree_linalg_ext.winograd.filter_transform
       output_tile_size(6) kernel_size(3) kernel_dimensions([0, 1]) input_tile_dimensions([0, 1])
       ins(%g : tensor<3x3x2x4xf32>) outs(%v : tensor<8x8x2x4xf32>) -> tensor<8x8x2x4xf32>
  %2 = iree_linalg_ext.winograd.output_transform
       output_tile_size(6) kernel_size(3) image_dimensions([2, 3])
       ins(%m : tensor<8x8x1x2x2x4xf32>) outs(%y : tensor<1x4x12x12xf32>) -> tensor<1x4x12x12xf32>
  %3 = iree_linalg_ext.winograd.input_transform
       output_tile_size(6) kernel_size(3) image_dimensions([0, 1])
       ins(%t : tensor<5x8xf32>) outs(%w : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0, %1, %2, %3 : tensor<8x8x1x2x2x2xf32>, tensor<8x8x2x4xf32>, tensor<1x4x12x12xf32>, tensor<8x8xf32>
}
