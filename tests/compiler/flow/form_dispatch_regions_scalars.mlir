// Checks that scalars a linalg body reads from the host are cloned into the dispatch region when
// they are constants or scalar arith of constants (index casts, bitcasts), so the region captures
// no host scalar (no push constant to compute per call, and the recording can be memoized),
// while a scalar the host computes from a function argument stays captured.
// RUN: weir-opt --split-input-file --form-dispatch-regions %s | filecheck %s

// CHECK-LABEL: func.func @body_reads_constants
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK-DAG: %[[C:.*]] = arith.constant 2.560000e+02 : f64
// CHECK-DAG: %[[I:.*]] = arith.constant 128 : i64
// CHECK-DAG: %[[CAST:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-DAG: %[[BITS:.*]] = arith.bitcast %[[C]] : f64 to i64
// CHECK: linalg.generic
// CHECK: arith.index_cast %[[CAST]]
// CHECK: arith.sitofp %[[BITS]]
// CHECK: "flow.return"
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @body_reads_constants(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 256.0 : f64
  %i = arith.constant 128 : i64
  %cast = arith.index_cast %i : i64 to index
  %bits = arith.bitcast %c : f64 to i64
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.index_cast %cast : index to i64
    %nf = arith.sitofp %n : i64 to f32
    %bf = arith.sitofp %bits : i64 to f32
    %s = arith.addf %in, %nf : f32
    %t = arith.addf %s, %bf : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @body_reads_an_argument
// CHECK: %[[N:.*]] = arith.index_cast %n : i64 to index
// CHECK-NEXT: "flow.dispatch.region"() ({
// CHECK-NOT: arith.index_cast %n
// CHECK: arith.index_cast %[[N]] : index to i64
func.func @body_reads_an_argument(%x: tensor<4xf32>, %n: i64) -> tensor<4xf32> {
  %cast = arith.index_cast %n : i64 to index
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.index_cast %cast : index to i64
    %mf = arith.sitofp %m : i64 to f32
    %s = arith.addf %in, %mf : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
