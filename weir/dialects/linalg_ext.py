"""weir's additions to the `linalg` dialect: the named ops MLIR has and xDSL 0.74 lacks
(DESIGN.md §3), in MLIR's textual syntax, each checking its operand shapes with a message that
names the operands and sizes that disagree.

- Contractions (`batch_matmul`, `matvec`, `vecmat`, `dot`, `matmul_transpose_a/b`,
  `batch_matmul_transpose_a/b`) are one class, `NamedContraction`, driven by an einsum-like spec:
  the spec gives the loops, the maps, the iterator kinds and the shape check at once.
- Window ops (`depthwise_conv_2d_nhwc_hwc`, `pooling_nhwc_max/sum`, `pooling_nchw_sum`) reuse
  xDSL's conv/pooling bases, so the parser gives them MLIR's default unit strides/dilations and
  `weir.ir.window_ops` checks their shapes like the upstream ones.
- `linalg.map` and `linalg.softmax` have syntax of their own.
- `MatmulOp` refines xDSL's `linalg.matmul`: it accepts MLIR's `indexing_maps = [...]` (xDSL
  only takes them inside an attribute dictionary, and prints none back) and casts mixed operand
  types in its body the way MLIR's matmul does. `ReduceOp` refines `linalg.reduce` with MLIR's
  short form `linalg.reduce { arith.addf } ...`.

`weir.ir.context` loads this dialect on top of xDSL's `linalg`; a class here that subclasses an
upstream op of the same name replaces it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    DYNAMIC_INDEX,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    ShapedType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.linalg import ops as upstream
from xdsl.dialects.linalg.abstract_ops import ConvOperation, NamedOperation, PoolingOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.ir import Attribute, Block, BlockArgument, Dialect, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException


# ---------------------------------------------------------------------------------- bodies


def cast_to(b: Builder, value: SSAValue, to: Attribute) -> SSAValue:
    """`value` converted to type `to` as MLIR's named ops do: floats extended or truncated,
    integers sign-extended or truncated, integers converted to floats as signed."""
    src = value.type
    if src == to:
        return value
    if isinstance(src, AnyFloat) and isinstance(to, AnyFloat):
        wider = to.bitwidth > src.bitwidth
        return b.insert(arith.ExtFOp(value, to) if wider else arith.TruncFOp(value, to)).result
    if isinstance(src, IntegerType) and isinstance(to, IntegerType):
        wider = to.width.data > src.width.data
        return b.insert(arith.ExtSIOp(value, to) if wider else arith.TruncIOp(value, to)).result
    if isinstance(src, IntegerType) and isinstance(to, AnyFloat):
        return b.insert(arith.SIToFPOp(value, to)).result
    if isinstance(src, AnyFloat) and isinstance(to, IntegerType):
        return b.insert(arith.FPToSIOp(value, to)).result
    raise VerifyException(f"cannot convert {src} to {to}")


def _element_types(values: Sequence[SSAValue]) -> list[Attribute]:
    return [v.type.get_element_type() if isinstance(v.type, ShapedType) else v.type
            for v in values]


BodyFill = Callable[[Builder, tuple[BlockArgument, ...]], None]


def body_region(arg_types: Sequence[Attribute], fill: BodyFill) -> Region:
    """A one-block region with `arg_types` arguments whose ops `fill(builder, args)` inserts."""
    block = Block(arg_types=arg_types)
    fill(Builder(InsertPoint.at_end(block)), block.args)
    return Region(block)


def _multiply_add(inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
    """acc + lhs * rhs in the accumulator's type; an empty body when the operand count is wrong
    (the verifier then says so)."""
    types = _element_types([*inputs, *outputs])

    def fill(b: Builder, args: tuple[BlockArgument, ...]) -> None:
        if len(inputs) != 2 or len(outputs) != 1:
            b.insert(upstream.YieldOp())
            return
        acc_type = types[-1]
        lhs, rhs = (cast_to(b, a, acc_type) for a in args[:2])
        if isinstance(acc_type, AnyFloat):
            product = b.insert(arith.MulfOp(lhs, rhs)).result
            total = b.insert(arith.AddfOp(args[2], product)).result
        else:
            product = b.insert(arith.MuliOp(lhs, rhs)).result
            total = b.insert(arith.AddiOp(args[2], product)).result
        b.insert(upstream.YieldOp(total))
    return body_region(types, fill)


def _combine(inputs: Sequence[SSAValue], outputs: Sequence[SSAValue], kind: str) -> Region:
    """A pooling body: acc combined (`max` or `sum`) with the input element; the window operand's
    element is unused."""
    types = _element_types([*inputs, *outputs])

    def fill(b: Builder, args: tuple[BlockArgument, ...]) -> None:
        if len(inputs) != 2 or len(outputs) != 1:
            b.insert(upstream.YieldOp())
            return
        acc_type = types[-1]
        x = cast_to(b, args[0], acc_type)
        is_float = isinstance(acc_type, AnyFloat)
        if kind == "max":
            op: Operation = arith.MaximumfOp(args[2], x) if is_float else arith.MaxSIOp(args[2], x)
        else:
            op = arith.AddfOp(args[2], x) if is_float else arith.AddiOp(args[2], x)
        b.insert(upstream.YieldOp(b.insert(op).results[0]))
    return body_region(types, fill)


def _shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    return tuple(t.get_shape()) if isinstance(t, ShapedType) else ()


def _sizes_agree(named: Sequence[tuple[str, SSAValue, str]]) -> None:
    """Each (role, value, letters): the value has one dimension per letter, and every letter has
    one static size across all values. Raises naming the letter, the roles and their sizes."""
    seen: dict[str, tuple[str, int, int]] = {}
    for role, value, letters in named:
        shape = _shape(value)
        if not isinstance(value.type, ShapedType) or len(shape) != len(letters):
            raise VerifyException(f"{role} must have rank {len(letters)}, got {value.type}")
        for dim, (letter, size) in enumerate(zip(letters, shape)):
            if size == DYNAMIC_INDEX:
                continue
            if letter in seen and seen[letter][1] != size:
                other, other_size, other_dim = seen[letter]
                raise VerifyException(
                    f"size of {letter} differs: {other} dimension {other_dim} is {other_size}, "
                    f"{role} dimension {dim} is {size}")
            seen.setdefault(letter, (role, size, dim))


# ----------------------------------------------------------------------------- contractions


class NamedContraction(NamedOperation):
    """A named contraction given by `SPEC`, e.g. "MK,KN->MN": one letter per operand dimension.
    The loops are the output's letters then the reduced ones, in order of appearance; a letter
    the output lacks is a reduction."""

    SPEC: ClassVar[str]
    ROLES: ClassVar[tuple[str, str, str]] = ("lhs", "rhs", "output")
    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True

    @classmethod
    def letters(cls) -> tuple[str, str, str]:
        ins, out = cls.SPEC.split("->")
        lhs, rhs = ins.split(",")
        return lhs, rhs, out

    @classmethod
    def loops(cls) -> str:
        lhs, rhs, out = cls.letters()
        reduced = "".join(dict.fromkeys(c for c in lhs + rhs if c not in out))
        return out + reduced

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _multiply_add(inputs, outputs)

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        loops = self.loops()
        return tuple(AffineMap(len(loops), 0, tuple(AffineDimExpr(loops.index(c)) for c in spec))
                     for spec in self.letters())

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        out = self.letters()[2]
        return ArrayAttr(IteratorTypeAttr.parallel() if c in out else IteratorTypeAttr.reduction()
                         for c in self.loops())

    def verify_(self) -> None:
        if len(self.inputs) != 2 or len(self.outputs) != 1:
            raise VerifyException(f"expects 2 inputs ({self.ROLES[0]}, {self.ROLES[1]}) and 1 "
                                  f"output, got {len(self.inputs)} and {len(self.outputs)}")
        _sizes_agree(list(zip(self.ROLES, [*self.inputs, *self.outputs], self.letters())))
        super().verify_()


@irdl_op_definition
class BatchMatmulOp(NamedContraction):
    name = "linalg.batch_matmul"
    SPEC: ClassVar[str] = "BMK,BKN->BMN"


@irdl_op_definition
class BatchMatmulTransposeAOp(NamedContraction):
    name = "linalg.batch_matmul_transpose_a"
    SPEC: ClassVar[str] = "BKM,BKN->BMN"


@irdl_op_definition
class BatchMatmulTransposeBOp(NamedContraction):
    name = "linalg.batch_matmul_transpose_b"
    SPEC: ClassVar[str] = "BMK,BNK->BMN"


@irdl_op_definition
class MatmulTransposeAOp(NamedContraction):
    name = "linalg.matmul_transpose_a"
    SPEC: ClassVar[str] = "KM,KN->MN"


@irdl_op_definition
class MatmulTransposeBOp(NamedContraction):
    name = "linalg.matmul_transpose_b"
    SPEC: ClassVar[str] = "MK,NK->MN"


@irdl_op_definition
class MatvecOp(NamedContraction):
    name = "linalg.matvec"
    SPEC: ClassVar[str] = "MK,K->M"
    ROLES: ClassVar[tuple[str, str, str]] = ("matrix", "vector", "output")


@irdl_op_definition
class VecmatOp(NamedContraction):
    name = "linalg.vecmat"
    SPEC: ClassVar[str] = "K,KN->N"
    ROLES: ClassVar[tuple[str, str, str]] = ("vector", "matrix", "output")


@irdl_op_definition
class DotOp(NamedContraction):
    name = "linalg.dot"
    SPEC: ClassVar[str] = "K,K->"


class MatmulOp(upstream.MatmulOp):
    """`linalg.matmul`, optionally with MLIR's `indexing_maps = [...]` before `ins`. A plain
    subclass: it keeps xDSL's operation definition and overrides only methods."""

    @classmethod
    def parse(cls, parser: Parser) -> MatmulOp:
        maps: Attribute | None = None
        if parser.parse_optional_keyword("indexing_maps") is not None:
            parser.parse_punctuation("=")
            pos = parser.pos
            maps = parser.parse_attribute()
            if not (isinstance(maps, ArrayAttr) and
                    all(isinstance(m, AffineMapAttr) for m in maps.data)):
                parser.raise_error("indexing_maps must be a list of affine maps", pos)
        op = super().parse(parser)
        assert isinstance(op, MatmulOp)
        if maps is not None:
            op.properties["indexing_maps"] = maps
        return op

    def print(self, printer: Printer) -> None:
        if self.has_explicit_maps():
            printer.print_string(" indexing_maps = ")
            printer.print_attribute(self.indexing_maps)
        super().print(printer)

    def has_explicit_maps(self) -> bool:
        default = MatmulOp.get_irdl_definition().properties["indexing_maps"].default_value
        return self.indexing_maps != default

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _multiply_add(inputs, outputs)

    def verify_(self) -> None:
        if len(self.inputs) != 2 or len(self.outputs) != 1:
            raise VerifyException(f"expects 2 inputs (lhs, rhs) and 1 output, got "
                                  f"{len(self.inputs)} and {len(self.outputs)}")
        maps = [m.data for m in self.indexing_maps.data]
        if len(maps) != 3 or any(m.num_dims != 3 or m.num_symbols for m in maps):
            raise VerifyException("indexing_maps must be 3 maps over the loops (m, n, k)")
        if all(isinstance(e, AffineDimExpr) for m in maps for e in m.results):
            letters = ["".join("MNK"[e.position] for e in m.results) for m in maps]  # type: ignore[attr-defined]
            _sizes_agree(list(zip(("lhs", "rhs", "output"), [*self.inputs, *self.outputs],
                                  letters)))
        super().verify_()


