// Checks that dispatch regions form inside host control flow but never across a region boundary:
// an elementwise producer outside a loop gets its own region (it is not recomputed in every
// iteration), the loop body's chain fuses into one region, cheap producers (scalar constants)
// from outside are cloned in, and the loop's consumer after it forms its own region.
// RUN: weir-opt --convert-elementwise-to-linalg --form-dispatch-regions %s | filecheck %s

// CHECK-LABEL: func.func @boundary
// CHECK-NOT: arith.constant 5.0
// CHECK: %[[PRE:.*]] = "flow.dispatch.region"() ({
// CHECK: math.exp
// CHECK: "flow.return"
// CHECK: scf.for %{{.*}} iter_args(%[[X:.*]] = %{{.*}}) -> (tensor<8xf32>) {
// CHECK-NEXT: %[[S:.*]] = "flow.dispatch.region"() ({
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: linalg.fill ins(%[[HALF]] : f32)
// CHECK: ins(%[[X]], %[[PRE]] : tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: "flow.return"
// CHECK-NEXT: })
// CHECK-NEXT: scf.yield %[[S]] : tensor<8xf32>
// CHECK: "flow.dispatch.region"() ({
// CHECK: math.absf
func.func @boundary(%a: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant 0.5 : f32
  %pre = math.exp %a : tensor<8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %h = linalg.fill ins(%half : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %m = arith.mulf %x, %pre : tensor<8xf32>
    %s = arith.addf %m, %h : tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  }
  %post = math.absf %r : tensor<8xf32>
  return %post : tensor<8xf32>
}
