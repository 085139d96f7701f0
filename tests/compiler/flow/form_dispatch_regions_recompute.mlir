// Checks that elementwise producers with several users are cloned into each consumer's region
// (recomputed, never materialised), that broadcasts fuse like elementwise ops, and that a
// reduction takes its row-wise consumers as an epilogue: softmax becomes two dispatches, the
// max with the exponentials it makes, and the sum with the division that reads it.
// RUN: weir-opt --split-input-file --convert-elementwise-to-linalg --form-dispatch-regions %s | filecheck %s

// CHECK-LABEL: func.func @softmax_rows
// CHECK: %[[EX:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[MAX:.*]] = linalg.reduce
// CHECK: linalg.broadcast ins(%[[MAX]]
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: "flow.return"
// CHECK: %[[OUT:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%[[EX]]
// CHECK: linalg.broadcast ins(%[[SUM]]
// CHECK: arith.divf
// CHECK: func.return %[[OUT]]
// CHECK-NOT: linalg.
func.func @softmax_rows(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %max = linalg.reduce ins(%x : tensor<8x16xf32>) outs(%mi : tensor<8xf32>) dimensions = [1]
    (%a: f32, %m: f32) {
      %y = arith.maximumf %a, %m : f32
      linalg.yield %y : f32
    }
  %e1 = tensor.empty() : tensor<8x16xf32>
  %maxb = linalg.broadcast ins(%max : tensor<8xf32>) outs(%e1 : tensor<8x16xf32>) dimensions = [1]
  %d = arith.subf %x, %maxb : tensor<8x16xf32>
  %ex = math.exp %d : tensor<8x16xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.reduce ins(%ex : tensor<8x16xf32>) outs(%si : tensor<8xf32>) dimensions = [1]
    (%a: f32, %s: f32) {
      %y = arith.addf %a, %s : f32
      linalg.yield %y : f32
    }
  %sumb = linalg.broadcast ins(%sum : tensor<8xf32>) outs(%e1 : tensor<8x16xf32>) dimensions = [1]
  %r = arith.divf %ex, %sumb : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// An elementwise value two matmuls read is recomputed in each matmul's region.
// CHECK-LABEL: func.func @shared_producer
// CHECK: "flow.dispatch.region"() ({
// CHECK: math.exp
// CHECK: linalg.matmul
// CHECK: "flow.dispatch.region"() ({
// CHECK: math.exp
// CHECK: linalg.matmul
// CHECK-NOT: "flow.dispatch.region"
func.func @shared_producer(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = math.exp %x : tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%w, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m1, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
}
