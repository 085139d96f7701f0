"""MLIR as upstream MLIR prints it, for the ops weir accepts (func, arith, math, tensor, linalg,
scf, cf, and IREE's util.func): each printed form parses, prints, and parses back to the same
text, in the custom form, the generic form and with locations. The snippets are weir's own,
written in the forms MLIR's printer produces (at the LLVM IREE 3.x builds with)."""

from __future__ import annotations

import pytest

from upstream_forms import in_function, round_trip
from weir.errors import CompileError
from weir.ir import parse_module, print_module

FUNC_FORMS = {
    "declaration with argument and result attributes": """
func.func private @decl(f32 {my.arg}, tensor<4xf32>) -> (f32 {my.res = 1 : i32})
func.func private @plain(i32) -> i32
""",
    "visibility, attributes, named arguments with attributes": """
func.func public @f(%a: f32 {my.arg}, %b: tensor<2xf32>) -> (f32, tensor<2xf32>) attributes {my.flag, my.n = 3 : i64} {
  return %a, %b : f32, tensor<2xf32>
}
func.func nested @g() {
  func.return
}
""",
    "call and func.call": """
func.func private @g(f32) -> f32
func.func @f(%a: f32) -> f32 {
  %0 = call @g(%a) : (f32) -> f32
  %1 = func.call @g(%0) {my.tag} : (f32) -> f32
  return %1 : f32
}
""",
    "named module with attributes": """
module @model attributes {torch.debug_module_name = "Net"} {
  func.func @f(%a: f32) -> f32 {
    return %a : f32
  }
}
""",
    "generic form with argument and result attributes": """
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{my.arg}], function_type = (f32) -> f32, res_attrs = [{my.res}], sym_name = "decl", sym_visibility = "private"}> ({
  }) : () -> ()
  "func.func"() <{function_type = (f32) -> f32, sym_name = "g"}> ({
  ^bb0(%a: f32):
    %0 = "func.call"(%a) <{callee = @decl}> : (f32) -> f32
    "func.return"(%0) : (f32) -> ()
  }) : () -> ()
}) {torch.debug_module_name = "Net"} : () -> ()
""",
    "type alias": """
!vec = tensor<3xf32>
func.func @f(%a: !vec) -> !vec {
  return %a : !vec
}
""",
}

ARITH_FORMS = [
    "%0 = arith.addi %i, %j overflow<nsw, nuw> : i32",
    "%0 = arith.muli %i, %j overflow<nsw> : i32",
    "%0 = arith.shli %i, %j overflow<nuw> : i32",
    "%0 = arith.divsi %i, %j : i32",
    "%0 = arith.maxsi %i, %j : i32",
    "%0 = arith.addf %x, %y fastmath<fast> : f32",
    "%0 = arith.mulf %x, %y fastmath<nnan,ninf> : f32",
    "%0 = arith.remf %x, %y : f32",
    "%0 = arith.negf %x fastmath<contract> : f32",
    "%0 = arith.maximumf %x, %y : f32",
    "%0 = arith.minnumf %x, %y fastmath<nsz> : f32",
    "%0 = arith.cmpi sle, %i, %j : i32",
    "%0 = arith.cmpf une, %x, %y fastmath<fast> : f32",
    "%0 = arith.cmpf ogt, %m, %m : tensor<2x3xf32>",
    "%0 = arith.select %b, %x, %y : f32",
    "%0 = arith.select %bt, %r, %r : tensor<2xi1>, tensor<2xf32>",
    "%0 = arith.extsi %i : i32 to i64",
    "%0 = arith.trunci %i : i32 to i8",
    "%0 = arith.extf %h : f16 to f32",
    "%0 = arith.truncf %x : f32 to f16",
    "%0 = arith.sitofp %i : i32 to f32",
    "%0 = arith.fptoui %x : f32 to i32",
    "%0 = arith.index_cast %n : index to i32",
    "%0 = arith.bitcast %x : f32 to i32",
    "%0 = arith.constant -7 : i8",
    "%0 = arith.constant true",
    "%0 = arith.constant 0x7FC00000 : f32",
    "%0 = arith.constant 2.500000e-01 : bf16",
    "%0 = arith.constant dense<[1, -2]> : tensor<2xi32>",
    "%0 = arith.constant dense<0xFF800000> : tensor<2x2xf32>",
    "%0 = arith.constant dense<[true, false]> : tensor<2xi1>",
    '%0 = arith.constant dense<"0x0000803F00000040"> : tensor<2xf32>',
]

MATH_FORMS = [
    "%0 = math.absf %x fastmath<fast> : f32",
    "%0 = math.absi %i : i32",
    "%0 = math.exp %m : tensor<2x3xf32>",
    "%0 = math.log1p %x : f32",
    "%0 = math.tanh %x fastmath<afn> : f32",
    "%0 = math.rsqrt %x : f32",
    "%0 = math.powf %x, %y : f32",
    "%0 = math.erf %x : f32",
    "%0 = math.roundeven %x : f32",
    "%0 = math.fma %x, %y, %x fastmath<contract> : f32",
]

