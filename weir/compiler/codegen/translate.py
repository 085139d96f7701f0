"""Lowers one outlined dispatch function (linalg on tensors) into the kernel description
(weir/format/kernel_description.py) that every target starts from. Anything it cannot describe is
a compile error at the op, so no target and no runtime meets an op it cannot run."""

from __future__ import annotations

from weir.compiler.input.supported_ops import ELEMENTWISE_OPS
from weir.compiler.targets.element_types import dtype_name
from weir.compiler.codegen import fold_scalars, translate_slices
from weir.compiler.codegen.translate_ext import YIELD_OPS, translate_ext
from weir.format import kernel_description as k
from weir.ir.diagnostics import error_at, location_of
from weir.dialects import linalg_ext
from weir.ir.window_ops import KERNEL_WINDOWS, WINDOW_LAYOUTS, WindowLayout, window_pair
from weir.ir.upstream import (
    AffineConstantExpr,
    AffineDimExpr,
    AffineMap,
    arith,
    ArrayAttr,
    Block,
    cf,
    DenseIntOrFPElementsAttr,
    EmptyOp,
    FloatAttr,
    func,
    IntegerAttr,
    linalg,
    Operation,
    SSAValue,
    tensor,
    TensorType,
)

CMPF_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
                   "ult", "ule", "une", "uno", "true")
CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CAST_OPS = frozenset({"extf", "truncf", "sitofp", "uitofp", "fptosi", "fptoui", "extsi", "extui",
                      "trunci", "bitcast", "index_cast", "index_castui"})


def _scalar_value(attr: object) -> int | float | bool:
    if isinstance(attr, IntegerAttr):
        return int(attr.value.data)
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    raise TypeError(attr)


