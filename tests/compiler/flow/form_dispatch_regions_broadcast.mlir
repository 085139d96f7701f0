// Checks that --form-dispatch-regions materialises an elementwise producer with work of its own
// that a broadcast would recompute for each of 64 times more elements (a region of its own, read
// by the large one), and still fuses an iota and a value computed from a reduction.
// RUN: weir-opt --split-input-file --form-dispatch-regions %s | filecheck %s

#id1 = affine_map<(i) -> (i)>
#row = affine_map<(i, j) -> (i)>
#id2 = affine_map<(i, j) -> (i, j)>

// CHECK-LABEL: func.func @mask_per_row(
// CHECK: %[[MASK:.*]] = "flow.dispatch.region"()
// CHECK: arith.cmpf
// CHECK: "flow.return"(%{{.*}}) : (tensor<128xf32>) -> ()
// CHECK: "flow.dispatch.region"()
// CHECK-NOT: arith.cmpf
// CHECK: ins(%x, %[[MASK]] :
// CHECK: arith.addf
// CHECK: "flow.return"(%{{.*}}) : (tensor<128x128xf32>) -> ()
func.func @mask_per_row(%m: tensor<128xf32>, %x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %big = arith.constant -1.0e9 : f32
  %e1 = tensor.empty() : tensor<128xf32>
  %bias = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%m : tensor<128xf32>) outs(%e1 : tensor<128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %on = arith.cmpf ogt, %v, %zero : f32
    %b = arith.select %on, %zero, %big : f32
    linalg.yield %b : f32
  } -> tensor<128xf32>
  %e2 = tensor.empty() : tensor<128x128xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<128x128xf32>, tensor<128xf32>) outs(%e2 : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// -----

#id1 = affine_map<(i) -> (i)>
#row = affine_map<(i, j) -> (i)>
#id2 = affine_map<(i, j) -> (i, j)>

// CHECK-LABEL: func.func @iota_per_row(
// CHECK: "flow.dispatch.region"()
// CHECK: linalg.index
// CHECK: arith.addf
// CHECK: "flow.return"(%{{.*}}) : (tensor<128x128xf32>) -> ()
// CHECK-NOT: "flow.dispatch.region"
func.func @iota_per_row(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %e1 = tensor.empty() : tensor<128xf32>
  %iota = linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]}
      outs(%e1 : tensor<128xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    linalg.yield %f : f32
  } -> tensor<128xf32>
  %e2 = tensor.empty() : tensor<128x128xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %iota : tensor<128x128xf32>, tensor<128xf32>) outs(%e2 : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// -----

#id1 = affine_map<(i) -> (i)>
#row = affine_map<(i, j) -> (i)>
#id2 = affine_map<(i, j) -> (i, j)>

// A row's statistic (a sum, then a scale) stays with the rows it scales.
// CHECK-LABEL: func.func @statistic_per_row(
// CHECK: "flow.dispatch.region"()
// CHECK: linalg.reduce
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: "flow.return"(%{{.*}}) : (tensor<128x128xf32>) -> ()
// CHECK-NOT: "flow.dispatch.region"
func.func @statistic_per_row(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 128.0 : f32
  %e1 = tensor.empty() : tensor<128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e1 : tensor<128xf32>) -> tensor<128xf32>
  %sum = linalg.reduce ins(%x : tensor<128x128xf32>) outs(%acc : tensor<128xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %mean = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%sum : tensor<128xf32>) outs(%e1 : tensor<128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %n : f32
    %inv = arith.divf %n, %d : f32
    linalg.yield %inv : f32
  } -> tensor<128xf32>
  %e2 = tensor.empty() : tensor<128x128xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<128x128xf32>, tensor<128xf32>) outs(%e2 : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}