TENSOR_FORMS = [
    "%0 = tensor.empty() : tensor<2x3xf32>",
    "%0 = tensor.empty(%n) : tensor<?x3xf32>",
    "%c1 = arith.constant 1 : index\n%0 = tensor.dim %d, %c1 : tensor<?x3xf32>",
    "%0 = tensor.extract %r[%n] : tensor<2xf32>",
    "%0 = tensor.insert %x into %r[%n] : tensor<2xf32>",
    "%0 = tensor.extract_slice %m[0, 1] [2, 2] [1, 1] : tensor<2x3xf32> to tensor<2x2xf32>",
    "%0 = tensor.extract_slice %m[%n, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<3xf32>",
    "%0 = tensor.insert_slice %sq into %m[0, %n] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x3xf32>",
    "%0 = tensor.collapse_shape %m [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>",
    "%0 = tensor.expand_shape %r [[0, 1]] output_shape [1, 2] : tensor<2xf32> into tensor<1x2xf32>",
    "%0 = tensor.expand_shape %d [[0, 1], [2]] output_shape [%n, 1, 3] : tensor<?x3xf32> into tensor<?x1x3xf32>",
    "%0 = tensor.cast %m : tensor<2x3xf32> to tensor<?x3xf32>",
    "%0 = tensor.splat %x : tensor<4xf32>",
    "%0 = tensor.splat %x[%n] : tensor<?xf32>",
    "%0 = tensor.from_elements %x, %y : tensor<2xf32>",
    "%0 = tensor.concat dim(1) %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>",
    "%s = arith.constant dense<[3, 2]> : tensor<2xi64>\n"
    "%0 = tensor.reshape %m(%s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>",
    "%0 = tensor.pad %m low[0, 1] high[%n, 0] {\n^bb0(%p: index, %q: index):\n"
    "  tensor.yield %x : f32\n} : tensor<2x3xf32> to tensor<?x4xf32>",
    "%0 = tensor.pad %m nofold low[1, 1] high[1, 1] {\n^bb0(%p: index, %q: index):\n"
    "  tensor.yield %y : f32\n} : tensor<2x3xf32> to tensor<4x5xf32>",
]

CF_FORMS = {
    "br, cond_br, assert": """
func.func @f(%c: i1, %a: i32) -> i32 {
  cf.cond_br %c, ^bb1(%a : i32), ^bb2
^bb1(%v: i32):
  cf.br ^bb2
^bb2:
  cf.assert %c, "must hold"
  return %a : i32
}
""",
    "switch": """
func.func @f(%k: i32, %a: i32) -> i32 {
  cf.switch %k : i32, [
    default: ^bb1(%a : i32),
    7: ^bb2
  ]
^bb1(%v: i32):
  return %v : i32
^bb2:
  return %a : i32
}
""",
}


@pytest.mark.parametrize("src", FUNC_FORMS.values(), ids=FUNC_FORMS.keys())
def test_func_forms(src: str) -> None:
    round_trip(src)


@pytest.mark.parametrize("line", ARITH_FORMS)
def test_arith_forms(line: str) -> None:
    round_trip(in_function(line))


@pytest.mark.parametrize("line", MATH_FORMS)
def test_math_forms(line: str) -> None:
    round_trip(in_function(line))


@pytest.mark.parametrize("body", TENSOR_FORMS)
def test_tensor_forms(body: str) -> None:
    round_trip(in_function(body))


@pytest.mark.parametrize("src", CF_FORMS.values(), ids=CF_FORMS.keys())
def test_cf_forms(src: str) -> None:
    round_trip(src)


# --------------------------------------------------------------------------------------- scf


def test_scf_for_result_type_without_parentheses() -> None:
    text = round_trip(in_function("""
%c0 = arith.constant 0 : index
%0 = scf.for %k = %c0 to %n step %n iter_args(%acc = %m) -> tensor<2x3xf32> {
  %1 = arith.addf %acc, %acc : tensor<2x3xf32>
  scf.yield %1 : tensor<2x3xf32>
}
%2:2 = scf.for %k = %c0 to %n step %n iter_args(%p = %x, %q = %i) -> (f32, i32) {
  scf.yield %p, %q : f32, i32
}
%3 = scf.for %k = %i to %j step %j iter_args(%p = %x) -> f32 : i32 {
  scf.yield %p : f32
}
"""))
    assert "iter_args(%acc = %m) -> (tensor<2x3xf32>)" in text
    assert "-> (f32) : i32 {" in text


def test_scf_if_result_type_without_parentheses() -> None:
    text = round_trip(in_function("""
%0 = scf.if %b -> f32 {
  scf.yield %x : f32
} else {
  scf.yield %y : f32
}
%1:2 = scf.if %b -> (f32, i32) {
  scf.yield %x, %i : f32, i32
} else {
  scf.yield %y, %j : f32, i32
}
scf.if %b {
  %2 = arith.addf %x, %y : f32
}
"""))
    assert "scf.if %b -> (f32) {" in text


