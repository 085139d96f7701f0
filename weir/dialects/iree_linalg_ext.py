"""IREE's `iree_linalg_ext` ops (and, in `tm_tensor`, torch-mlir's copies of them): sort, topk,
scan, scatter, gather, arg_compare and attention, in the syntax IREE and torch-mlir print.

The ops share one shape (`ins(...) outs(...)`, a region, results of the outputs' types) and one
textual form: keyword clauses (`dimension(1)`, `inclusive(true)`, `unique_indices(true)`,
`dimension_map = [0, 1]`), an optional attribute dictionary, `ins`, `outs`, arg_compare's
`index_base(%b : index)`, the region, `-> types`. What each computes is said on its class; the
input phase lowers them (weir/compiler/input/lower_linalg_ext.py) to kernels of their own or to
linalg."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    IntegerType,
    ShapedType,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Dialect, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from weir.dialects.linalg_syntax import (
    element_type,
    parse_operands,
    parse_optional_operands,
    parse_result_types,
    print_operands,
    print_result_types,
)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    return tuple(t.get_shape()) if isinstance(t, ShapedType) else ()


def _agree(a: int, b: int) -> bool:
    return a == b or DYNAMIC_INDEX in (a, b)


def _same_shape(a: Sequence[int], b: Sequence[int]) -> bool:
    return len(a) == len(b) and all(_agree(x, y) for x, y in zip(a, b))


def _without(shape: Sequence[int], dim: int) -> tuple[int, ...]:
    return tuple(s for i, s in enumerate(shape) if i != dim)


class ExtOp(IRDLOperation):
    """What the ops share: inputs, outputs (destination-style: the results have their types),
    a region, and the clauses of their syntax."""

    inputs = var_operand_def()
    outputs = var_operand_def(TensorType)
    index_base = var_operand_def(IndexType)
    results_ = var_result_def(TensorType)
    region = region_def()
    dimension = opt_prop_def(IntegerAttr)
    inclusive = opt_prop_def(IntegerAttr)
    unique_indices = opt_prop_def(IntegerAttr)
    dimension_map = opt_prop_def(DenseArrayBase)
    indexing_maps = opt_prop_def(ArrayAttr)
    is_sorted = opt_prop_def(UnitAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    # The keyword clauses this op's syntax has, in print order.
    CLAUSES: ClassVar[tuple[str, ...]] = ()
    # How many region arguments and yields: None where the op checks its own.
    HAS_REGION: ClassVar[bool] = True

    @classmethod
    def parse(cls, parser: Parser) -> ExtOp:
        props: dict[str, Attribute] = {}
        attrs: dict[str, Attribute] = {}
        while True:
            if parser.parse_optional_characters("dimension_map") is not None:
                parser.parse_punctuation("=")
                values = parser.parse_comma_separated_list(
                    Parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))
                props["dimension_map"] = DenseArrayBase.from_list(i64, values)
            elif parser.parse_optional_characters("dimension") is not None:
                parser.parse_punctuation("(")
                props["dimension"] = IntegerAttr(parser.parse_integer(allow_boolean=False), i64)
                parser.parse_punctuation(")")
            elif (word := parser.parse_optional_characters("inclusive") or
                  parser.parse_optional_characters("unique_indices")) is not None:
                parser.parse_punctuation("(")
                props[word] = BoolAttr.from_bool(parser.parse_boolean())
                parser.parse_punctuation(")")
            elif parser.parse_optional_keyword("is_sorted") is not None:
                props["is_sorted"] = UnitAttr()
            elif parser._current_token.text == "{":  # pyright: ignore[reportPrivateUsage]
                attrs |= parser.parse_optional_attr_dict()
            else:
                break
        inputs = parse_optional_operands(parser, "ins") or []
        outputs = parse_operands(parser, "outs")
        base = parse_optional_operands(parser, "index_base") or []
        for name in ("dimension", "inclusive", "unique_indices", "dimension_map",
                     "indexing_maps"):
            if name in attrs:
                props[name] = attrs.pop(name)
        region = parser.parse_optional_region() or Region()
        results = parse_result_types(parser)
        return cls.build(operands=[inputs, outputs, base], result_types=[results],
                         regions=[region], properties=props, attributes=attrs)

    def print(self, printer: Printer) -> None:
        if self.dimension_map is not None:
            printer.print_string(" dimension_map = [")
            printer.print_list(self.dimension_map.get_values(),
                               lambda v: printer.print_string(str(v)))
            printer.print_string("]")
        if self.dimension is not None:
            printer.print_string(f" dimension({self.dimension.value.data})")
        for name in ("inclusive", "unique_indices"):
            flag = getattr(self, name)
            if flag is not None:
                printer.print_string(f" {name}({'true' if flag.value.data else 'false'})")
        if self.is_sorted is not None:
            printer.print_string(" is_sorted")
        if self.indexing_maps is not None:
            printer.print_string(" {indexing_maps = ")
            printer.print_attribute(self.indexing_maps)
            printer.print_string("}")
        print_operands(printer, "ins", self.inputs)
        print_operands(printer, "outs", self.outputs)
        print_operands(printer, "index_base", self.index_base)
        if self.attributes:
            printer.print_string(" ")
            printer.print_attr_dict(self.attributes)
        if self.region.blocks:
            printer.print_string(" ")
            printer.print_region(self.region)
        print_result_types(printer, [r.type for r in self.results_])

    # ------------------------------------------------------------------ shared checks

    def dim(self) -> int:
        if self.dimension is None:
            raise VerifyException("the op needs dimension(N)")
        return self.dimension.value.data

    def check_results(self) -> None:
        types = [v.type for v in self.outputs]
        if [r.type for r in self.results_] != types:
            raise VerifyException(f"the results must have the outputs' types {types}")

    def check_counts(self, ins: Sequence[int], outs: Sequence[int]) -> None:
        for what, counts, values in (("input", ins, self.inputs), ("output", outs, self.outputs)):
            if len(values) not in counts:
                want = " or ".join(str(n) for n in counts)
                raise VerifyException(f"takes {want} {what}(s), got {len(values)}")

    def check_dim(self, rank: int) -> int:
        d = self.dim()
        if not 0 <= d < rank:
            raise VerifyException(f"dimension {d} is out of range for rank {rank}")
        return d

    def check_region(self, arg_types: Sequence[Attribute], yield_type: Attribute | None) -> None:
        """The region's arguments have `arg_types`; it yields one `yield_type` (any type when
        None)."""
        if not self.region.blocks:
            raise VerifyException("the op needs a region")
        block = self.region.block
        types = [a.type for a in block.args]
        if types != list(arg_types):
            raise VerifyException(f"the region takes ({', '.join(map(str, types))}), expected "
                                  f"({', '.join(map(str, arg_types))})")
        last = block.last_op
        if not isinstance(last, AbstractYieldOperation) or len(last.operands) != 1 or \
                yield_type is not None and last.operands[0].type != yield_type:
            raise VerifyException(f"the region must yield one {yield_type or 'value'}")

    def verify_(self) -> None:
        if self.index_base and self.name.rsplit(".", 1)[1] != "arg_compare":
            raise VerifyException("only arg_compare takes index_base")
        self.check_results()
        self.check_op()

    def check_op(self) -> None:
        raise NotImplementedError

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        """The sizes the op needs equal, for the host checks of dynamic ones
        (insert-dynamic-size-checks): (operand a, operand b, [(dimension of a, of b), ...]),
        operands numbered as in `operands`."""
        return []

    def _same(self, a: int, b: int, skip: int | None = None) -> tuple[int, int, list[tuple[int, int]]]:
        """Operands a and b agree in every dimension (but `skip` of a, which b lacks when b has
        one dimension less)."""
        rank_a, rank_b = len(shape_of(self.operands[a])), len(shape_of(self.operands[b]))
        if skip is None or rank_a == rank_b:
            return a, b, [(i, i) for i in range(rank_a) if i != skip]
        return a, b, [(i, j) for j, i in enumerate(x for x in range(rank_a) if x != skip)]


I1 = IntegerType(1)
I32 = IntegerType(32)


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    name = "iree_linalg_ext.yield"
    traits = traits_def(IsTerminator())


class Sort(ExtOp):
    """Sorts each line along `dimension` of every output together: the region compares two
    elements of each output (lhs then rhs of output 0, of output 1, ...) and yields whether lhs
    may come before rhs. The sort is stable: an element moves before an earlier one only when
    the region says it may come first and not the other way round (so `olt` and `ole` both keep
    equal elements in order)."""

    def check_op(self) -> None:
        if self.inputs:
            raise VerifyException("sort takes no inputs: it sorts its outputs in place")
        if not self.outputs:
            raise VerifyException("sort needs at least one output")
        shape = shape_of(self.outputs[0])
        for i, v in enumerate(self.outputs):
            if not _same_shape(shape_of(v), shape):
                raise VerifyException(f"output #{i} of type {v.type} does not have the shape "
                                      f"of output #0 {self.outputs[0].type}")
        self.check_dim(len(shape))
        args = [element_type(v) for v in self.outputs for _ in range(2)]
        self.check_region(args, I1)

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        return [self._same(0, k) for k in range(1, len(self.outputs))]


class Topk(ExtOp):
    """The k best elements along `dimension` (k: the outputs' size there) and their indices, best
    first, merged with what the outputs hold (IREE splits a topk in parts and merges them this
    way): the region yields whether lhs is better than rhs. Indices are the second input's values,
    or positions along the dimension without one. Earlier elements win ties, outputs' first."""

    def check_op(self) -> None:
        self.check_counts((1, 2), (2,) if self.name.endswith('.topk') else (1, 2))
        shape = shape_of(self.inputs[0])
        d = self.check_dim(len(shape))
        if len(self.inputs) == 2 and not _same_shape(shape_of(self.inputs[1]), shape):
            raise VerifyException(f"the indices {self.inputs[1].type} do not have the shape of "
                                  f"the values {self.inputs[0].type}")
        for i, v in enumerate(self.outputs):
            out = shape_of(v)
            if len(out) != len(shape) or not _same_shape(_without(out, d), _without(shape, d)):
                raise VerifyException(f"output #{i} of type {v.type} must have the input's "
                                      f"shape but for dimension {d}")
        if element_type(self.outputs[0]) != element_type(self.inputs[0]):
            raise VerifyException("the values output must have the input's element type")
        if len(self.outputs) == 2 and not isinstance(element_type(self.outputs[1]), IntegerType):
            raise VerifyException("the indices output must have an integer element type")
        value = element_type(self.inputs[0])
        self.check_region([value, value], I1)

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        nin = len(self.inputs)
        d = self.dim()
        pairs = [self._same(0, 1)] if nin == 2 else []
        pairs += [self._same(0, nin + i, d) for i in range(len(self.outputs))]
        return pairs + ([self._same(nin, nin + 1)] if len(self.outputs) == 2 else [])


class Scan(ExtOp):
    """A prefix scan along `dimension`: outputs are the scanned tensor and the last value of each
    line (the accumulator). Inclusive: out[0] = in[0], out[i] = f(in[i], out[i-1]); exclusive:
    out[0] = the accumulator output's initial value, out[i] = f(in[i-1], out[i-1]). The region
    takes (input element, running value)."""

    def check_op(self) -> None:
        self.check_counts((1,), (2,))
        shape = shape_of(self.inputs[0])
        d = self.check_dim(len(shape))
        if self.inclusive is None:
            raise VerifyException("scan needs inclusive(true|false)")
        if not _same_shape(shape_of(self.outputs[0]), shape):
            raise VerifyException(f"output #0 {self.outputs[0].type} does not have the shape "
                                  f"of the input {self.inputs[0].type}")
        if not _same_shape(shape_of(self.outputs[1]), _without(shape, d)):
            raise VerifyException(f"the accumulator {self.outputs[1].type} must have the "
                                  f"input's shape without dimension {d}")
        t = element_type(self.outputs[0])
        if element_type(self.inputs[0]) != t or element_type(self.outputs[1]) != t:
            raise VerifyException("input and outputs must have one element type")
        self.check_region([t, t], t)

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        return [self._same(0, 1), self._same(0, 2, self.dim())]


def index_layout(op: ExtOp, indices: SSAValue) -> tuple[tuple[int, ...], int]:
    """(batch shape, index depth) of scatter/gather `indices`: a last dimension of the
    dimension map's length holds the coordinates; otherwise each element is one coordinate."""
    assert op.dimension_map is not None
    depth = len(op.dimension_map.get_values())
    shape = shape_of(indices)
    if shape and shape[-1] == depth:
        return shape[:-1], depth
    if depth == 1:
        return shape, 1
    raise VerifyException(f"indices {indices.type} must end in a dimension of size {depth} "
                          "(the dimension map's length)")


def _check_indexed(op: ExtOp, indices: SSAValue, mask: SSAValue | None, slices: SSAValue,
                   target: SSAValue, what: str) -> None:
    """`slices` (updates/output) = batch shape + a slice of `target` aligned to its last
    dimensions."""
    if op.dimension_map is None:
        raise VerifyException("the op needs dimension_map = [...]")
    if not isinstance(element_type(indices), IntegerType):
        raise VerifyException(f"indices {indices.type} must have an integer element type")
    batch, depth = index_layout(op, indices)
    rank = len(shape_of(target))
    dims = list(op.dimension_map.get_values())
    if len(set(dims)) != len(dims) or any(not 0 <= d < rank for d in dims):
        raise VerifyException(f"dimension_map {dims} must name distinct dimensions of the "
                              f"rank-{rank} {what}")
    sliced = shape_of(slices)
    if len(sliced) < len(batch) or not _same_shape(sliced[:len(batch)], batch):
        raise VerifyException(f"{slices.type} must start with the indices' batch shape "
                              f"{list(batch)}")
    slice_shape = sliced[len(batch):]
    if len(slice_shape) > rank:
        raise VerifyException(f"the slice of {slices.type} has more dimensions than {what} "
                              f"{target.type}")
    for i, s in enumerate(slice_shape):
        full = shape_of(target)[rank - len(slice_shape) + i]
        if s != DYNAMIC_INDEX and full != DYNAMIC_INDEX and s > full:
            raise VerifyException(f"slice dimension {i} of {slices.type} is larger than {what} "
                                  f"{target.type}")
    if mask is not None and (element_type(mask) != I1 or not _same_shape(shape_of(mask), batch)):
        raise VerifyException(f"the mask {mask.type} must be i1 of the batch shape {list(batch)}")
    del depth


def _batch_pairs(op: ExtOp, slices: int) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """The indices' batch dimensions against those of operand `slices` (updates or output) and
    of the mask."""
    batch, _ = index_layout(op, op.inputs[1])
    dims = [(i, i) for i in range(len(batch))]
    return [(1, slices, dims)] + ([(1, 2, dims)] if len(op.inputs) == 3 else [])


class Scatter(ExtOp):
    """Writes each update slice into the output at the coordinates its indices give (for the
    output dimensions `dimension_map` names; the slice lies along the output's last dimensions):
    output[t] = region(update, output[t]), in the order of the updates. An optional i1 mask of the
    batch shape skips the updates where it is false."""

    def check_op(self) -> None:
        self.check_counts((2, 3), (1,))
        if self.unique_indices is None:
            raise VerifyException("scatter needs unique_indices(true|false)")
        updates, indices = self.inputs[0], self.inputs[1]
        mask = self.inputs[2] if len(self.inputs) == 3 else None
        _check_indexed(self, indices, mask, updates, self.outputs[0], "output")
        t = element_type(self.outputs[0])
        self.check_region([element_type(updates), t], t)

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        return _batch_pairs(self, 0)


class Gather(ExtOp):
    """The reverse of scatter: each output slice is read from the source at the coordinates its
    indices give; where an optional i1 mask is false the output keeps its value."""

    def check_op(self) -> None:
        self.check_counts((2, 3), (1,))
        source, indices = self.inputs[0], self.inputs[1]
        mask = self.inputs[2] if len(self.inputs) == 3 else None
        _check_indexed(self, indices, mask, self.outputs[0], source, "source")
        if element_type(source) != element_type(self.outputs[0]):
            raise VerifyException("source and output must have one element type")
        if self.region.blocks:
            raise VerifyException("gather takes no region")

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        return _batch_pairs(self, len(self.inputs))


class ArgCompare(ExtOp):
    """The best element along `dimension` and its index (plus `index_base`): the region yields
    whether lhs is better than rhs; the first of equal elements wins. The outputs' initial
    values take part as the element seen first."""

    def check_op(self) -> None:
        self.check_counts((1,), (2,))
        shape = shape_of(self.inputs[0])
        d = self.check_dim(len(shape))
        for i, v in enumerate(self.outputs):
            if not _same_shape(shape_of(v), _without(shape, d)):
                raise VerifyException(f"output #{i} {v.type} must have the input's shape "
                                      f"without dimension {d}")
        t = element_type(self.inputs[0])
        if element_type(self.outputs[0]) != t:
            raise VerifyException("the value output must have the input's element type")
        if not isinstance(element_type(self.outputs[1]), IntegerType):
            raise VerifyException("the index output must have an integer element type")
        if len(self.index_base) > 1:
            raise VerifyException("index_base takes one value")
        self.check_region([t, t], I1)

    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        return [self._same(0, 1, self.dim()), self._same(1, 2)]


class Attention(ExtOp):
    """softmax(scale * Q K^T [+ mask]) V along the key dimension, shapes given by
    `indexing_maps` over (batch..., m, k1, k2, n): Q (m, k1), K (k2, k1), V (k2, n), the scale
    a scalar, an optional mask (m, k2) (i1: false excludes a key; float: added), the output
    (m, n). The region maps each score and yields it back (IREE's score modification)."""

    def check_op(self) -> None:
        self.check_counts((4, 5), (1,))
        if self.indexing_maps is None or len(self.indexing_maps.data) != len(self.inputs) + 1:
            raise VerifyException("attention needs one indexing map per operand")
        if not isinstance(self.inputs[3].type, AnyFloat):
            raise VerifyException(f"the scale must be a float scalar, got {self.inputs[3].type}")
        for i, v in enumerate([*self.inputs[:3], self.outputs[0]]):
            if not isinstance(element_type(v), AnyFloat):
                raise VerifyException(f"operand #{i} {v.type} must have a float element type")
        if not self.region.blocks:
            raise VerifyException("the op needs a region")
        self.check_region([a.type for a in self.region.block.args], None)


    def equal_dims(self) -> list[tuple[int, int, list[tuple[int, int]]]]:
        """Operand dimensions indexed by one loop of the maps agree with the first of them."""
        assert self.indexing_maps is not None
        first: dict[int, tuple[int, int]] = {}
        pairs: list[tuple[int, int, list[tuple[int, int]]]] = []
        for k, m in enumerate(self.indexing_maps.data):
            for j, e in enumerate(m.data.results):  # type: ignore[attr-defined]
                position = getattr(e, "position", None)
                if position is None:
                    continue
                if position in first:
                    a, i = first[position]
                    pairs.append((a, k, [(i, j)]))
                else:
                    first[position] = (k, j)
        return pairs


class OnlineAttention(Attention):
    """One step of a softmax computed in parts: attention's scores, combined with the running
    (acc, max, sum) its outputs hold into the next ones (acc not yet divided by sum). Maps: Q, K,
    V, scale, [mask], acc (m, n), max and sum (m)."""

    def check_op(self) -> None:
        self.check_counts((4, 5), (3,))
        if self.indexing_maps is None or len(self.indexing_maps.data) != len(self.inputs) + 3:
            raise VerifyException("online_attention needs one indexing map per operand")
        for i, v in enumerate([*self.inputs[:3], *self.outputs]):
            if not isinstance(element_type(v), AnyFloat):
                raise VerifyException(f"operand #{i} {v.type} must have a float element type")
        if not self.region.blocks:
            raise VerifyException("the op needs a region")
        self.check_region([a.type for a in self.region.block.args], None)


# The ops that stay to the end as kernels of their own (the others become these and linalg in
# the input phase): roots of dispatch regions.
KERNEL_OPS: tuple[type[ExtOp], ...] = (Sort, Scan, Scatter, Gather)


def define(base: type[ExtOp], name: str) -> type[ExtOp]:
    """The op `name` with `base`'s meaning: xDSL cannot subclass a defined op, so each dialect
    (this one, `tm_tensor`) defines its own from the shared, undefined classes."""
    return irdl_op_definition(type(base.__name__ + "Op", (base,), {"name": name, "__doc__": base.__doc__}))


SortOp = define(Sort, "iree_linalg_ext.sort")
TopkOp = define(Topk, "iree_linalg_ext.topk")
# topk_v2 (`is_sorted`: the k results come best first, as weir's always do) means what topk does.
TopkV2Op = define(Topk, "iree_linalg_ext.topk_v2")
ScanOp = define(Scan, "iree_linalg_ext.scan")
ScatterOp = define(Scatter, "iree_linalg_ext.scatter")
GatherOp = define(Gather, "iree_linalg_ext.gather")
ArgCompareOp = define(ArgCompare, "iree_linalg_ext.arg_compare")
AttentionOp = define(Attention, "iree_linalg_ext.attention")
OnlineAttentionOp = define(OnlineAttention, "iree_linalg_ext.online_attention")

DIALECT = Dialect("iree_linalg_ext", [SortOp, TopkOp, TopkV2Op, ScanOp, ScatterOp, GatherOp, ArgCompareOp,
                                      AttentionOp, OnlineAttentionOp, YieldOp], [])