def _check_axes(axes: Sequence[int], rank: int, what: str) -> None:
    """xDSL's verifiers index shapes with `dimensions`/`permutation` before checking them (an
    IndexError on `dimensions = [7]`); these checks come first and say what is wrong."""
    for axis in axes:
        if not 0 <= axis < rank:
            raise VerifyException(f"{what} {list(axes)}: {axis} is not a dimension of a rank-{rank} "
                                  "operand")
    if len(set(axes)) != len(axes):
        raise VerifyException(f"{what} {list(axes)} names a dimension twice")


def _rank(value: SSAValue) -> int:
    t = value.type
    return len(t.get_shape()) if isinstance(t, ShapedType) else 0


# The attributes xDSL's `linalg.generic` parser asserts the kind of (an AssertionError on
# `indexing_maps = 3`), with the kind each must have.
_GENERIC_ATTR_KINDS: dict[str, tuple[type[Attribute], str]] = {
    "indexing_maps": (ArrayAttr, "an array of affine maps"),
    "iterator_types": (ArrayAttr, "an array of iterator types"),
    "doc": (StringAttr, "a string"),
    "library_call": (StringAttr, "a string"),
}


class GenericOp(upstream.GenericOp):
    """`linalg.generic` whose attribute dictionary is checked before xDSL's parser asserts on it.
    The dictionary is read twice (once here, then by xDSL): generic ops are few in a program."""

    @classmethod
    def parse(cls, parser: Parser) -> upstream.GenericOp:
        start = parser.pos
        attrs = parser.parse_optional_attr_dict()
        for key, (kind, what) in _GENERIC_ATTR_KINDS.items():
            value = attrs.get(key)
            if value is not None and not isinstance(value, kind):
                parser.raise_error(f"linalg.generic: '{key}' must be {what}, got {value}", start,
                                   parser.pos)
        maps = attrs.get("indexing_maps")
        if isinstance(maps, ArrayAttr) and not all(isinstance(m, AffineMapAttr) for m in maps):
            parser.raise_error("linalg.generic: 'indexing_maps' must be an array of affine maps",
                               start, parser.pos)
        parser._resume_from(start)  # pyright: ignore[reportPrivateUsage]
        return super().parse(parser)


