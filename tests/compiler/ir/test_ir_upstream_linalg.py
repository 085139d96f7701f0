"""linalg as upstream MLIR prints it (torch-mlir, `iree-compile --compile-to=input`): several
results `-> (T, U)`, `indexing_maps = [...]` on matmul and batch_matmul, linalg.map and
linalg.reduce in their short and long forms (the mapper taking the output's element, as MLIR's
does since late 2025, or not), traits given as an alias, and the generic form of each op."""

from __future__ import annotations

import re

import pytest

from upstream_forms import in_function, round_trip
from weir.dialects import linalg_ext
from weir.errors import CompileError
from weir.ir import parse_module, print_module

ID2 = "affine_map<(d0, d1) -> (d0, d1)>"
ROW = "affine_map<(d0, d1) -> (d0)>"


def test_generic_with_several_results() -> None:
    text = round_trip(in_function(f"""
%e = tensor.empty() : tensor<2xf32>
%ei = tensor.empty() : tensor<2xi32>
%0:2 = linalg.generic {{indexing_maps = [{ID2}, {ROW}, {ROW}], iterator_types = ["parallel", "reduction"]}} ins(%m : tensor<2x3xf32>) outs(%e, %ei : tensor<2xf32>, tensor<2xi32>) {{
^bb0(%in: f32, %out: f32, %out_0: i32):
  %k = linalg.index 1 : index
  %ki = arith.index_cast %k : index to i32
  %gt = arith.cmpf ogt, %in, %out : f32
  %v = arith.select %gt, %in, %out : f32
  %w = arith.select %gt, %ki, %out_0 : i32
  linalg.yield %v, %w : f32, i32
}} -> (tensor<2xf32>, tensor<2xi32>)
"""))
    assert "} -> (tensor<2xf32>, tensor<2xi32>)" in text


def test_generic_traits_as_an_alias_and_attrs_after_outs() -> None:
    src = f"""
#trait = {{indexing_maps = [{ID2}, affine_map<(d0, d1) -> ()>, {ID2}],
          iterator_types = ["parallel", "parallel"], library_call = "ext_fn", my.extra = 3 : i32}}
func.func @f(%a: tensor<2x3xf32>, %o: tensor<2x3xf32>) -> tensor<2x3xf32> {{
  %cst = arith.constant 1.0 : f32
  %0 = linalg.generic #trait ins(%a, %cst : tensor<2x3xf32>, f32) outs(%o : tensor<2x3xf32>) attrs = {{my.more}} {{
  ^bb(%x: f32, %y: f32, %z: f32) :
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }} -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}}
"""
    text = round_trip(src)
    assert 'library_call = "ext_fn"' in text
    assert "my.extra = 3 : i32" in text and "my.more" in text


def test_generic_traits_alias_that_is_not_a_dictionary() -> None:
    src = in_function(f"""
%0 = linalg.generic #maps outs(%m : tensor<2x3xf32>) {{
^bb0(%out: f32):
  linalg.yield %out : f32
}} -> tensor<2x3xf32>""")
    with pytest.raises(CompileError, match=r"g\.mlir:5:23: error: linalg\.generic: expected a "
                                           r"dictionary of its traits"):
        parse_module(f"#maps = [{ID2}]\n" + src, "g.mlir")


# ---------------------------------------------------------------------------- contractions

MATMUL_T = ("[affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
            "affine_map<(d0, d1, d2) -> (d0, d1)>]")
BMM_DEFAULT = ("[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, "
               "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, "
               "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]")
BMM_T = ("[affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, "
         "affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, "
         "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]")


def test_matmul_with_indexing_maps() -> None:
    text = round_trip(in_function(f"""
%0 = linalg.matmul indexing_maps = {MATMUL_T} ins(%mt, %mt : tensor<3x2xf32>, tensor<3x2xf32>) outs(%sq : tensor<2x2xf32>) -> tensor<2x2xf32>
"""))
    assert f"linalg.matmul indexing_maps = {MATMUL_T} ins(" in text