def test_scf_while_with_and_without_carried_values() -> None:
    round_trip(in_function("""
%0 = scf.while (%v = %i) : (i32) -> i32 {
  %c = arith.cmpi slt, %v, %j : i32
  scf.condition(%c) %v : i32
} do {
^bb0(%w: i32):
  scf.yield %w : i32
}
scf.while : () -> () {
  scf.condition(%b)
} do {
  scf.yield
}
%1:2 = scf.while (%p = %x, %q = %i) : (f32, i32) -> (f32, i32) {
  scf.condition(%b) %p, %q : f32, i32
} do {
^bb0(%p2: f32, %q2: i32):
  scf.yield %p2, %q2 : f32, i32
} attributes {my.loop}
"""))


def test_scf_index_switch() -> None:
    round_trip(in_function("""
%0:2 = scf.index_switch %n -> f32, i32
case 0 {
  scf.yield %x, %i : f32, i32
}
case 3 {
  scf.yield %y, %j : f32, i32
}
default {
  scf.yield %x, %j : f32, i32
}
"""))


def test_scf_for_unsigned_is_refused_by_name() -> None:
    src = in_function("scf.for unsigned %k = %i to %j step %j : i32 {\n}")
    with pytest.raises(CompileError, match=r"u\.mlir:4:11: error: 'scf\.for unsigned' \(bounds "
                                           r"compared as unsigned integers\) is not supported"):
        parse_module(src, "u.mlir")


def test_scf_while_printed_with_locations_reads_back() -> None:
    """The function type in the middle of scf.while's form is not followed by its location."""
    module = parse_module(in_function("""
%0 = scf.while (%v = %i) : (i32) -> i32 {
  scf.condition(%b) %v : i32
} do {
^bb0(%w: i32):
  scf.yield %w : i32
}"""), "w.mlir")
    text = print_module(module, locations=True)
    assert ': (i32) -> i32 {' in text
    assert '} loc("w.mlir":4:3)' in text
    parse_module(text, "again.mlir")


# ------------------------------------------------------------------------------------- util


UTIL_FUNC = """
module {
  util.func private @helper(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = arith.addf %arg0, %arg0 : tensor<2xf32>
    util.return %0 : tensor<2xf32>
  }
  util.func public @main(%arg0: tensor<2xf32> {my.arg}) -> (tensor<2xf32>, f32) attributes {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main"}} {
    %0 = util.call @helper(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
    %cst = arith.constant 1.0 : f32
    util.return %0, %cst : tensor<2xf32>, f32
  }
}
"""


def test_util_func_is_read_as_func() -> None:
    module = parse_module(UTIL_FUNC, "u.mlir")
    names = [op.name for op in module.walk()]
    assert names.count("func.func") == 2 and names.count("func.return") == 2
    assert "func.call" in names and not any(n.startswith("util.") for n in names)
    main = [op for op in module.walk() if op.name == "func.func"][1]
    assert "iree.abi.stub" in main.attributes and "iree.reflection" in main.attributes
    text = round_trip(UTIL_FUNC)
    assert "func.func public @main(%arg0: tensor<2xf32> {my.arg})" in text


def test_util_func_tied_result_is_refused_by_name() -> None:
    src = "util.func private @inplace(%arg0: tensor<4xf32>) -> %arg0\n"
    with pytest.raises(CompileError, match=r"t\.mlir:1:53: error: a result tied to an argument "
                                           r"\('-> %arg0', IREE's util.func\) is not supported"):
        parse_module(src, "t.mlir")


# ------------------------------------------------------------------------- undefined values


@pytest.mark.parametrize(("src", "where"), [
    (in_function("%0 = arith.addf %x, %nope : f32"), "4:23"),
    ("func.func @g() {\n  return\n}\nfunc.func @f(%a: f32) -> f32 {\n"
     "  %0 = arith.mulf %a, %a : f32\n  %1 = arith.addf %0, %nope : f32\n"
     "  return %1 : f32\n}\n", "6:23"),
    (in_function('%0 = "arith.addf"(%x, %nope) <{fastmath = #arith.fastmath<none>}> : '
                 "(f32, f32) -> f32"), "4:25"),
    (in_function("%0 = linalg.map { arith.negf } ins(%nope : tensor<2xf32>) outs(%r : "
                 "tensor<2xf32>)"), "4:38"),
    (in_function("%0 = scf.if %b -> f32 {\n  scf.yield %nope : f32\n} else {\n"
                 "  scf.yield %x : f32\n}"), "5:15"),
    ("util.func public @f(%a: f32) -> f32 {\n  %0 = arith.addf %a, %nope : f32\n"
     "  util.return %0 : f32\n}\n", "2:23"),
])
def test_undefined_value_is_reported_at_its_use(src: str, where: str) -> None:
    with pytest.raises(CompileError, match=rf"^u\.mlir:{where}: error: use of undefined value "
                                           r"'%nope'$"):
        parse_module(src, "u.mlir")