class FillOp(upstream.FillOp):
    """`linalg.fill` with its operands counted (xDSL accepts `linalg.fill outs(...)` with no
    value, which crashed the passes after it)."""

    def verify_(self) -> None:
        if len(self.inputs) != 1 or len(self.outputs) != 1:
            raise VerifyException(f"expects 1 input (the value) and 1 output, got "
                                  f"{len(self.inputs)} and {len(self.outputs)}")
        super().verify_()


class TransposeOp(upstream.TransposeOp):
    """`linalg.transpose` whose permutation is checked to be one before xDSL's verifier uses it."""

    def verify_(self) -> None:
        if len(self.inputs) != 1 or len(self.outputs) != 1:
            raise VerifyException(f"expects 1 input and 1 output, got {len(self.inputs)} and "
                                  f"{len(self.outputs)}")
        _check_axes(self.permutation.get_values(), _rank(self.inputs[0]), "permutation")
        super().verify_()


class BroadcastOp(upstream.BroadcastOp):
    """`linalg.broadcast` whose added dimensions are checked before xDSL's verifier uses them."""

    def verify_(self) -> None:
        _check_axes(self.dimensions.get_values(), _rank(self.init), "dimensions")
        super().verify_()


class ReduceOp(upstream.ReduceOp):
    """`linalg.reduce`, also in MLIR's short form `linalg.reduce { arith.addf } ins(%x : T)
    outs(%init : U) dimensions = [1]`: the op applied to (input element, accumulator). A plain
    subclass, like `MatmulOp`. Its dimensions are checked before xDSL's verifier uses them."""

    def verify_(self) -> None:
        _check_axes(self.dimensions.get_values(), _rank(self.input), "dimensions")
        super().verify_()

    @classmethod
    def parse(cls, parser: Parser) -> upstream.ReduceOp:
        if parser.parse_optional_punctuation("{") is None:
            return super().parse(parser)
        pos = parser.pos
        op_name = parser.parse_identifier(" (the op the short form of linalg.reduce applies)")
        parser.parse_punctuation("}")
        inputs = _parse_operands(parser, "ins")
        inits = _parse_operands(parser, "outs")
        if len(inputs) != 1 or len(inits) != 1:
            parser.raise_error("linalg.reduce takes one input and one output", pos)
        parser.parse_keyword("dimensions")
        parser.parse_punctuation("=")
        dimensions = parser.parse_comma_separated_list(parser.Delimiter.SQUARE,
                                                       parser.parse_integer)
        region = _short_form_body(parser, op_name, pos, [*inputs, *inits], inits[0])
        return cls(inputs[0], inits[0], DenseArrayBase.from_list(i64, dimensions), region)


