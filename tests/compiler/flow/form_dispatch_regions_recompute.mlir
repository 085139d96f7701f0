// Checks that elementwise producers with several users are cloned into each consumer's region
// (recomputed, never materialised), that broadcasts fuse like elementwise ops, and that a
// producer moves into the region of its last remaining user: softmax becomes three dispatches.
// RUN: weir-opt --convert-elementwise-to-linalg --form-dispatch-regions %s | filecheck %s

// CHECK-LABEL: func.func @softmax_rows
// CHECK: %[[MAX:.*]] = "flow.dispatch.region"() ({
// CHECK: linalg.reduce
// CHECK: %[[SUM:.*]] = "flow.dispatch.region"() ({
// CHECK: linalg.broadcast ins(%[[MAX]]
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: linalg.reduce
// CHECK: %[[OUT:.*]] = "flow.dispatch.region"() ({
// CHECK: linalg.broadcast ins(%[[MAX]]
// CHECK: math.exp
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
