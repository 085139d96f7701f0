// Checks that --drop-unused-results removes the results of a multi-result linalg.generic that
// nothing reads (torch's max.dim read only for its maximum: the index, its init and the body ops
// that only computed it go), keeps a dropped result's accumulator when a kept result reads it,
// and leaves a generic alone when all or none of its results are read.
// RUN: weir-opt --split-input-file --drop-unused-results %s | filecheck %s
// RUN: weir-opt --split-input-file --drop-unused-results %s | weir-opt --split-input-file - | filecheck %s

// CHECK-LABEL: func.func @max_without_index(
// CHECK-SAME: %[[X:.*]]: tensor<2x8xf32>
// CHECK-NOT: tensor<2xi64>
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK-NOT: tensor<2xi64>
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x8xf32>) outs(%[[INIT]] : tensor<2xf32>) {
// CHECK-NEXT: ^{{.*}}(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK-NEXT: } -> tensor<2xf32>
// CHECK-NEXT: func.return %[[MAX]] : tensor<2xf32>
func.func @max_without_index(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : i64
  %ninf = arith.constant 0xFF800000 : f32
  %ei = tensor.empty() : tensor<2xi64>
  %fi = linalg.fill ins(%c0 : i64) outs(%ei : tensor<2xi64>) -> tensor<2xi64>
  %ef = tensor.empty() : tensor<2xf32>
  %ff = linalg.fill ins(%ninf : f32) outs(%ef : tensor<2xf32>) -> tensor<2xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x8xf32>) outs(%ff, %fi : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %sel = arith.select %gt, %ii, %idx : i64
    linalg.yield %m, %sel : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  return %r#0 : tensor<2xf32>
}

// -----

// The index alone is read: the maximum stays, since the index's compare reads its accumulator.
// CHECK-LABEL: func.func @index_only(
// CHECK: %{{.*}}, %[[IDX:.*]] = linalg.generic
// CHECK: linalg.yield %{{.*}}, %{{.*}} : f32, i64
// CHECK: func.return %[[IDX]] : tensor<2xi64>
func.func @index_only(%x: tensor<2x8xf32>, %ff: tensor<2xf32>, %fi: tensor<2xi64>) -> tensor<2xi64> {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x8xf32>) outs(%ff, %fi : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %sel = arith.select %gt, %ii, %idx : i64
    linalg.yield %m, %sel : f32, i64
  } -> (tensor<2xf32>, tensor<2xi64>)
  return %r#1 : tensor<2xi64>
}

// -----

// Of three elementwise results the middle one goes; the others keep their order and operands.
// CHECK-LABEL: func.func @middle_of_three(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4xf32>, %[[O1:[^:]*]]: tensor<4xf32>, %[[O2:[^:]*]]: tensor<4xf32>, %[[O3:[^:]*]]: tensor<4xf32>
// CHECK: %[[R1:[^ ,]*]], %[[R3:[^ ]*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4xf32>) outs(%[[O1]], %[[O3]] : tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: ^{{.*}}(%[[IN:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[IN]] : f32
// CHECK-NEXT: %[[ABS:.*]] = math.absf %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[NEG]], %[[ABS]] : f32, f32
// CHECK: func.return %[[R1]], %[[R3]] : tensor<4xf32>, tensor<4xf32>
func.func @middle_of_three(%a: tensor<4xf32>, %o1: tensor<4xf32>, %o2: tensor<4xf32>, %o3: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%o1, %o2, %o3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %x: f32, %y: f32, %z: f32):
    %n = arith.negf %in : f32
    %e = math.exp %in : f32
    %b = math.absf %in : f32
    linalg.yield %n, %e, %b : f32, f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Every result read: unchanged.
// CHECK-LABEL: func.func @all_read(
// CHECK: %[[R1:[^ ,]*]], %[[R2:[^ ]*]] = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} :
// CHECK: func.return %[[R1]], %[[R2]]
func.func @all_read(%a: tensor<4xf32>, %o1: tensor<4xf32>, %o2: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%o1, %o2 : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %x: f32, %y: f32):
    %n = arith.negf %in : f32
    linalg.yield %n, %in : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