# -------------------------------------------------------------------------------- windows


@irdl_op_definition
class DepthwiseConv2DNhwcHwcOp(ConvOperation):
    """Each input channel convolved with its own filter: out[n, oh, ow, c] +=
    in[n, oh*sh + kh*dh, ow*sw + kw*dw, c] * filter[kh, kw, c]."""

    name = "linalg.depthwise_conv_2d_nhwc_hwc"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _multiply_add(inputs, outputs)

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, oh, ow, c, kh, kw = (AffineDimExpr(d) for d in range(6))
        (sh, sw), (dh, dw) = self.strides.get_values(), self.dilations.get_values()
        return (AffineMap(6, 0, (n, oh * sh + kh * dh, ow * sw + kw * dw, c)),
                AffineMap(6, 0, (kh, kw, c)), AffineMap(6, 0, (n, oh, ow, c)))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return ArrayAttr([IteratorTypeAttr.parallel()] * 4 + [IteratorTypeAttr.reduction()] * 2)


class _Pooling(PoolingOperation):
    """Pooling over an (H, W) window, whose operand only gives the window's size."""

    KIND: ClassVar[str]  # "max" | "sum"
    LAYOUT: ClassVar[str]  # the input's and output's dimensions, "NHWC" or "NCHW"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _combine(inputs, outputs, cls.KIND)

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        # Loops: n, then the output's other dims in layout order (c, oh, ow or oh, ow, c), kh, kw.
        loops = {letter: AffineDimExpr(i) for i, letter in enumerate(
            "N" + "".join(c for c in self.LAYOUT if c != "N") + "hw")}
        (sh, sw), (dh, dw) = self.strides.get_values(), self.dilations.get_values()
        spans = {"N": loops["N"], "C": loops["C"], "H": loops["H"] * sh + loops["h"] * dh,
                 "W": loops["W"] * sw + loops["w"] * dw}
        return (AffineMap(6, 0, tuple(spans[c] for c in self.LAYOUT)),
                AffineMap(6, 0, (loops["h"], loops["w"])),
                AffineMap(6, 0, tuple(loops[c] for c in self.LAYOUT)))


