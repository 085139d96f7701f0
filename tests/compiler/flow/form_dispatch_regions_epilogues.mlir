// Checks that contractions and reductions take their elementwise consumers as an epilogue (the
// chain of sole users reading them at the index they write, or for a reduction at a projection
// of it): matmul + bias + relu, conv + bias + relu, sum + division are one region each, a fused
// chain stays out of the next matmul's region, and consumers that read the result elsewhere, or
// share it, stay out.
// RUN: weir-opt --split-input-file --convert-elementwise-to-linalg --form-dispatch-regions %s | filecheck %s

// CHECK-LABEL: func.func @bias_relu
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK: %[[BIAS:.*]] = linalg.broadcast
// CHECK: %[[PRE:.*]] = linalg.generic {{.*}} ins(%[[MM]], %[[BIAS]] :
// CHECK: arith.addf
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[PRE]], %{{.*}} :
// CHECK: arith.maximumf
// CHECK: "flow.return"(%[[H]])
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @bias_relu(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : tensor<8x32xf32>
  %e = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%acc : tensor<8x32xf32>) -> tensor<8x32xf32>
  %bias = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e : tensor<8x32xf32>) dimensions = [0]
  %pre = arith.addf %mm, %bias : tensor<8x32xf32>
  %h = arith.maximumf %pre, %zeros : tensor<8x32xf32>
  return %h : tensor<8x32xf32>
}

// -----

// Two layers: the first layer's relu ends its own region; the second matmul reads it from
// memory instead of recomputing the first epilogue as its prologue.
// CHECK-LABEL: func.func @two_layers
// CHECK-NEXT: %[[H1:.*]] = "flow.dispatch.region"() ({
// CHECK: linalg.matmul ins(%x, %w1
// CHECK: arith.maximumf
// CHECK: "flow.return"
// CHECK: %[[H2:.*]] = "flow.dispatch.region"() ({
// CHECK-NOT: arith.maximumf
// CHECK: linalg.matmul ins(%[[H1]], %w2
// CHECK: arith.addf
// CHECK: "flow.return"
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[H2]]
func.func @two_layers(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x4xf32>, %b2: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : tensor<8x32xf32>
  %e = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%acc : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = arith.maximumf %mm, %zeros : tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mm2 = linalg.matmul ins(%h, %w2 : tensor<8x32xf32>, tensor<32x4xf32>) outs(%acc2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = arith.addf %mm2, %b2 : tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// A row sum and the division that makes it a mean: one region returning the mean.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @mean
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]], %{{.*}} :
// CHECK: arith.divf
// CHECK: "flow.return"(%[[MEAN]])
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @mean(%x: tensor<4x64xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant dense<64.0> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %in, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %mean = arith.divf %sum, %n : tensor<4xf32>
  return %mean : tensor<4xf32>
}

// -----

// A consumer reading the matmul transposed is no epilogue: it is a region of its own.
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @transposed_reader
// CHECK-NEXT: %[[MM:.*]] = "flow.dispatch.region"() ({
// CHECK-NOT: arith.negf
// CHECK: "flow.return"
// CHECK: %[[Y:.*]] = "flow.dispatch.region"() ({
// CHECK-NOT: linalg.matmul
// CHECK: ins(%[[MM]] :
// CHECK: arith.negf
// CHECK: func.return %[[Y]]
func.func @transposed_reader(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// A matmul with two users keeps its own region (an epilogue would have to be computed twice or
// the matmul recomputed); each user is then a region of its own.
// CHECK-LABEL: func.func @shared_result
// CHECK-NEXT: %[[MM:.*]] = "flow.dispatch.region"() ({
// CHECK: linalg.matmul
// CHECK-NEXT: "flow.return"
// CHECK: "flow.dispatch.region"() ({
// CHECK-NOT: linalg.matmul
// CHECK: "flow.return"
// CHECK: "flow.dispatch.region"() ({
// CHECK-NOT: linalg.matmul
// CHECK: "flow.return"
func.func @shared_result(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = math.exp %mm : tensor<8x8xf32>
  %b = math.absf %mm : tensor<8x8xf32>
  return %a, %b : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Two matmuls meet in a residual add: the add joins the first matmul's chain; the second
// matmul is a region of its own whose result the first region reads.
// CHECK-LABEL: func.func @two_into_one
// CHECK-NEXT: %[[B:.*]] = "flow.dispatch.region"() ({
// CHECK: linalg.matmul ins(%y, %w
// CHECK-NEXT: "flow.return"
// CHECK: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[A:.*]] = linalg.matmul ins(%x, %w
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] :
// CHECK: "flow.return"
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @two_into_one(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = linalg.matmul ins(%x, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = linalg.matmul ins(%y, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = arith.addf %a, %b : tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

// -----

// A convolution with its bias add and relu (NCHW, the layout PyTorch exports): one region.
#c = affine_map<(n, c, h, w) -> (c)>
#all = affine_map<(n, c, h, w) -> (n, c, h, w)>
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: "flow.return"
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @conv_bias_relu(%x: tensor<1x3x8x8xf32>, %f: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%acc : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = linalg.generic {indexing_maps = [#all, #c, #all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %b : tensor<1x4x6x6xf32>, tensor<4xf32>) outs(%e : tensor<1x4x6x6xf32>) {
  ^bb0(%in: f32, %bias: f32, %o: f32):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

// A row sum read back through a kept unit dimension (PyTorch's keepdim form, a constant-0
// index) by its sole user: a row-wise epilogue, one region.
#in = affine_map<(a, b, c) -> (a, b, c)>
#kept = affine_map<(a, b, c) -> (a, b, 0)>
// CHECK-LABEL: func.func @keepdim_division
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}} ins(%x, %[[SUM]] :
// CHECK: arith.divf
// CHECK: "flow.return"
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @keepdim_division(%x: tensor<2x5x16xf32>) -> tensor<2x5x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x5x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5x1xf32>) -> tensor<2x5x1xf32>
  %sum = linalg.generic {indexing_maps = [#in, #kept], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x5x16xf32>) outs(%acc : tensor<2x5x1xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %in, %a : f32
    linalg.yield %s : f32
  } -> tensor<2x5x1xf32>
  %full = tensor.empty() : tensor<2x5x16xf32>
  %y = linalg.generic {indexing_maps = [#in, #kept, #in], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %sum : tensor<2x5x16xf32>, tensor<2x5x1xf32>) outs(%full : tensor<2x5x16xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %d = arith.divf %in, %s : f32
    linalg.yield %d : f32
  } -> tensor<2x5x16xf32>
  return %y : tensor<2x5x16xf32>
}

// -----

// A matmul's consumer reading it at a projection of its index is no epilogue: a matmul's result
// is finished in place only.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_read_by_rows
// CHECK: %[[MM:.*]] = "flow.dispatch.region"() ({
// CHECK: linalg.matmul
// CHECK-NEXT: "flow.return"
// CHECK: "flow.dispatch.region"() ({
// CHECK-NOT: linalg.matmul
// CHECK: ins(%[[MM]] :
func.func @matmul_read_by_rows(%x: tensor<1x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<1x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<1x16xf32>) -> tensor<1x16xf32>
  %full = tensor.empty() : tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<1x16xf32>) outs(%full : tensor<4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
