// Checks that a dispatch region whose only reader is a region reducing the same rows, and
// reading it at the row it computes, joins that region (a softmax's max and exponentials with
// its sum and division; a keepdim reshape of the row values between them), and that regions
// stay apart when the result has another user, is read at another row, or the rows differ.
// RUN: weir-opt --split-input-file --fuse-row-reductions %s | filecheck %s

// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%x
// CHECK: arith.maximumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%x, %[[MAX]] :
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] :
// CHECK: arith.addf
// CHECK: %[[DIV:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] :
// CHECK: arith.divf
// CHECK: "flow.return"(%[[DIV]])
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %exp = "flow.dispatch.region"() ({
    %lowest = arith.constant -3.40282347e+38 : f32
    %rows = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%lowest : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
    %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    } -> tensor<4xf32>
    %full = tensor.empty() : tensor<4x8xf32>
    %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<4x8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %s = arith.subf %in, %m : f32
      %v = math.exp %s : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    "flow.return"(%e) : (tensor<4x8xf32>) -> ()
  }) : () -> tensor<4x8xf32>
  %0 = "flow.dispatch.region"() ({
    %zero = arith.constant 0.000000e+00 : f32
    %rows = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%zero : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
    %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %full = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%full : tensor<4x8xf32>) {
    ^bb0(%v: f32, %s: f32, %out: f32):
      %d = arith.divf %v, %s : f32
      linalg.yield %d : f32
    } -> tensor<4x8xf32>
    "flow.return"(%1) : (tensor<4x8xf32>) -> ()
  }) : () -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// -----

// A mean over rows of a 3-D tensor, kept as 2x3x1, then read through a reshape to 2x3 by the
// region that reduces the squared deviations: the reshape keeps each row's values in its row.
// CHECK-LABEL: func.func @centred_squares
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%x
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[MEAN]]
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%x, %[[FLAT]] :
// CHECK: "flow.return"(%[[SQ]])
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @centred_squares(%x: tensor<2x3x16xf32>) -> tensor<2x3xf32> {
  %mean = "flow.dispatch.region"() ({
    %zero = arith.constant 0.000000e+00 : f32
    %e = tensor.empty() : tensor<2x3x1xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x3x16xf32>) outs(%init : tensor<2x3x1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } -> tensor<2x3x1xf32>
    "flow.return"(%m) : (tensor<2x3x1xf32>) -> ()
  }) : () -> tensor<2x3x1xf32>
  %0 = "flow.dispatch.region"() ({
    %zero = arith.constant 0.000000e+00 : f32
    %flat = tensor.collapse_shape %mean [[0], [1, 2]] : tensor<2x3x1xf32> into tensor<2x3xf32>
    %e = tensor.empty() : tensor<2x3xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
    %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %flat : tensor<2x3x16xf32>, tensor<2x3xf32>) outs(%init : tensor<2x3xf32>) {
    ^bb0(%in: f32, %m: f32, %acc: f32):
      %d = arith.subf %in, %m : f32
      %q = arith.mulf %d, %d : f32
      %s = arith.addf %q, %acc : f32
      linalg.yield %s : f32
    } -> tensor<2x3xf32>
    "flow.return"(%sq) : (tensor<2x3xf32>) -> ()
  }) : () -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// The row maxima are also a result of the function: they stay in a region of their own.
