"""Lowers one outlined dispatch function (linalg on tensors) into the reference target's kernel
description (weir/format/reference_kernel.py). Anything it cannot describe is a compile error at
the op, so the runtime never meets an op it cannot run."""

from __future__ import annotations

from weir.compiler.input.supported_ops import ELEMENTWISE_OPS
from weir.compiler.targets.element_types import dtype_name
from weir.format import reference_kernel as k
from weir.ir.diagnostics import error_at
from weir.ir.window_ops import WINDOW_LAYOUTS, window_pair
from weir.ir.upstream import (
    AffineConstantExpr,
    AffineDimExpr,
    AffineMap,
    arith,
    ArrayAttr,
    Block,
    DenseIntOrFPElementsAttr,
    EmptyOp,
    FloatAttr,
    func,
    IntegerAttr,
    linalg,
    Operation,
    SSAValue,
    TensorType,
)

CMPF_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
                   "ult", "ule", "une", "uno", "true")
CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CAST_OPS = frozenset({"extf", "truncf", "sitofp", "uitofp", "fptosi", "fptoui", "extsi", "extui",
                      "trunci", "bitcast", "index_cast"})


def _scalar_value(attr: object) -> int | float | bool:
    if isinstance(attr, IntegerAttr):
        return int(attr.value.data)
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    raise TypeError(attr)