@irdl_op_definition
class PoolingNhwcMaxOp(_Pooling):
    name = "linalg.pooling_nhwc_max"
    KIND: ClassVar[str] = "max"
    LAYOUT: ClassVar[str] = "NHWC"


@irdl_op_definition
class PoolingNhwcSumOp(_Pooling):
    name = "linalg.pooling_nhwc_sum"
    KIND: ClassVar[str] = "sum"
    LAYOUT: ClassVar[str] = "NHWC"


@irdl_op_definition
class PoolingNchwSumOp(_Pooling):
    name = "linalg.pooling_nchw_sum"
    KIND: ClassVar[str] = "sum"
    LAYOUT: ClassVar[str] = "NCHW"


# ------------------------------------------------------------------------- map and softmax


def _parse_operands(parser: Parser, keyword: str) -> list[SSAValue]:
    """`keyword(%a, %b : type, type)`."""
    parser.parse_characters(keyword)
    pos = parser.pos
    parser.parse_punctuation("(")
    names = parser.parse_comma_separated_list(Parser.Delimiter.NONE,
                                              parser.parse_unresolved_operand)
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
    parser.parse_punctuation(")")
    if len(names) != len(types):
        parser.raise_error(f"{len(names)} operand(s) but {len(types)} type(s)", pos)
    return parser.resolve_operands(names, types, pos)


