// Checks that the valid forms next to those verify_*_ops_errors.mlir reject still verify and
// print: rank-reducing slices, dynamic reshapes, a collapse to rank 0, constant indices in
// range, named ops converting their operands (linalg.fill of an i32 into f32, as MLIR's fill
// casts), a generic of two outputs, scf.if/while with results.
// RUN: weir-opt %s | filecheck %s

// CHECK-LABEL: func.func @reshapes
// CHECK: tensor.collapse_shape %a {{.*}} : tensor<?x4xf32> into tensor<?xf32>
// CHECK: tensor.expand_shape %{{.*}} output_shape [%n, 4] : tensor<?xf32> into tensor<?x4xf32>
// CHECK: tensor.collapse_shape %u [] : tensor<1x1xf32> into tensor<f32>
func.func @reshapes(%a: tensor<?x4xf32>, %n: index, %u: tensor<1x1xf32>) -> (tensor<?x4xf32>, tensor<f32>) {
  %0 = tensor.collapse_shape %a [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
  %1 = tensor.expand_shape %0 [[0, 1]] output_shape [%n, 4] : tensor<?xf32> into tensor<?x4xf32>
  %2 = tensor.collapse_shape %u [] : tensor<1x1xf32> into tensor<f32>
  return %1, %2 : tensor<?x4xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @elements
// CHECK: tensor.extract %a[%c3, %c9] : tensor<4x?xf32>
// CHECK: tensor.insert %{{.*}} into %a[%i, %c0] : tensor<4x?xf32>
// CHECK: tensor.dim %a, %c1 : tensor<4x?xf32>
func.func @elements(%a: tensor<4x?xf32>, %i: index) -> (tensor<4x?xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c9 = arith.constant 9 : index
  %x = tensor.extract %a[%c3, %c9] : tensor<4x?xf32>
  %0 = tensor.insert %x into %a[%i, %c0] : tensor<4x?xf32>
  %1 = tensor.dim %a, %c1 : tensor<4x?xf32>
  return %0, %1 : tensor<4x?xf32>, index
}

// CHECK-LABEL: func.func @slices
// CHECK: tensor.extract_slice %a[1, 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<4xf32>
// CHECK: tensor.extract_slice %a[0, 0] [%n, 4] [1, 1] : tensor<4x4xf32> to tensor<?x4xf32>
// CHECK: tensor.insert_slice %{{.*}} into %a[3, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<4x4xf32>
// CHECK: tensor.extract_slice %a[4, 0] [0, 4] [1, 1] : tensor<4x4xf32> to tensor<0x4xf32>
func.func @slices(%a: tensor<4x4xf32>, %n: index) -> (tensor<?x4xf32>, tensor<4x4xf32>, tensor<0x4xf32>) {
  %0 = tensor.extract_slice %a[1, 0] [1, 4] [1, 1] : tensor<4x4xf32> to tensor<4xf32>
  %1 = tensor.extract_slice %a[0, 0] [%n, 4] [1, 1] : tensor<4x4xf32> to tensor<?x4xf32>
  %2 = tensor.insert_slice %0 into %a[3, 0] [1, 4] [1, 1] : tensor<4xf32> into tensor<4x4xf32>
  %3 = tensor.extract_slice %a[4, 0] [0, 4] [1, 1] : tensor<4x4xf32> to tensor<0x4xf32>
  return %1, %2, %3 : tensor<?x4xf32>, tensor<4x4xf32>, tensor<0x4xf32>
}

// CHECK-LABEL: func.func @linalg
// CHECK: linalg.fill ins(%c : i32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
// CHECK: linalg.generic
// CHECK: -> (tensor<4xf32>, tensor<4xi32>)
func.func @linalg(%a: tensor<4xf32>, %b: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) {
  %c = arith.constant 5 : i32
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.fill ins(%c : i32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %1:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%a, %b : tensor<4xf32>, tensor<4xi32>) {
  ^bb0(%x: f32, %y: f32, %z: i32):
    %i = linalg.index 0 : index
    %j = arith.index_cast %i : index to i32
    linalg.yield %x, %j : f32, i32
  } -> (tensor<4xf32>, tensor<4xi32>)
  return %0, %1#0, %1#1 : tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @control_flow
// CHECK: scf.if
// CHECK: scf.while
// CHECK: scf.for
func.func @control_flow(%c: i1, %a: tensor<4xf32>, %n: i32) -> (tensor<4xf32>, i32, tensor<4xf32>) {
  %0 = scf.if %c -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  } else {
    %d = arith.addf %a, %a : tensor<4xf32>
    scf.yield %d : tensor<4xf32>
  }
  %1 = scf.while (%x = %n) : (i32) -> i32 {
    %zero = arith.constant 0 : i32
    %more = arith.cmpi sgt, %x, %zero : i32
    scf.condition(%more) %x : i32
  } do {
  ^bb0(%y: i32):
    %one = arith.constant 1 : i32
    %next = arith.subi %y, %one : i32
    scf.yield %next : i32
  }
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %step = arith.constant 2 : index
  %2 = scf.for %i = %lo to %hi step %step iter_args(%acc = %a) -> (tensor<4xf32>) {
    %s = arith.addf %acc, %acc : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %0, %1, %2 : tensor<4xf32>, i32, tensor<4xf32>
}
