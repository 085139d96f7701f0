// Checks that every size equality a program implies but its types leave open becomes a
// util.assert_eq right before its op, whose message names the location, the op, the function and
// both sides; that equal-by-construction sizes get no check; and that sizes are never read off a
// value dispatch formation would fuse (only arguments and host results get a tensor.dim).
// RUN: weir-opt --split-input-file --insert-dynamic-size-checks %s | filecheck %s

// Elementwise operands of one dynamic shape: one check per dimension, before the op.
// CHECK-LABEL: func.func @add
// CHECK: %[[A:.*]] = tensor.dim %a, %{{.*}} : tensor<?xf32>
// CHECK: %[[B:.*]] = tensor.dim %b, %{{.*}} : tensor<?xf32>
// CHECK-NEXT: "util.assert_eq"(%[[A]], %[[B]]) <{message = "{{.*}}insert_dynamic_size_checks.mlir:[[# @LINE + 3]]:3: 'arith.addf' in @add: dimension 0 of operand 0 (%a) differs from dimension 0 of operand 1 (%b)"}> : (index, index) -> ()
// CHECK-NEXT: arith.addf %a, %b
func.func @add(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.addf %a, %b : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// A chain: the sum has %a's sizes (no tensor.dim of it, which would keep it out of its consumer's
// dispatch), a == b is known after the first check, so only %c is checked again.
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-2: "util.assert_eq"
// CHECK: %[[SUM:.*]] = arith.addf %a, %b
// CHECK-NOT: tensor.dim %[[SUM]]
// CHECK-NEXT: %[[PRODUCT:.*]] = arith.mulf %[[SUM]], %b
// CHECK-NEXT: "util.assert_eq"({{.*}}) <{message = "{{.*}}:[[# @LINE + 7]]:3: 'arith.subf' in @chain: dimension 0 of operand 0 (the result of 'arith.mulf' on line [[# @LINE + 6]]) differs from dimension 0 of operand 1 (%c)"}>
// CHECK-NEXT: "util.assert_eq"({{.*}}) <{message = "{{.*}}: dimension 1 of operand 0 {{.*}} differs from dimension 1 of operand 1 (%c)"}>
// CHECK-NEXT: arith.subf %[[PRODUCT]], %c
// CHECK-NOT: util.assert_eq
func.func @chain(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = arith.addf %a, %b : tensor<?x?xf32>
  %1 = arith.mulf %0, %b : tensor<?x?xf32>
  %2 = arith.subf %1, %c : tensor<?x?xf32>
  return %2 : tensor<?x?xf32>
}

// -----

// Static shapes need no check.
// CHECK-LABEL: func.func @static
// CHECK-NOT: util.assert_eq
// CHECK-NOT: tensor.dim
func.func @static(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A matmul whose output is sized from its operands' own tensor.dim: only the contraction
// dimension is open.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[K1:.*]] = tensor.dim %a, %{{.*}} : tensor<?x?xf32>
// CHECK: %[[K2:.*]] = tensor.dim %b, %{{.*}} : tensor<?x?xf32>
// CHECK: "util.assert_eq"(%[[K1]], %[[K2]]) <{message = "{{.*}}: 'linalg.matmul' in @matmul: dimension 1 of operand 0 (%a) differs from dimension 0 of operand 1 (%b)"}>
// CHECK-NOT: util.assert_eq
// CHECK: linalg.matmul
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A generic with a broadcasting map: the vector's one dimension is the matrix's columns; an
// output sized from host scalars is checked against the loops too.
// CHECK-LABEL: func.func @row_bias
// CHECK: "util.assert_eq"({{.*}}) <{message = "{{.*}}: 'linalg.generic' in @row_bias: dimension 1 of operand 0 (%a) differs from dimension 0 of operand 1 (%v)"}>
// CHECK-NEXT: "util.assert_eq"({{.*}}, %m) <{message = "{{.*}}: dimension 0 of operand 0 (%a) differs from dimension 0 of operand 2 (%e)"}>
// CHECK-NEXT: "util.assert_eq"({{.*}}, %n) <{message = "{{.*}}: dimension 1 of operand 0 (%a) differs from dimension 1 of operand 2 (%e)"}>
// CHECK-NEXT: linalg.generic
func.func @row_bias(%a: tensor<?x?xf32>, %v: tensor<?xf32>, %m: index, %n: index) -> tensor<?x?xf32> {
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %v : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// batch_matmul: the batch dimension against a static one, and the contraction dimension.
// CHECK-LABEL: func.func @batch_matmul
// CHECK: %[[BATCH:.*]] = tensor.dim %a, %{{.*}} : tensor<?x3x?xf32>
// CHECK: %[[K:.*]] = tensor.dim %a, %{{.*}} : tensor<?x3x?xf32>
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: "util.assert_eq"(%[[BATCH]], %[[TWO]]) <{message = "{{.*}}: dimension 0 of operand 0 (%a) differs from dimension 0 of operand 1 (%b)"}>
// CHECK: "util.assert_eq"(%[[K]], %{{.*}}) <{message = "{{.*}}: dimension 2 of operand 0 (%a) differs from dimension 1 of operand 1 (%b)"}>
func.func @batch_matmul(%a: tensor<?x3x?xf32>, %b: tensor<2x?x5xf32>, %o: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<?x3x?xf32>, tensor<2x?x5xf32>) outs(%o : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// A convolution's output rows and columns are what the input and the strided window give:
// max(in - span + stride, 0) / stride, computed on the host when the input size is dynamic.
// CHECK-LABEL: func.func @conv
// CHECK: %[[H:.*]] = tensor.dim %x, %{{.*}} : tensor<1x?x8x2xf32>
// CHECK: %[[OH:.*]] = tensor.dim %o, %{{.*}} : tensor<1x?x3x4xf32>
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ROOM:.*]] = arith.subi %[[H]], %[[ONE]] : index
// CHECK: %[[POSITIVE:.*]] = arith.maxsi %[[ROOM]], %{{.*}} : index
// CHECK: %[[ROWS:.*]] = arith.divui %[[POSITIVE]], %{{.*}} : index
// CHECK-NEXT: "util.assert_eq"(%[[OH]], %[[ROWS]]) <{message = "{{.*}}: 'linalg.conv_2d_nhwc_hwcf' in @conv: dimension 1 (H) of operand 2 (%o) differs from the H size operand 0 (%x) and operand 1 (%w) give it (stride 2, dilation 1)"}>
// CHECK-NOT: util.assert_eq
func.func @conv(%x: tensor<1x?x8x2xf32>, %w: tensor<3x3x2x4xf32>, %o: tensor<1x?x3x4xf32>) -> tensor<1x?x3x4xf32> {
  %0 = linalg.conv_2d_nhwc_hwcf {strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x?x8x2xf32>, tensor<3x3x2x4xf32>) outs(%o : tensor<1x?x3x4xf32>) -> tensor<1x?x3x4xf32>
  return %0 : tensor<1x?x3x4xf32>
}

// -----

// Transpose, broadcast and reduce pair their operands' dimensions as their attributes say.
// CHECK-LABEL: func.func @data_movement
// CHECK: "util.assert_eq"({{.*}}) <{message = "{{.*}}: 'linalg.transpose' in @data_movement: dimension 0 of operand 0 (%a) differs from dimension 1 of operand 1 (%t)"}>
// CHECK: "util.assert_eq"({{.*}}) <{message = "{{.*}}: 'linalg.broadcast' in @data_movement: dimension 0 of operand 0 (%v) differs from dimension 1 of operand 1 (%b)"}>
// CHECK: "util.assert_eq"({{.*}}) <{message = "{{.*}}: 'linalg.reduce' in @data_movement: dimension 0 of operand 0 (%a) differs from dimension 0 of operand 1 (%r)"}>
func.func @data_movement(%a: tensor<?x4xf32>, %t: tensor<4x?xf32>, %v: tensor<?xf32>, %b: tensor<3x?xf32>, %r: tensor<?xf32>) -> (tensor<4x?xf32>, tensor<3x?xf32>, tensor<?xf32>) {
  %0 = linalg.transpose ins(%a : tensor<?x4xf32>) outs(%t : tensor<4x?xf32>) permutation = [1, 0]
  %1 = linalg.broadcast ins(%v : tensor<?xf32>) outs(%b : tensor<3x?xf32>) dimensions = [0]
  %2 = linalg.reduce ins(%a : tensor<?x4xf32>) outs(%r : tensor<?xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %0, %1, %2 : tensor<4x?xf32>, tensor<3x?xf32>, tensor<?xf32>
}

// -----

// Slices: a dynamic slice size against a static result, a source against the window it fills.
// CHECK-LABEL: func.func @slices
// CHECK: "util.assert_eq"(%n, %{{.*}}) <{message = "{{.*}}: 'tensor.extract_slice' in @slices: size 0 of the slice differs from dimension 0 of the result type"}>
// CHECK: "util.assert_eq"({{.*}}, %n) <{message = "{{.*}}: 'tensor.insert_slice' in @slices: dimension 0 of operand 0 (%s) differs from size 0 of the slice"}>
func.func @slices(%a: tensor<?xf32>, %s: tensor<?xf32>, %n: index) -> (tensor<4xf32>, tensor<?xf32>) {
  %0 = tensor.extract_slice %a[0] [%n] [1] : tensor<?xf32> to tensor<4xf32>
  %1 = tensor.insert_slice %s into %a[1] [%n] [1] : tensor<?xf32> into tensor<?xf32>
  return %0, %1 : tensor<4xf32>, tensor<?xf32>
}

// -----

// Concat: the operands agree off the axis, a static result is their sum along it.
// CHECK-LABEL: func.func @concat
// CHECK: %[[SUM:.*]] = arith.addi
// CHECK-NEXT: "util.assert_eq"({{.*}}) <{message = "{{.*}}: 'tensor.concat' in @concat: dimension 1 of operand 0 (%a) differs from dimension 1 of operand 1 (%b)"}>
// CHECK: "util.assert_eq"(%[[SUM]], %{{.*}}) <{message = "{{.*}}: the sum of dimension 0 of the operands differs from dimension 0 of the result type"}>
func.func @concat(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<6x?xf32> {
  %0 = tensor.concat dim(0) %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<6x?xf32>
  return %0 : tensor<6x?xf32>
}

// -----

// Reshapes: an expansion's groups, a reshape's element count.
// CHECK-LABEL: func.func @reshapes
// CHECK: %[[PRODUCT:.*]] = arith.muli %n, %{{.*}} : index
// CHECK-NEXT: "util.assert_eq"(%{{.*}}, %[[PRODUCT]]) <{message = "{{.*}}: 'tensor.expand_shape' in @reshapes: dimension 0 of operand 0 (%a) differs from the product of result dimensions 0, 1"}>
// CHECK: "util.assert_eq"({{.*}}) <{message = "{{.*}}: 'tensor.reshape' in @reshapes: the element count of operand 0 (%a) differs from the result's"}>
func.func @reshapes(%a: tensor<?xf32>, %n: index) -> (tensor<?x4xf32>, tensor<2x4xf32>) {
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [%n, 4] : tensor<?xf32> into tensor<?x4xf32>
  %s = arith.constant dense<[2, 4]> : tensor<2xindex>
  %1 = tensor.reshape %a(%s) : (tensor<?xf32>, tensor<2xindex>) -> tensor<2x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<2x4xf32>
}

// -----

// A cast to a static dimension; a later cast of the same value needs no second check.
// CHECK-LABEL: func.func @cast
// CHECK: "util.assert_eq"({{.*}}) <{message = "{{.*}}: 'tensor.cast' in @cast: dimension 0 of operand 0 (%a) differs from dimension 0 of the result type"}>
// CHECK-NOT: util.assert_eq
// CHECK: func.return
func.func @cast(%a: tensor<?x4xf32>) -> (tensor<2x4xf32>, tensor<2x?xf32>) {
  %0 = tensor.cast %a : tensor<?x4xf32> to tensor<2x4xf32>
  %1 = tensor.cast %a : tensor<?x4xf32> to tensor<2x?xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x?xf32>
}

// -----

// A call's result has the sizes of the callee's argument it is computed from, so it needs no
// tensor.dim (after inlining, that would read the callee's elementwise result).
// CHECK-LABEL: func.func @caller
// CHECK: %[[A:.*]] = tensor.dim %a, %{{.*}} : tensor<?xf32>
// CHECK: %[[C:.*]] = tensor.dim %c, %{{.*}} : tensor<?xf32>
// CHECK: %[[CALL:.*]] = func.call @helper
// CHECK-NOT: tensor.dim %[[CALL]]
// CHECK: "util.assert_eq"(%[[A]], %[[C]]) <{message = "{{.*}}: 'arith.mulf' in @caller: dimension 0 of operand 0 (%sum) differs from dimension 0 of operand 1 (%c)"}>
func.func @helper(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.addf %a, %b : tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @caller(%a: tensor<?xf32>, %b: tensor<?xf32>, %c: tensor<?xf32>) -> tensor<?xf32> {
  %sum = func.call @helper(%a, %b) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %0 = arith.mulf %sum, %c : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Inside a loop: the carried tensor's sizes are read at the start of the body, the check runs
// in every iteration.
// CHECK-LABEL: func.func @loop
// CHECK: %[[B:.*]] = tensor.dim %b
// CHECK: scf.for
// CHECK-NEXT: %{{.*}} = arith.constant 0 : index
// CHECK-NEXT: %[[ACC:.*]] = tensor.dim %acc
// CHECK-NEXT: "util.assert_eq"(%[[ACC]], %[[B]]) <{message = "{{.*}}:[[# @LINE + 5]]:5: 'arith.addf' in @loop: dimension 0 of operand 0 (%acc) differs from dimension 0 of operand 1 (%b)"}>
func.func @loop(%a: tensor<?xf32>, %b: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<?xf32>) {
    %s = arith.addf %acc, %b : tensor<?xf32>
    scf.yield %s : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// -----

// A transfer states its source's dynamic sizes; they must be the source's own.
// CHECK-LABEL: func.func @transfer
// CHECK: %[[A:.*]] = tensor.dim %a
// CHECK: "util.assert_eq"(%[[A]], %n) <{message = "{{.*}}: 'flow.tensor.transfer' in @transfer: dimension 0 of operand 0 (%a) differs from size 0 of the transfer's {...}"}>
// CHECK-NEXT: flow.tensor.transfer
func.func @transfer(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %b = flow.tensor.transfer %a : tensor<?xf32>{%n} to #hal.device.promise<@device_b>
  return %b : tensor<?xf32>
}