@pytest.mark.parametrize(("maps", "rhs"), [
    (BMM_T, "tensor<4x5x3xf32>"),  # both operands transposed
    (BMM_T.replace("(d0, d2, d3)", "(d2, d3)"), "tensor<5x3xf32>"),  # rhs broadcast over batches
])
def test_batch_matmul_with_indexing_maps(maps: str, rhs: str) -> None:
    src = f"""
func.func @f(%a: tensor<4x3x2xf32>, %b: {rhs}, %c: tensor<4x2x5xf32>) -> tensor<4x2x5xf32> {{
  %0 = linalg.batch_matmul indexing_maps = {maps} ins(%a, %b : tensor<4x3x2xf32>, {rhs}) outs(%c : tensor<4x2x5xf32>) -> tensor<4x2x5xf32>
  return %0 : tensor<4x2x5xf32>
}}
"""
    text = round_trip(src)
    assert f"linalg.batch_matmul indexing_maps = {maps} ins(" in text
    (op,) = [o for o in parse_module(src).walk() if isinstance(o, linalg_ext.BatchMatmulOp)]
    assert op.has_explicit_maps()


def test_batch_matmul_with_its_own_maps_prints_none() -> None:
    src = """
func.func @f(%a: tensor<4x2x3xf32>, %b: tensor<4x3x5xf32>, %c: tensor<4x2x5xf32>) -> tensor<4x2x5xf32> {
  %0 = linalg.batch_matmul indexing_maps = MAPS ins(%a, %b : tensor<4x2x3xf32>, tensor<4x3x5xf32>) outs(%c : tensor<4x2x5xf32>) -> tensor<4x2x5xf32>
  return %0 : tensor<4x2x5xf32>
}
""".replace("MAPS", BMM_DEFAULT)
    text = round_trip(src)
    assert "linalg.batch_matmul ins(%a, %b" in text


def test_batch_matmul_maps_are_checked_against_the_shapes() -> None:
    src = """
func.func @f(%a: tensor<4x3x2xf32>, %b: tensor<4x5x4xf32>, %c: tensor<4x2x5xf32>) -> tensor<4x2x5xf32> {
  %0 = linalg.batch_matmul indexing_maps = MAPS ins(%a, %b : tensor<4x3x2xf32>, tensor<4x5x4xf32>) outs(%c : tensor<4x2x5xf32>) -> tensor<4x2x5xf32>
  return %0 : tensor<4x2x5xf32>
}
""".replace("MAPS", BMM_T)
    with pytest.raises(CompileError, match=r"b\.mlir:3:3: error: 'linalg\.batch_matmul' op size "
                                           r"of K differs: lhs dimension 1 is 3, rhs dimension 2 "
                                           r"is 4$"):
        parse_module(src, "b.mlir")


def test_other_contractions_take_only_their_own_maps() -> None:
    own = ("[affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, "
           "affine_map<(d0, d1) -> (d0)>]")
    line = ("%0 = linalg.matvec indexing_maps = MAPS ins(%m, %r3 : tensor<2x3xf32>, "
            "tensor<3xf32>) outs(%r : tensor<2xf32>) -> tensor<2xf32>")
    body = "%r3 = tensor.empty() : tensor<3xf32>\n" + line
    assert "linalg.matvec ins(" in round_trip(in_function(body.replace("MAPS", own)))
    other = own.replace("(d0, d1) -> (d0, d1)>", "(d0, d1) -> (d1, d0)>")
    with pytest.raises(CompileError, match=r"m\.mlir:5:22: error: linalg\.matvec takes no "
                                           r"indexing_maps other than its own"):
        parse_module(in_function(body.replace("MAPS", other)), "m.mlir")


def test_named_op_on_tensors_without_its_result_type() -> None:
    """MLIR prints `-> tensor<...>` after a named op on tensors; without it the op has no
    result, which the `%0 =` cannot bind."""
    src = in_function("%0 = linalg.matmul ins(%m, %mt : tensor<2x3xf32>, tensor<3x2xf32>) "
                      "outs(%sq : tensor<2x2xf32>)")
    with pytest.raises(CompileError, match=r"n\.mlir:4:3: error: Operation has 0 results, but "
                                           r"was given 1 to bind"):
        parse_module(src, "n.mlir")


# ------------------------------------------------------------------------------ map, reduce


@pytest.mark.parametrize("mapper", ["(%in: f32, %in_0: f32, %init: f32)",
                                    "(%in: f32, %in_0: f32)"])
