// Checks that iree_linalg_ext / tm_tensor ops whose operands, dimensions or regions disagree are
// rejected at their location with a message naming what is wrong. The valid forms are in
// linalg_ext_ops.mlir.
// RUN: not weir-opt --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not weir-opt --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=OUT --allow-empty
// OUT-NOT: {{.}}

func.func @sort_dimension(%v: tensor<2x5xf32>) -> tensor<2x5xf32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.sort' op dimension 2 is out of range for rank 2
  %0 = iree_linalg_ext.sort dimension(2) outs(%v : tensor<2x5xf32>) {
  ^bb0(%a: f32, %b: f32):
    %lt = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %lt : i1
  } -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @sort_region(%v: tensor<5xf32>, %i: tensor<5xi32>) -> tensor<5xf32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'tm_tensor.sort' op the region takes (f32, f32), expected (f32, f32, i32, i32)
  %0:2 = tm_tensor.sort dimension(0) outs(%v, %i : tensor<5xf32>, tensor<5xi32>) {
  ^bb0(%a: f32, %b: f32):
    %lt = arith.cmpf olt, %a, %b : f32
    tm_tensor.yield %lt : i1
  } -> tensor<5xf32>, tensor<5xi32>
  return %0#0 : tensor<5xf32>
}

// -----

func.func @sort_yield(%v: tensor<5xf32>) -> tensor<5xf32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.sort' op the region must yield one i1
  %0 = iree_linalg_ext.sort dimension(0) outs(%v : tensor<5xf32>) {
  ^bb0(%a: f32, %b: f32):
    iree_linalg_ext.yield %a : f32
  } -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @scan_accumulator(%x: tensor<2x3xi32>, %acc: tensor<2xi32>) -> tensor<2x3xi32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.scan' op the accumulator tensor<2xi32> must have the input's shape without dimension 0
  %0:2 = iree_linalg_ext.scan dimension(0) inclusive(true) ins(%x : tensor<2x3xi32>) outs(%x, %acc : tensor<2x3xi32>, tensor<2xi32>) {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    iree_linalg_ext.yield %s : i32
  } -> tensor<2x3xi32>, tensor<2xi32>
  return %0#0 : tensor<2x3xi32>
}

// -----

func.func @topk_shape(%x: tensor<2x10xf32>, %v: tensor<3x3xf32>, %i: tensor<3x3xi32>) -> tensor<3x3xf32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.topk' op output #0 of type tensor<3x3xf32> must have the input's shape but for dimension 1
  %0:2 = iree_linalg_ext.topk dimension(1) ins(%x : tensor<2x10xf32>) outs(%v, %i : tensor<3x3xf32>, tensor<3x3xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<3x3xf32>, tensor<3x3xi32>
  return %0#0 : tensor<3x3xf32>
}

// -----

func.func @scatter_batch(%u: tensor<3x4xf32>, %idx: tensor<2x1xi64>, %kv: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.scatter' op tensor<3x4xf32> must start with the indices' batch shape [2]
  %0 = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true) ins(%u, %idx : tensor<3x4xf32>, tensor<2x1xi64>) outs(%kv : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    iree_linalg_ext.yield %a : f32
  } -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @gather_map(%src: tensor<8x4xf32>, %idx: tensor<2x1xi64>, %o: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.gather' op dimension_map [2] must name distinct dimensions of the rank-2 source
  %0 = iree_linalg_ext.gather dimension_map = [2] ins(%src, %idx : tensor<8x4xf32>, tensor<2x1xi64>) outs(%o : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @arg_compare_index(%x: tensor<5xf32>, %v: tensor<f32>, %i: tensor<f32>) -> tensor<f32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.arg_compare' op the index output must have an integer element type
  %0:2 = iree_linalg_ext.arg_compare dimension(0) ins(%x : tensor<5xf32>) outs(%v, %i : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    iree_linalg_ext.yield %gt : i1
  } -> tensor<f32>, tensor<f32>
  return %0#0 : tensor<f32>
}

// -----

func.func @winograd_input_shape(%x: tensor<1x14x10x2xf32>, %u: tensor<8x8x1x3x2x2xf32>) -> tensor<8x8x1x3x2x2xf32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.winograd.input_transform' op the output tensor<8x8x1x3x2x2xf32> must have shape 8x8x1x2x2x2
  %0 = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions([1, 2]) ins(%x : tensor<1x14x10x2xf32>) outs(%u : tensor<8x8x1x3x2x2xf32>) -> tensor<8x8x1x3x2x2xf32>
  return %0 : tensor<8x8x1x3x2x2xf32>
}

// -----

func.func @winograd_layout(%x: tensor<1x14x10x2xf32>, %u: tensor<8x8x1x2x2x2xf32>) -> tensor<8x8x1x2x2x2xf32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.winograd.input_transform' op image_dimensions must be [1, 2] or [2, 3]
  %0 = iree_linalg_ext.winograd.input_transform output_tile_size(6) kernel_size(3) image_dimensions([0, 1]) ins(%x : tensor<1x14x10x2xf32>) outs(%u : tensor<8x8x1x2x2x2xf32>) -> tensor<8x8x1x2x2x2xf32>
  return %0 : tensor<8x8x1x2x2x2xf32>
}

// -----

func.func @winograd_tile_size(%m: tensor<6x6xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.winograd.output_transform' op output_tile_size(4) kernel_size(3) is not supported (only 6 and 3)
  %0 = iree_linalg_ext.winograd.output_transform output_tile_size(4) kernel_size(3) image_dimensions([0, 1]) ins(%m : tensor<6x6xf32>) outs(%y : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @winograd_kernel(%g: tensor<3x5x2x4xf32>, %v: tensor<8x8x2x4xf32>) -> tensor<8x8x2x4xf32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.winograd.filter_transform' op the kernel dimensions of tensor<3x5x2x4xf32> must be 3
  %0 = iree_linalg_ext.winograd.filter_transform output_tile_size(6) kernel_size(3) kernel_dimensions([0, 1]) ins(%g : tensor<3x5x2x4xf32>) outs(%v : tensor<8x8x2x4xf32>) -> tensor<8x8x2x4xf32>
  return %0 : tensor<8x8x2x4xf32>
}

// -----

func.func @winograd_integers(%m: tensor<8x8xi32>, %y: tensor<6x6xi32>) -> tensor<6x6xi32> {
  // ERR: linalg_ext_ops_errors.mlir:[[# @LINE + 1]]:3: error: 'iree_linalg_ext.winograd.output_transform' op input and output must have one float element type
  %0 = iree_linalg_ext.winograd.output_transform output_tile_size(6) kernel_size(3) image_dimensions([0, 1]) ins(%m : tensor<8x8xi32>) outs(%y : tensor<6x6xi32>) -> tensor<6x6xi32>
  return %0 : tensor<6x6xi32>
}