class EntryTranslator:
    def __init__(self, fn: func.FuncOp, target: str = "reference", in_order: bool = False):
        """`target`: the backend whose compile errors this description's failures are (llvm-cpu
        lowers the same description); `in_order`: reductions are marked to combine floats in
        loop order (--iree-llvmcpu-reassociate-fp-reductions=false)."""
        self.target = target
        self.in_order = in_order
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
        """A dynamic size given by a constant (a cast to a dynamic type, say) is static here."""
        sizes = iter(dyn)
        dims: list[k.Dim] = []
        for static in t.get_shape():
            d = next(sizes) if static < 0 else None
            if d is None:
                dims.append(static)
            elif d in self.push:
                dims.append(k.PushDim(self.push[d]))
            elif d in self.scalars:
                dims.append(int(self.scalars[d]))
            else:
                raise error_at(user, f"{self.target} target: a dynamic size must be a dispatch "
                                     "argument")
        return tuple(dims)

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
            if v in self.scalars:
                self._emit(op.results[0], k.Fill(self._value(op.outputs[0], op), self.scalars[v]))
            elif v in self.push:
                self._fill_from_push(op, v)
            else:
                raise error_at(op, f"{self.target} target: linalg.fill needs a constant or a "
                                   "scalar captured from the host")
        elif isinstance(op, linalg.GenericOp):
            self._generic(op)
        elif isinstance(op, linalg.MatmulOp | linalg_ext.BatchMatmulOp):
            if isinstance(op, linalg_ext.MatmulOp) and op.has_explicit_maps():
                raise error_at(op, f"{self.target} target: linalg.matmul with indexing_maps must "
                                   "be generalized in the input phase")
            self._emit(op.results[0], k.Matmul(self._value(op.inputs[0], op),
                                               self._value(op.inputs[1], op),
                                               self._value(op.outputs[0], op)))
        elif op.name in KERNEL_WINDOWS:
            self._window(op, WINDOW_LAYOUTS[op.name])
        elif isinstance(op, linalg.TransposeOp):
            self._emit(op.results[0], k.Transpose(
                self._value(op.inputs[0], op), self._value(op.outputs[0], op),
                tuple(op.permutation.get_values())))  # type: ignore[arg-type]
        elif isinstance(op, linalg.BroadcastOp):
            self._emit(op.result[0], k.Broadcast(
                self._value(op.input, op), self._value(op.init, op),
                tuple(op.dimensions.get_values())))  # type: ignore[arg-type]
        elif isinstance(op, linalg.ReduceOp):
            body, yields, captures, _ = self._body(op.region.block, op)
            if captures or any(s.op in k.CHECKED_SCALAR_OPS for s in body):
                raise error_at(op, f"{self.target} target: tensor.extract and cf.assert are not "
                                   "supported in a linalg.reduce body")
            self._emit(op.result[0], k.Reduce(
                (self._value(op.input, op),), (self._value(op.init, op),),
                tuple(op.dimensions.get_values()), body, yields,  # type: ignore[arg-type]
                self.in_order))
        elif isinstance(op, tensor.CollapseShapeOp | tensor.ExpandShapeOp):
            shape = tuple(op.result.type.get_shape())  # type: ignore[attr-defined]
            if any(d < 0 for d in shape):
                raise error_at(op, f"{self.target} target: a reshape in a dispatch must have a "
                                   "static shape")
            self._emit(op.result, k.Reshape(self._value(op.src, op), shape))
        elif isinstance(op, tensor.ExtractSliceOp):
            translate_slices.extract_slice(self, op)
        elif isinstance(op, tensor.InsertSliceOp):
            translate_slices.insert_slice(self, op)
        elif translate_ext(self, op):
            pass
        elif len(op.results) == 1 and op.operands and all(v in self.scalars for v in op.operands) \
                and (value := fold_scalars.fold(op, [self.scalars[v] for v in op.operands])) \
                is not None:
            self.scalars[op.results[0]] = value
        else:
            raise error_at(op, f"{self.target} target: '{op.name}' is not supported in a dispatch")

    def _scalar_source(self, v: SSAValue, user: Operation) -> k.ScalarOp:
        """The scalar op that makes a constant or a captured host scalar inside a body."""
        if v in self.scalars:
            return k.ScalarOp("constant", (), dtype_name(v.type, user), self.scalars[v])
        return k.ScalarOp("push", (), dtype_name(v.type, user), self.push[v])

    def _fill_from_push(self, op: linalg.FillOp, v: SSAValue) -> None:
        """A fill with a host scalar: an elementwise generic that yields the pushed value."""
        init = op.outputs[0]
        t = init.type
        assert isinstance(t, TensorType)
        rank = len(t.get_shape())
        self._emit(op.results[0], k.Generic(
            (), (self._value(init, op),), (tuple(range(rank)),), ("parallel",) * rank,
            (self._scalar_source(v, op),), (1,)))

    def _window(self, op: Operation, layout: WindowLayout) -> None:
        """Convolutions become Conv2D, pooling ops Pool2D, each with the op's operand layouts.
        A pooling window operand only gives the window's size, which must therefore be static."""
        x, window, init = op.operands
        strides, dilations = window_pair(op, "strides"), window_pair(op, "dilations")
        if layout.pooling is None:
            self._emit(op.results[0], k.Conv2D(
                self._value(x, op), self._value(window, op), self._value(init, op), strides,
                dilations, layout.input, layout.window))
            return
        t = window.type
        assert isinstance(t, TensorType)
        h, w = t.get_shape()
        if h < 0 or w < 0:
            raise error_at(op, f"{self.target} target: the window of '{op.name}' must have a static "
                               f"shape, got {t}")
        self._emit(op.results[0], k.Pool2D(
            self._value(x, op), self._value(init, op), layout.pooling, layout.input, (h, w),
            strides, dilations))

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
        iterators = tuple(it.data.value for it in op.iterator_types)
        self._check_output_maps(op, maps[len(op.inputs):], iterators)
        body, yields, captures, checks = self._body(op.body.block, op)
        node = self._emit(None, k.Generic(
            tuple(self._value(v, op) for v in op.inputs),
            tuple(self._value(v, op) for v in op.outputs),
            tuple(maps), iterators, body, yields, captures, checks,
            self.in_order and "reduction" in iterators))
        if len(op.results) == 1:
            self.values[op.results[0]] = node
        else:
            for i, r in enumerate(op.results):
                self._emit(r, k.Result(node, i))

    def _check_output_maps(self, op: linalg.GenericOp, maps: list[tuple[int, ...]],
                           iterators: tuple[str, ...]) -> None:
        """Each output element is written by exactly one point of the parallel loops: an output
        map names every parallel loop once and no reduction loop."""
        for i, entries in enumerate(maps):
            loops = [d for d in entries if d >= 0]
            problem = ""
            if len(set(loops)) != len(loops):
                problem = "uses a loop dimension twice"
            elif reduced := [d for d in loops if iterators[d] != "parallel"]:
                problem = f"is indexed by reduction loop(s) {reduced}"
            elif missing := [d for d, it in enumerate(iterators)
                             if it == "parallel" and d not in loops]:
                problem = f"is not indexed by parallel loop(s) {missing}"
            if problem:
                raise error_at(op, f"{self.target} target: output #{i} of linalg.generic "
                                   f"{problem}, which is not supported")

    def _body(self, block: Block, owner: Operation) -> tuple[
            tuple[k.ScalarOp, ...], tuple[int, ...], tuple[int, ...], tuple[str, ...]]:
        """The body's scalar ops and yields, the tensors its `extract`s read (value numbers) and
        the message of each check (`extract`, `assert`) in body order."""
        numbers: dict[SSAValue, int] = {a: i for i, a in enumerate(block.args)}
        ops: list[k.ScalarOp] = []
        base = len(block.args)
        captures: list[int] = []
        checks: list[str] = []

        def number(v: SSAValue, user: Operation) -> int:
            if v in numbers:
                return numbers[v]
            if v in self.scalars or v in self.push:
                ops.append(self._scalar_source(v, user))
                numbers[v] = base + len(ops) - 1
                return numbers[v]
            raise error_at(user, f"{self.target} target: a dispatch body may only use its block "
                                 "arguments, constants and scalars captured from the host")

        yields: tuple[int, ...] = ()
        live = _live_ops(block)
        for op in block.ops:
            if isinstance(op, (linalg.YieldOp, *YIELD_OPS)):
                yields = tuple(number(v, op) for v in op.operands)
                break
            if op not in live:
                continue  # computes nothing the body yields (the kernel format refuses dead code)
            result_dtype = dtype_name(op.results[0].type if op.results else op.operands[0].type,
                                      op)
            if isinstance(op, arith.ConstantOp):
                ops.append(k.ScalarOp("constant", (), result_dtype, _scalar_value(op.value)))
            elif isinstance(op, linalg.IndexOp):
                ops.append(k.ScalarOp("index", (), "index", op.dim.value.data))
            elif isinstance(op, tensor.ExtractOp):
                table = self._value(op.tensor, op)
                if table not in captures:
                    captures.append(table)
                ops.append(k.ScalarOp("extract", tuple(number(v, op) for v in op.indices),
                                      result_dtype, captures.index(table)))
                checks.append(f"tensor.extract at {_where(op)}")
            elif isinstance(op, cf.AssertOp):
                ops.append(k.ScalarOp("assert", (number(op.arg, op),), "i1"))
                checks.append(f"cf.assert at {_where(op)} failed: {op.msg.data}")
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
            if op.results:
                numbers[op.results[0]] = base + len(ops) - 1
        return tuple(ops), yields, tuple(captures), tuple(checks)


def _where(op: Operation) -> str:
    filename, line, col = location_of(op)
    return f"{filename}:{line}:{col}"


def _live_ops(block: Block) -> set[Operation]:
    """The ops of a body whose results reach its yield or an assert, directly or through other
    ops (a kept assert is a check the body must run)."""
    live: set[Operation] = set()
    needed: set[SSAValue] = set()
    for op in reversed(list(block.ops)):
        if isinstance(op, (linalg.YieldOp, cf.AssertOp, *YIELD_OPS)) or any(r in needed for r in op.results):
            live.add(op)
            needed.update(op.operands)
    return live