class EntryTranslator:
    def __init__(self, fn: func.FuncOp, target: str = "reference"):
        """`target`: the backend whose compile errors this description's failures are (llvm-cpu
        lowers the same description)."""
        self.target = target
        self.fn = fn
        self.ops: list[k.KernelOp] = []
        self.values: dict[SSAValue, int] = {}
        self.push: dict[SSAValue, int] = {}
        self.scalars: dict[SSAValue, int | float | bool] = {}

    def translate(self) -> k.EntryPoint:
        fn = self.fn
        args = list(fn.body.block.args)
        tensors = [a for a in args if isinstance(a.type, TensorType)]
        for i, a in enumerate(args[len(tensors):]):
            self.push[a] = i
        binding_dims = fn.attributes.get("weir.binding_dims")
        assert isinstance(binding_dims, ArrayAttr)
        dims_of = [[d.value.data for d in entry.data] for entry in binding_dims.data]  # type: ignore[attr-defined]
        for i, a in enumerate(tensors):
            self._emit(a, k.Load(i, dtype_name(a.type.element_type, fn),  # type: ignore[attr-defined]
                                 self._shape_from(a.type, dims_of[i])))  # type: ignore[arg-type]
        for op in fn.body.block.ops:
            if isinstance(op, func.ReturnOp):
                for j, v in enumerate(op.arguments):
                    self.ops.append(k.Store(self._value(v, op), len(tensors) + j))
            else:
                self._op(op)
        return k.EntryPoint(fn.sym_name.data, len(tensors) + len(fn.function_type.outputs.data),
                            len(self.push), tuple(self.ops))

    # --- helpers ---------------------------------------------------------------------------

    def _emit(self, value: SSAValue | None, op: k.KernelOp) -> int:
        self.ops.append(op)
        n = len(self.ops) - 1
        if value is not None:
            self.values[value] = n
        return n

    def _value(self, v: SSAValue, user: Operation) -> int:
        if v not in self.values:
            raise error_at(user, f"{self.target} target: operand is not a tensor computed in this "
                                 "dispatch")
        return self.values[v]

    def _shape_from(self, t: TensorType, push_indices: list[int]) -> k.Shape:
        dims: list[k.Dim] = []
        it = iter(push_indices)
        for d in t.get_shape():
            dims.append(k.PushDim(next(it)) if d < 0 else d)
        return tuple(dims)

    def _shape(self, t: TensorType, dyn: list[SSAValue], user: Operation) -> k.Shape:
        indices = []
        for d in dyn:
            if d not in self.push:
                raise error_at(user, f"{self.target} target: a dynamic size must be a dispatch "
                                     "argument")
            indices.append(self.push[d])
        return self._shape_from(t, indices)

    def _op(self, op: Operation) -> None:
        if isinstance(op, arith.ConstantOp):
            if isinstance(op.result.type, TensorType):
                value = op.value
                if not (isinstance(value, DenseIntOrFPElementsAttr) and value.is_splat()):
                    raise error_at(op, f"{self.target} target: only splat constants can live inside "
                                       "a dispatch")
                t = op.result.type
                empty = self._emit(None, k.Empty(dtype_name(t.element_type, op),
                                                 tuple(t.get_shape())))
                self._emit(op.result, k.Fill(empty, value.get_values()[0]))  # type: ignore[arg-type]
            else:
                self.scalars[op.result] = _scalar_value(op.value)
        elif isinstance(op, EmptyOp):
            t = op.tensor.type
            assert isinstance(t, TensorType)
            self._emit(op.tensor, k.Empty(dtype_name(t.element_type, op),
                                          self._shape(t, list(op.dynamic_sizes), op)))
        elif isinstance(op, linalg.FillOp):
            v = op.inputs[0]
            if v not in self.scalars:
                raise error_at(op, f"{self.target} target: linalg.fill needs a constant value")
            self._emit(op.results[0], k.Fill(self._value(op.outputs[0], op), self.scalars[v]))
        elif isinstance(op, linalg.GenericOp):
            self._generic(op)
        elif isinstance(op, linalg.MatmulOp):
            self._emit(op.results[0], k.Matmul(self._value(op.inputs[0], op),
                                               self._value(op.inputs[1], op),
                                               self._value(op.outputs[0], op)))
        elif isinstance(op, linalg.Conv2DNhwc_HwcfOp):
            layout = WINDOW_LAYOUTS[type(op)]
            self._emit(op.results[0], k.Conv2D(
                self._value(op.inputs[0], op), self._value(op.inputs[1], op),
                self._value(op.outputs[0], op), window_pair(op, "strides"),
                window_pair(op, "dilations"), layout.input, layout.window))
        elif isinstance(op, linalg.PoolingNchwMaxOp):
            self._pool(op, "max")
        elif isinstance(op, linalg.TransposeOp):
            self._emit(op.results[0], k.Transpose(
                self._value(op.inputs[0], op), self._value(op.outputs[0], op),
                tuple(op.permutation.get_values())))  # type: ignore[arg-type]
        elif isinstance(op, linalg.BroadcastOp):
            self._emit(op.result[0], k.Broadcast(
                self._value(op.input, op), self._value(op.init, op),
                tuple(op.dimensions.get_values())))  # type: ignore[arg-type]
        elif isinstance(op, linalg.ReduceOp):
            body, yields = self._body(op.region.block, op)
            self._emit(op.result[0], k.Reduce(
                (self._value(op.input, op),), (self._value(op.init, op),),
                tuple(op.dimensions.get_values()), body, yields))  # type: ignore[arg-type]
        else:
            raise error_at(op, f"{self.target} target: '{op.name}' is not supported in a dispatch")

    def _pool(self, op: linalg.PoolingNchwMaxOp, kind: str) -> None:
        """The window operand only gives the window's size, which must therefore be static."""
        window = op.inputs[1].type
        assert isinstance(window, TensorType)
        h, w = window.get_shape()
        if h < 0 or w < 0:
            raise error_at(op, f"{self.target} target: the window of '{op.name}' must have a static "
                               f"shape, got {window}")
        self._emit(op.results[0], k.Pool2D(
            self._value(op.inputs[0], op), self._value(op.outputs[0], op), kind,
            WINDOW_LAYOUTS[type(op)].input, (h, w), window_pair(op, "strides"),
            window_pair(op, "dilations")))

    def _generic(self, op: linalg.GenericOp) -> None:
        maps: list[tuple[int, ...]] = []
        for m in op.indexing_maps:
            amap: AffineMap = m.data  # type: ignore[attr-defined]
            entries: list[int] = []
            for e in amap.results:
                if isinstance(e, AffineDimExpr):
                    entries.append(e.position)
                elif isinstance(e, AffineConstantExpr) and e.value == 0:
                    entries.append(-1)
                else:
                    raise error_at(op, f"{self.target} target: indexing map {amap} is not a "
                                       "projected permutation")
            maps.append(tuple(entries))
        body, yields = self._body(op.body.block, op)
        node = self._emit(None, k.Generic(
            tuple(self._value(v, op) for v in op.inputs),
            tuple(self._value(v, op) for v in op.outputs),
            tuple(maps), tuple(it.data.value for it in op.iterator_types),
            body, yields))
        if len(op.results) == 1:
            self.values[op.results[0]] = node
        else:
            for i, r in enumerate(op.results):
                self._emit(r, k.Result(node, i))

    def _body(self, block: Block, owner: Operation) -> tuple[tuple[k.ScalarOp, ...], tuple[int, ...]]:
        numbers: dict[SSAValue, int] = {a: i for i, a in enumerate(block.args)}
        ops: list[k.ScalarOp] = []
        base = len(block.args)

        def number(v: SSAValue, user: Operation) -> int:
            if v in numbers:
                return numbers[v]
            if v in self.scalars:
                ops.append(k.ScalarOp("constant", (), dtype_name(v.type, user), self.scalars[v]))
                numbers[v] = base + len(ops) - 1
                return numbers[v]
            raise error_at(user, f"{self.target} target: a dispatch body may only use its block "
                                 "arguments and constants")

        yields: tuple[int, ...] = ()
        for op in block.ops:
            if isinstance(op, linalg.YieldOp):
                yields = tuple(number(v, op) for v in op.operands)
                break
            result_dtype = dtype_name(op.results[0].type, op)
            if isinstance(op, arith.ConstantOp):
                ops.append(k.ScalarOp("constant", (), result_dtype, _scalar_value(op.value)))
            elif isinstance(op, linalg.IndexOp):
                ops.append(k.ScalarOp("index", (), "index", op.dim.value.data))
            elif op.name in ELEMENTWISE_OPS:
                name = ELEMENTWISE_OPS[op.name]
                args = tuple(number(v, op) for v in op.operands)
                attr: int | float | str | bool | None = None
                if name == "cmpf":
                    attr = CMPF_PREDICATES[op.predicate.value.data]  # type: ignore[attr-defined]
                elif name == "cmpi":
                    attr = CMPI_PREDICATES[op.predicate.value.data]  # type: ignore[attr-defined]
                elif name in CAST_OPS:
                    attr = result_dtype
                ops.append(k.ScalarOp(name, args, result_dtype, attr))
            else:
                raise error_at(op, f"{self.target} target: '{op.name}' is not supported in a "
                                   f"{owner.name} body")
            numbers[op.results[0]] = base + len(ops) - 1
        return tuple(ops), yields