// CHECK-LABEL: func.func @shared
// CHECK-NEXT: %[[MAX:.*]] = "flow.dispatch.region"() ({
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = "flow.dispatch.region"() ({
// CHECK: ins(%x, %[[MAX]] :
// CHECK: func.return %[[SUM]], %[[MAX]]
func.func @shared(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %max = "flow.dispatch.region"() ({
    %lowest = arith.constant -3.40282347e+38 : f32
    %rows = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%lowest : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %v = arith.maximumf %in, %acc : f32
      linalg.yield %v : f32
    } -> tensor<4xf32>
    "flow.return"(%m) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  %0 = "flow.dispatch.region"() ({
    %zero = arith.constant 0.000000e+00 : f32
    %rows = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%zero : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %max : tensor<4x8xf32>, tensor<4xf32>) outs(%init : tensor<4xf32>) {
    ^bb0(%in: f32, %m: f32, %acc: f32):
      %d = arith.subf %in, %m : f32
      %v = arith.addf %d, %acc : f32
      linalg.yield %v : f32
    } -> tensor<4xf32>
    "flow.return"(%s) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  func.return %0, %max : tensor<4xf32>, tensor<4xf32>
}

// -----

// The second reduction reads the exponentials transposed (its row d0 is their column): a row
// of its result needs every row of theirs, so the regions stay apart.
// CHECK-LABEL: func.func @other_row
// CHECK-NEXT: %[[EXP:.*]] = "flow.dispatch.region"() ({
// CHECK: "flow.return"
// CHECK: %[[SUM:.*]] = "flow.dispatch.region"() ({
// CHECK: ins(%[[EXP]] :
// CHECK: func.return %[[SUM]]
func.func @other_row(%x: tensor<8x8xf32>) -> tensor<8xf32> {
  %exp = "flow.dispatch.region"() ({
    %lowest = arith.constant -3.40282347e+38 : f32
    %rows = tensor.empty() : tensor<8xf32>
    %init = linalg.fill ins(%lowest : f32) outs(%rows : tensor<8xf32>) -> tensor<8xf32>
    %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x8xf32>) outs(%init : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    } -> tensor<8xf32>
    %full = tensor.empty() : tensor<8x8xf32>
    %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<8x8xf32>, tensor<8xf32>) outs(%full : tensor<8x8xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %s = arith.subf %in, %m : f32
      %v = math.exp %s : f32
      linalg.yield %v : f32
    } -> tensor<8x8xf32>
    "flow.return"(%e) : (tensor<8x8xf32>) -> ()
  }) : () -> tensor<8x8xf32>
  %0 = "flow.dispatch.region"() ({
    %zero = arith.constant 0.000000e+00 : f32
    %rows = tensor.empty() : tensor<8xf32>
    %init = linalg.fill ins(%zero : f32) outs(%rows : tensor<8xf32>) -> tensor<8xf32>
    %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<8x8xf32>) outs(%init : tensor<8xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    "flow.return"(%sum) : (tensor<8xf32>) -> ()
  }) : () -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

// Rows of different sizes: maxima of a 4x8 tensor's rows, then sums of 2 rows of 16.
// CHECK-LABEL: func.func @other_rows
// CHECK-COUNT-2: "flow.dispatch.region"
func.func @other_rows(%x: tensor<4x8xf32>) -> tensor<2xf32> {
  %max = "flow.dispatch.region"() ({
    %lowest = arith.constant -3.40282347e+38 : f32
    %rows = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%lowest : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %v = arith.maximumf %in, %acc : f32
      linalg.yield %v : f32
    } -> tensor<4xf32>
    "flow.return"(%m) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  %0 = "flow.dispatch.region"() ({
    %zero = arith.constant 0.000000e+00 : f32
    %pairs = tensor.expand_shape %max [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
    %rows = tensor.empty() : tensor<2xf32>
    %init = linalg.fill ins(%zero : f32) outs(%rows : tensor<2xf32>) -> tensor<2xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%pairs : tensor<2x2xf32>) outs(%init : tensor<2xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %v = arith.addf %in, %acc : f32
      linalg.yield %v : f32
    } -> tensor<2xf32>
    "flow.return"(%s) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

// linalg.reduce over the trailing dimension, its result broadcast back along it: both keep the
// row, so the maximum's region joins the one that subtracts and sums.
// CHECK-LABEL: func.func @reduce_and_broadcast
// CHECK-NEXT: %[[R:.*]] = "flow.dispatch.region"() ({
// CHECK: %[[MAX:.*]] = linalg.reduce ins(%x
// CHECK: %[[B:.*]] = linalg.broadcast ins(%[[MAX]]
// CHECK: %[[S:.*]] = linalg.reduce ins(%{{.*}} :
// CHECK: "flow.return"(%[[S]])
// CHECK-NEXT: })
// CHECK-NEXT: func.return %[[R]]
func.func @reduce_and_broadcast(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %max = "flow.dispatch.region"() ({
    %lowest = arith.constant 0xFF800000 : f32
    %rows = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%lowest : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
    %m = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
      (%a: f32, %acc: f32) {
        %v = arith.maximumf %a, %acc : f32
        linalg.yield %v : f32
      }
    "flow.return"(%m) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  %0 = "flow.dispatch.region"() ({
    %zero = arith.constant 0.000000e+00 : f32
    %full = tensor.empty() : tensor<4x8xf32>
    %b = linalg.broadcast ins(%max : tensor<4xf32>) outs(%full : tensor<4x8xf32>) dimensions = [1]
    %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%full : tensor<4x8xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %v = arith.subf %in, %m : f32
      linalg.yield %v : f32
    } -> tensor<4x8xf32>
    %rows = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%zero : f32) outs(%rows : tensor<4xf32>) -> tensor<4xf32>
    %s = linalg.reduce ins(%d : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
      (%a: f32, %acc: f32) {
        %v = arith.addf %a, %acc : f32
        linalg.yield %v : f32
      }
    "flow.return"(%s) : (tensor<4xf32>) -> ()
  }) : () -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