def test_map_long_form_with_and_without_the_output_argument(mapper: str) -> None:
    text = round_trip(in_function(f"""
%0 = linalg.map ins(%m, %m : tensor<2x3xf32>, tensor<2x3xf32>) outs(%m : tensor<2x3xf32>)
  {mapper} {{
    %1 = arith.mulf %in, %in_0 : f32
    %2 = arith.addf %1, %in : f32
    linalg.yield %2 : f32
  }}
"""))
    printed = re.search(r"\n    \((%\w+: f32(, )?)+\) \{", text)
    assert printed is not None and printed.group(0).count(": f32") == mapper.count(": f32")


def test_map_short_form_with_payload_attributes_and_no_inputs() -> None:
    text = round_trip(in_function("""
%0 = linalg.map { arith.addf {fastmath = #arith.fastmath<fast>} } ins(%m, %m : tensor<2x3xf32>, tensor<2x3xf32>) outs(%m : tensor<2x3xf32>)
%1 = linalg.map { math.absf } ins(%r : tensor<2xf32>) outs(%r : tensor<2xf32>) {my.attr}
%2 = linalg.map outs(%r : tensor<2xf32>)
  (%init: f32) {
    %c = arith.constant 2.0 : f32
    linalg.yield %c : f32
  }
"""))
    assert ("linalg.map { arith.addf {fastmath = #arith.fastmath<fast>} } ins(%m, %m : "
            "tensor<2x3xf32>, tensor<2x3xf32>) outs(%m : tensor<2x3xf32>)") in text
    assert "linalg.map { math.absf } ins(%r : tensor<2xf32>) outs(%r : tensor<2xf32>) " \
           "{my.attr}" in text
    assert "linalg.map outs(%r : tensor<2xf32>)\n    (%init: f32) {" in text


def test_map_short_form_stands_for_the_op_on_the_inputs() -> None:
    module = parse_module(in_function(
        "%0 = linalg.map { arith.subf } ins(%m, %m : tensor<2x3xf32>, tensor<2x3xf32>) "
        "outs(%m : tensor<2x3xf32>)"))
    (op,) = [o for o in module.walk() if isinstance(o, linalg_ext.MapOp)]
    args = op.mapper.block.args
    assert len(args) == 3 and op.has_init_argument()
    sub = op.mapper.block.first_op
    assert sub is not None and sub.name == "arith.subf"
    assert list(sub.operands) == [args[0], args[1]]


@pytest.mark.parametrize(("mapper", "message"), [
    ("(%in: f32, %in_0: f32, %init: f32, %extra: f32)",
     "the mapper takes 4 argument\\(s\\) for 2 input\\(s\\)"),
    ("(%in: f32, %in_0: f32, %init: i32)",
     "mapper argument #2 has type i32, the element type of the output is f32"),
])
def test_map_mapper_arguments_are_checked(mapper: str, message: str) -> None:
    src = in_function(f"""
%0 = linalg.map ins(%m, %m : tensor<2x3xf32>, tensor<2x3xf32>) outs(%m : tensor<2x3xf32>)
  {mapper} {{
    linalg.yield %in : f32
  }}""")
    with pytest.raises(CompileError, match=rf"a\.mlir:4:3: error: 'linalg\.map' op {message}"):
        parse_module(src, "a.mlir")


def test_reduce_forms() -> None:
    text = round_trip(in_function("""
%0 = linalg.reduce ins(%m : tensor<2x3xf32>) outs(%r : tensor<2xf32>) dimensions = [1] {my.attr}
  (%in: f32, %init: f32) {
    %1 = arith.mulf %in, %init : f32
    linalg.yield %1 : f32
  }
%2 = linalg.reduce { arith.maxnumf {fastmath = #arith.fastmath<nnan>} } ins(%m : tensor<2x3xf32>) outs(%r : tensor<2xf32>) dimensions = [1]
"""))
    assert "dimensions = [1] {my.attr}\n    (%in: f32, %init: f32) {" in text
    assert "linalg.reduce { arith.maxnumf {fastmath = #arith.fastmath<nnan>} } ins(" in text