def _short_form_body(parser: Parser, op_name: str, pos: int, args: Sequence[SSAValue],
                     init: SSAValue) -> Region:
    """The body MLIR's short forms stand for: `op_name` applied to one block argument per value
    of `args` (their element types), its result yielded as `init`'s element type."""
    op_type = parser.ctx.get_optional_op(op_name)
    if op_type is None:
        parser.raise_error(f"Operation {op_name} is not registered", pos)
    result_type = _element_types([init])[0]

    def fill(b: Builder, block_args: tuple[BlockArgument, ...]) -> None:
        try:
            op = b.insert(op_type.build(operands=list(block_args), result_types=[result_type]))
        except (ValueError, TypeError) as e:
            parser.raise_error(f"short form cannot build {op_name}: {e}", pos)
        b.insert(upstream.YieldOp(op.results[0]))
    return body_region(_element_types(args), fill)


def _print_operands(printer: Printer, keyword: str, values: Sequence[SSAValue]) -> None:
    printer.print_string(f" {keyword}(")
    printer.print_list(values, printer.print_ssa_value)
    printer.print_string(" : ")
    printer.print_list([v.type for v in values], printer.print_attribute)
    printer.print_string(")")


@irdl_op_definition
class MapOp(IRDLOperation):
    """Elementwise: out[i...] = mapper(in0[i...], in1[i...], ...) over equal shapes. Accepts
    MLIR's long form, `(%x: f32, ...) { ... linalg.yield %y : f32 }` after `outs(...)`, and its
    short form `linalg.map { arith.addf } ins(...) outs(...)` for an op applied to the inputs in
    order."""

    name = "linalg.map"
    inputs = var_operand_def(TensorType)
    init = operand_def(TensorType)
    result = var_result_def(TensorType)
    mapper = region_def("single_block")

    @classmethod
    def parse(cls, parser: Parser) -> MapOp:
        short: tuple[str, int] | None = None
        if parser.parse_optional_punctuation("{") is not None:
            pos = parser.pos
            short = (parser.parse_identifier(" (the op the short form of linalg.map applies)"), pos)
            parser.parse_punctuation("}")
        inputs = _parse_operands(parser, "ins")
        pos = parser.pos
        outs = _parse_operands(parser, "outs")
        if len(outs) != 1:
            parser.raise_error("linalg.map takes exactly one output", pos)
        attrs = parser.parse_optional_attr_dict()
        if short is None:
            args = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_argument)
            region = parser.parse_region(args)
        else:
            region = _short_form_body(parser, short[0], short[1], inputs, outs[0])
        op = cls.build(operands=[inputs, outs[0]], result_types=[[outs[0].type]],
                       regions=[region], attributes=attrs)
        return op

    def print(self, printer: Printer) -> None:
        _print_operands(printer, "ins", self.inputs)
        _print_operands(printer, "outs", [self.init])
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        printer.print_string("\n")
        with printer.in_parens():
            printer.print_list(self.mapper.block.args, printer.print_block_argument)
        printer.print_string(" ")
        printer.print_region(self.mapper, print_entry_block_args=False)

    def verify_(self) -> None:
        out_shape = _shape(self.init)
        for i, x in enumerate(self.inputs):
            shape = _shape(x)
            if len(shape) != len(out_shape) or any(
                    a != b and DYNAMIC_INDEX not in (a, b) for a, b in zip(shape, out_shape)):
                raise VerifyException(f"input #{i} of type {x.type} does not have the shape of "
                                      f"the output {self.init.type}")
        args = self.mapper.block.args
        types = _element_types(self.inputs)
        if len(args) != len(types):
            raise VerifyException(f"the mapper takes {len(args)} argument(s) for "
                                  f"{len(types)} input(s)")
        for i, (arg, t) in enumerate(zip(args, types)):
            if arg.type != t:
                raise VerifyException(f"mapper argument #{i} has type {arg.type}, the element "
                                      f"type of input #{i} is {t}")
        last = self.mapper.block.last_op
        out_type = _element_types([self.init])[0]
        if not isinstance(last, upstream.YieldOp) or len(last.operands) != 1 or \
                last.operands[0].type != out_type:
            raise VerifyException(f"the mapper must yield one {out_type}")
        if len(self.result) != 1 or self.result[0].type != self.init.type:
            raise VerifyException("the result must have the type of the output")


