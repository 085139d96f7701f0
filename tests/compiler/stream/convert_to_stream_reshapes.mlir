// Checks that reshapes and casts on the host cost nothing at run time: the result is the source's
// own resource under the new shape (no copy, no dispatch), its dynamic dims computed on the host.
// RUN: weir-opt --split-input-file --wrap-imports --wrap-entry-points --inline-internal-calls --convert-elementwise-to-linalg --decompose-pad-and-concat --form-dispatch-regions --outline-dispatch-regions --convert-executables-to-stream --convert-to-stream %s | filecheck %s

// A dynamic collapse of an argument read by a dispatch: the dispatch binds the imported resource.
// CHECK-LABEL: func.func @collapse(
// CHECK: %[[N:.*]] = "hal.buffer_view.dim"
// CHECK: %[[X:.*]] = "stream.tensor.import"(%{{.*}}, %[[N]])
// CHECK: arith.muli %[[N]]
// CHECK-NOT: stream.cmd.copy
// CHECK: "stream.cmd.dispatch"(%{{.*}}, %{{.*}}, %[[X]], %{{.*}})
// CHECK-NOT: tensor.collapse_shape
func.func @collapse(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<?x4xf32> into tensor<?xf32>
  %1 = math.absf %0 : tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// A dispatch's result expanded and cast, then exported: the export reads the dispatch's output
// resource with the final type.
// CHECK-LABEL: func.func @expand_and_cast(
// CHECK: %[[OUT:.*]], %{{.*}} = "stream.resource.alloca"
// CHECK: "stream.cmd.dispatch"
// CHECK-NOT: stream.cmd.copy
// CHECK: "stream.tensor.export"(%[[OUT]]{{.*}}) <{encoding = tensor<?x3xi32>
func.func @expand_and_cast(%x: tensor<6xi32>) -> tensor<?x3xi32> {
  %0 = arith.addi %x, %x : tensor<6xi32>
  %1 = tensor.expand_shape %0 [[0, 1]] output_shape [2, 3] : tensor<6xi32> into tensor<2x3xi32>
  %2 = tensor.cast %1 : tensor<2x3xi32> to tensor<?x3xi32>
  return %2 : tensor<?x3xi32>
}

// -----

// A reshape from a dynamic shape to a static one cannot be verified at compile time: the host
// compares element counts at run time and fails with the reshape's location.
// CHECK-LABEL: func.func @dynamic_to_static
// CHECK: %[[ROWS:.*]] = "hal.buffer_view.dim"
// CHECK: %[[COUNT:.*]] = arith.muli %[[ROWS]], %{{.*}} : index
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[COUNT]], %{{.*}} : index
// CHECK: cf.assert %[[SAME]], "{{.*}}convert_to_stream_reshapes.mlir:[[# @LINE + 4]]:3: 'tensor.reshape': the source's element count differs from the result's"
// CHECK-NOT: stream.cmd.dispatch
func.func @dynamic_to_static(%a: tensor<?x4xf32>) -> tensor<8xf32> {
  %s = arith.constant dense<[8]> : tensor<1xindex>
  %0 = tensor.reshape %a(%s) : (tensor<?x4xf32>, tensor<1xindex>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