def test_reduce_short_form_applies_its_op_to_the_accumulator_first() -> None:
    """MLIR builds `linalg.reduce { arith.subf }` as subf(accumulator, element), and prints a
    long form as the short one only when its body is exactly that."""
    module = parse_module(in_function(
        "%0 = linalg.reduce { arith.subf } ins(%m : tensor<2x3xf32>) outs(%r : tensor<2xf32>) "
        "dimensions = [1]"))
    (op,) = [o for o in module.walk() if isinstance(o, linalg_ext.ReduceOp)]
    element, accumulator = op.region.block.args
    sub = op.region.block.first_op
    assert sub is not None and list(sub.operands) == [accumulator, element]
    long_form = in_function("""
%0 = linalg.reduce ins(%m : tensor<2x3xf32>) outs(%r : tensor<2xf32>) dimensions = [1]
  (%in: f32, %init: f32) {
    %1 = arith.subf %init, %in : f32
    linalg.yield %1 : f32
  }
%2 = linalg.reduce ins(%m : tensor<2x3xf32>) outs(%r : tensor<2xf32>) dimensions = [1]
  (%in: f32, %init: f32) {
    %3 = arith.subf %in, %init : f32
    linalg.yield %3 : f32
  }""")
    text = round_trip(long_form)
    assert text.count("linalg.reduce { arith.subf } ins(") == 1
    assert text.count("linalg.reduce ins(") == 1


def test_transpose_and_broadcast_with_trailing_attributes() -> None:
    text = round_trip(in_function("""
%0 = linalg.transpose ins(%m : tensor<2x3xf32>) outs(%mt : tensor<3x2xf32>) permutation = [1, 0] {my.attr}
%1 = linalg.broadcast ins(%r : tensor<2xf32>) outs(%sq : tensor<2x2xf32>) dimensions = [1] {my.other = 2 : i32}
"""))
    assert "permutation = [1, 0] {my.attr}" in text
    assert "dimensions = [1] {my.other = 2 : i32}" in text


# ------------------------------------------------------------------------------ generic forms

GENERIC_FORMS = {
    "generic": f"""
%0 = "linalg.generic"(%m, %m) <{{indexing_maps = [{ID2}, {ID2}], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 1, 1>}}> ({{
^bb0(%in: f32, %out: f32):
  %1 = "arith.negf"(%in) <{{fastmath = #arith.fastmath<none>}}> : (f32) -> f32
  "linalg.yield"(%1) : (f32) -> ()
}}) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>""",
    "matmul with memoized maps": """
%0 = "linalg.matmul"(%m, %mt, %sq) <{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], operandSegmentSizes = array<i32: 2, 1>}> ({
^bb0(%in: f32, %in_0: f32, %out: f32):
  %1 = "arith.mulf"(%in, %in_0) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
  %2 = "arith.addf"(%out, %1) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
  "linalg.yield"(%2) : (f32) -> ()
}) {linalg.memoized_indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]} : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>""",
    "fill": """
%0 = "linalg.fill"(%x, %sq) <{operandSegmentSizes = array<i32: 1, 1>}> ({
^bb0(%in: f32, %out: f32):
  "linalg.yield"(%in) : (f32) -> ()
}) : (f32, tensor<2x2xf32>) -> tensor<2x2xf32>""",
    "map with the output argument": """
%0 = "linalg.map"(%m, %m) ({
^bb0(%in: f32, %init: f32):
  %1 = "math.exp"(%in) <{fastmath = #arith.fastmath<none>}> : (f32) -> f32
  "linalg.yield"(%1) : (f32) -> ()
}) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>""",
    "reduce": """
%0 = "linalg.reduce"(%m, %r) <{dimensions = array<i64: 1>}> ({
^bb0(%in: f32, %init: f32):
  %1 = "arith.addf"(%in, %init) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
  "linalg.yield"(%1) : (f32) -> ()
}) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2xf32>""",
    "transpose": """
%0 = "linalg.transpose"(%m, %mt) <{permutation = array<i64: 1, 0>}> ({
^bb0(%in: f32, %init: f32):
  "linalg.yield"(%in) : (f32) -> ()
}) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>""",
    "softmax": '%0 = "linalg.softmax"(%sq, %sq) <{dimension = 1 : i64}> : '
               "(tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>",
    "tensor ops with segment sizes": """
%0 = "tensor.extract_slice"(%m, %n) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>, static_offsets = array<i64: -9223372036854775808, 0>, static_sizes = array<i64: 1, 3>, static_strides = array<i64: 1, 1>}> : (tensor<2x3xf32>, index) -> tensor<1x3xf32>
%1 = "tensor.expand_shape"(%d, %n) <{reassociation = [[0, 1], [2]], static_output_shape = array<i64: -9223372036854775808, 1, 3>}> : (tensor<?x3xf32>, index) -> tensor<?x1x3xf32>
%2 = "tensor.pad"(%m) <{nofold, operandSegmentSizes = array<i32: 1, 0, 0>, static_high = array<i64: 1, 0>, static_low = array<i64: 0, 1>}> ({
^bb0(%p: index, %q: index):
  "tensor.yield"(%x) : (f32) -> ()
}) : (tensor<2x3xf32>) -> tensor<3x4xf32>""",
    "scf": """
%0 = "scf.if"(%b) ({
  "scf.yield"(%x) : (f32) -> ()
}, {
  "scf.yield"(%y) : (f32) -> ()
}) : (i1) -> f32
%1 = "scf.index_switch"(%n) <{cases = array<i64: 2>}> ({
  "scf.yield"(%x) : (f32) -> ()
}, {
  "scf.yield"(%y) : (f32) -> ()
}) : (index) -> f32""",
    "arith with properties": """
%0 = "arith.cmpi"(%i, %j) <{predicate = 2 : i64}> : (i32, i32) -> i1
%1 = "arith.addi"(%i, %j) <{overflowFlags = #arith.overflow<nsw>}> : (i32, i32) -> i32
%2 = "arith.constant"() <{value = dense<1.5> : tensor<2xf32>}> : () -> tensor<2xf32>""",
}