@irdl_op_definition
class SoftmaxOp(IRDLOperation):
    """out = exp(x - max(x)) / sum(exp(x - max(x))) along `dimension`. Syntax:
    `linalg.softmax dimension(1) ins(%x : T) outs(%init : T) -> T`."""

    name = "linalg.softmax"
    input = operand_def(TensorType)
    output = operand_def(TensorType)
    result = var_result_def(TensorType)
    dimension = prop_def(IntegerAttr)

    @classmethod
    def parse(cls, parser: Parser) -> SoftmaxOp:
        parser.parse_characters("dimension")
        parser.parse_punctuation("(")
        dimension = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation(")")
        pos = parser.pos
        inputs = _parse_operands(parser, "ins")
        outputs = _parse_operands(parser, "outs")
        if len(inputs) != 1 or len(outputs) != 1:
            parser.raise_error("linalg.softmax takes one input and one output", pos)
        attrs = parser.parse_optional_attr_dict()
        results: list[Attribute] = []
        if parser.parse_optional_punctuation("->") is not None:
            results = [parser.parse_type()]
        return cls.build(operands=[inputs[0], outputs[0]], result_types=[results],
                         properties={"dimension": IntegerAttr(dimension, i64)}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" dimension({self.dimension.value.data})")
        _print_operands(printer, "ins", [self.input])
        _print_operands(printer, "outs", [self.output])
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        if self.result:
            printer.print_string(" -> ")
            printer.print_attribute(self.result[0].type)

    def verify_(self) -> None:
        t = self.input.type
        assert isinstance(t, TensorType)
        shape, out_shape = _shape(self.input), _shape(self.output)
        if len(shape) != len(out_shape) or any(
                a != b and DYNAMIC_INDEX not in (a, b) for a, b in zip(shape, out_shape)):
            raise VerifyException(f"output {self.output.type} does not have the shape of the "
                                  f"input {self.input.type}")
        element = t.get_element_type()
        if not isinstance(element, AnyFloat) or element != self.output.type.get_element_type():  # type: ignore[attr-defined]
            raise VerifyException(f"input and output must have the same float element type, got "
                                  f"{self.input.type} and {self.output.type}")
        dim = self.dimension.value.data
        if not 0 <= dim < len(shape):
            raise VerifyException(f"dimension {dim} is out of range for rank {len(shape)}")
        if len(self.result) != 1 or self.result[0].type != self.output.type:
            raise VerifyException("the result must have the type of the output")


# ------------------------------------------------------------------------------ the dialect

KERNEL_OPS: tuple[type[Operation], ...] = (
    BatchMatmulOp, upstream.Conv2DNchwFchwOp, upstream.Conv2DNhwc_FhwcOp,
    DepthwiseConv2DNhwcHwcOp, PoolingNhwcMaxOp, PoolingNhwcSumOp, PoolingNchwSumOp,
)
"""Named ops, beyond xDSL's matmul/conv_2d_nhwc_hwcf/pooling_nchw_max, that stay named until a
target lowers them onto one of its kernels (Matmul, Conv2D, Pool2D): each is a dispatch root."""

DIALECT = Dialect("linalg", [
    BatchMatmulOp, BatchMatmulTransposeAOp, BatchMatmulTransposeBOp, MatmulTransposeAOp,
    MatmulTransposeBOp, MatvecOp, VecmatOp, DotOp, MatmulOp, ReduceOp, TransposeOp, BroadcastOp,
    GenericOp, FillOp,
    DepthwiseConv2DNhwcHwcOp,
    PoolingNhwcMaxOp, PoolingNhwcSumOp, PoolingNchwSumOp, MapOp, SoftmaxOp,
])