@pytest.mark.parametrize("body", GENERIC_FORMS.values(), ids=GENERIC_FORMS.keys())
def test_generic_forms(body: str) -> None:
    round_trip(in_function(body))


@pytest.mark.parametrize(("body", "message"), [
    ('%0 = "linalg.transpose"(%m, %mt) ({\n^bb0(%in: f32, %init: f32):\n'
     '  "linalg.yield"(%in) : (f32) -> ()\n}) : (tensor<2x3xf32>, tensor<3x2xf32>) -> '
     "tensor<3x2xf32>",
     "'linalg.transpose' op requires the property 'permutation'"),
    ('%0 = "linalg.fill"(%x, %sq) ({\n^bb0(%in: f32, %out: f32):\n'
     '  "linalg.yield"(%in) : (f32) -> ()\n}) : (f32, tensor<2x2xf32>) -> tensor<2x2xf32>',
     "'linalg.fill' op requires 'operandSegmentSizes' in its properties"),
    ('%0 = "linalg.reduce"(%m) <{dimensions = array<i64: 1>}> ({\n^bb0(%in: f32):\n'
     '  "linalg.yield"(%in) : (f32) -> ()\n}) : (tensor<2x3xf32>) -> tensor<2xf32>',
     "'linalg.reduce' op Expected 2 operands, but got 1"),
])
def test_generic_form_of_the_wrong_shape_is_named(body: str, message: str) -> None:
    """Before: a KeyError or IndexError from the code that read the op, reported as the op
    having "failed to verify" with the missing key or "tuple index out of range"."""
    with pytest.raises(CompileError, match=rf"^s\.mlir:4:3: error: {message}"):
        parse_module(in_function(body), "s.mlir")


def test_generic_form_of_a_convolution_takes_unit_strides_by_default() -> None:
    text = round_trip(in_function("""
%in = tensor.empty() : tensor<1x4x4x1xf32>
%fl = tensor.empty() : tensor<3x3x1x1xf32>
%o = tensor.empty() : tensor<1x2x2x1xf32>
%0 = "linalg.conv_2d_nhwc_hwcf"(%in, %fl, %o) <{operandSegmentSizes = array<i32: 2, 1>}> ({
^bb0(%a: f32, %f: f32, %c: f32):
  "linalg.yield"(%c) : (f32) -> ()
}) : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>"""))
    assert "strides = dense<1> : tensor<2xi64>" in text
