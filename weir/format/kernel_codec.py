"""JSON codec of the kernel description (kernel_description.py): the `reference` target's
payload (`ReferenceExecutable`).

Decoding verifies everything the runtime's numpy interpreter relies on: value numbers refer to
earlier values, every scalar op and dtype is in its closed set, maps and iterators agree, binding
and push-constant indices are in range. Errors are `ModuleFormatError` naming entry point and op.
"""

from __future__ import annotations

import json
from typing import Any

from weir.errors import ModuleFormatError
from weir.format import json_fields as jf
from weir.format import kernel_codec_ext
from weir.format.kernel_description import (
    DTYPES,
    CHECKED_SCALAR_OPS,
    SCALAR_OPS,
    POOL_KINDS,
    Broadcast,
    Conv2D,
    Dim,
    Empty,
    EntryPoint,
    Fill,
    Generic,
    InsertSlice,
    KernelOp,
    Load,
    Matmul,
    Pool2D,
    PushDim,
    Reduce,
    ReferenceExecutable,
    Result,
    ScalarOp,
    Shape,
    Slice,
    Store,
    Transpose,
    Reshape,
)

ITERATORS = ("parallel", "reduction")
CMPF_PREDICATES = frozenset({"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
                             "uge", "ult", "ule", "une", "uno", "true"})
CMPI_PREDICATES = frozenset({"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"})
CAST_OPS = frozenset({"extf", "truncf", "sitofp", "uitofp", "fptosi", "fptoui", "extsi", "extui",
                      "trunci", "bitcast", "index_cast", "index_castui"})
# Ops whose number of operands is fixed (everything else in SCALAR_OPS is binary).
_UNARY = frozenset({"negf", "absf", "exp", "exp2", "log", "log2", "log1p", "tanh", "sqrt", "rsqrt",
                    "sin", "cos", "erf", "floor", "ceil", "round", "roundeven", "absi",
                    "expm1", "atan", "acos", "acosh", "asin", "asinh", "atanh", "cbrt", "cosh",
                    "sinh", "tan"}) | CAST_OPS
_TERNARY = frozenset({"fma", "select"})
_NULLARY = frozenset({"constant", "index", "push"})
# Ops whose `attr` means something (casts may repeat their result dtype there); every other op's
# attr is null.
_ATTR_OPS = frozenset({"cmpf", "cmpi", "extract"}) | _NULLARY
# Window sizes, strides and dilations stay far below any index type's range.
_MAX_WINDOW_PARAM = 1 << 30
# The fields of each kernel op, as the encoder writes them: all required, no other accepted.
_OP_KEYS: dict[str, tuple[str, ...]] = {
    "load": ("op", "binding", "dtype", "shape", "offset"),
    "empty": ("op", "dtype", "shape"),
    "fill": ("op", "init", "value"),
    "generic": ("op", "inputs", "outputs", "maps", "iterators", "body", "yields", "captures",
                "checks", "in_order"),
    "matmul": ("op", "lhs", "rhs", "init"),
    "conv2d": ("op", "input", "filter", "init", "strides", "dilations", "input_layout",
               "filter_layout"),
    "pool2d": ("op", "input", "init", "kind", "layout", "window", "strides", "dilations"),
    "transpose": ("op", "input", "init", "permutation"),
    "broadcast": ("op", "input", "init", "dimensions"),
    "reduce": ("op", "inputs", "inits", "dimensions", "body", "yields", "in_order"),
    "result": ("op", "source", "index"),
    "store": ("op", "value", "binding", "offset"),
    "slice": ("op", "input", "offsets", "sizes", "strides", "dropped"),
    "insert_slice": ("op", "source", "dest", "offsets", "strides", "dropped"),
    "reshape": ("op", "input", "shape"),
    **kernel_codec_ext.OP_KEYS,
}


def scalar_op_arity(op: str) -> int:
    """The operand count of every op but `extract`, which has one per dimension it reads."""
    if op in _NULLARY:
        return 0
    if op in _UNARY or op == "assert":
        return 1
    if op in _TERNARY:
        return 3
    return 2


# ----------------------------------------------------------------------------------- encoding


def _dim_json(d: Dim) -> Any:
    return {"push": d.index} if isinstance(d, PushDim) else d


def _shape_json(shape: Shape) -> list[Any]:
    return [_dim_json(d) for d in shape]


def _body_json(body: tuple[ScalarOp, ...]) -> list[Any]:
    return [{"op": s.op, "args": list(s.args), "dtype": s.dtype, "attr": s.attr} for s in body]


def _op_json(op: KernelOp) -> dict[str, Any]:
    if isinstance(op, Load):
        return {"op": "load", "binding": op.binding, "dtype": op.dtype, "shape": _shape_json(op.shape),
                "offset": op.offset}
    if isinstance(op, Empty):
        return {"op": "empty", "dtype": op.dtype, "shape": _shape_json(op.shape)}
    if isinstance(op, Fill):
        return {"op": "fill", "init": op.init, "value": op.value}
    if isinstance(op, Generic):
        return {"op": "generic", "inputs": list(op.inputs), "outputs": list(op.outputs),
                "maps": [list(m) for m in op.maps], "iterators": list(op.iterators),
                "body": _body_json(op.body), "yields": list(op.yields),
                "captures": list(op.captures), "checks": list(op.checks),
                "in_order": op.in_order}
    if isinstance(op, Matmul):
        return {"op": "matmul", "lhs": op.lhs, "rhs": op.rhs, "init": op.init}
    if isinstance(op, Conv2D):
        return {"op": "conv2d", "input": op.input, "filter": op.filter, "init": op.init,
                "strides": list(op.strides), "dilations": list(op.dilations),
                "input_layout": op.input_layout, "filter_layout": op.filter_layout}
    if isinstance(op, Pool2D):
        return {"op": "pool2d", "input": op.input, "init": op.init, "kind": op.kind,
                "layout": op.layout, "window": list(op.window), "strides": list(op.strides),
                "dilations": list(op.dilations)}
    if isinstance(op, Transpose):
        return {"op": "transpose", "input": op.input, "init": op.init,
                "permutation": list(op.permutation)}
    if isinstance(op, Reshape):
        return {"op": "reshape", "input": op.input, "shape": list(op.shape)}
    if isinstance(op, Broadcast):
        return {"op": "broadcast", "input": op.input, "init": op.init,
                "dimensions": list(op.dimensions)}
    if isinstance(op, Reduce):
        return {"op": "reduce", "inputs": list(op.inputs), "inits": list(op.inits),
                "dimensions": list(op.dimensions), "body": _body_json(op.body),
                "yields": list(op.yields), "in_order": op.in_order}
    if isinstance(op, Result):
        return {"op": "result", "source": op.source, "index": op.index}
    if isinstance(op, Store):
        return {"op": "store", "value": op.value, "binding": op.binding, "offset": op.offset}
    if isinstance(op, Slice):
        return {"op": "slice", "input": op.input, "offsets": _shape_json(op.offsets),
                "sizes": _shape_json(op.sizes), "strides": _shape_json(op.strides),
                "dropped": list(op.dropped)}
    if isinstance(op, InsertSlice):
        return {"op": "insert_slice", "source": op.source, "dest": op.dest,
                "offsets": _shape_json(op.offsets), "strides": _shape_json(op.strides),
                "dropped": list(op.dropped)}
    ext = kernel_codec_ext.op_json(op, _body_json)
    if ext is not None:
        return ext
    raise TypeError(f"not a kernel op: {op!r}")


def encode_reference_executable(exe: ReferenceExecutable) -> bytes:
    """Verifies then encodes, so a compiler bug shows up at compile time, not at load time."""
    payload = {
        "format": "weir-reference-1",
        "entry_points": [
            {"name": e.name, "num_bindings": e.num_bindings,
             "num_push_constants": e.num_push_constants, "ops": [_op_json(o) for o in e.ops]}
            for e in exe.entry_points
        ],
    }
    data = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    decode_reference_executable(data)
    return data


# ----------------------------------------------------------------------------------- decoding


class _EntryDecoder:
    """Decodes one entry point, tracking each value's kind (tensor rank/dtype or multi-result)."""

    def __init__(self, name: str, num_bindings: int, num_push: int) -> None:
        self.name = name
        self.num_bindings = num_bindings
        self.num_push = num_push
        # Per value: (dtype, rank) for tensors, or a tuple of them for multi-result ops.
        self.values: list[Any] = []

    def where(self, k: int) -> str:
        return f"reference executable entry '{self.name}' op {k}"

    def shape(self, value: Any, where: str) -> Shape:
        dims: list[Dim] = []
        for i, d in enumerate(jf.as_list(value, where)):
            if isinstance(d, dict):
                jf.exact_keys(d, ("push",), f"{where}[{i}]")
                dims.append(PushDim(jf.as_int(jf.field(d, "push", f"{where}[{i}]"), f"{where}[{i}].push",
                                              limit=self.num_push)))
            else:
                dims.append(jf.as_int(d, f"{where}[{i}]"))
        return tuple(dims)

    def dtype(self, value: Any, where: str) -> str:
        text = jf.as_str(value, where)
        if text not in DTYPES:
            raise jf.fail(where, f"unknown element type {jf.printable(text)}")
        return text

    def tensor(self, value: Any, where: str) -> tuple[str, int]:
        """A reference to an earlier tensor value; single-result multi-ops count as tensors."""
        v = jf.as_int(value, where, limit=len(self.values))
        kind = self.values[v]
        if isinstance(kind, list):
            if len(kind) != 1:
                raise jf.fail(where, f"value {v} has {len(kind)} results: select one with 'result'")
            return kind[0]  # type: ignore[no-any-return]
        return kind  # type: ignore[no-any-return]

    def body(self, value: Any, nargs: int, nloops: int | None, where: str,
             captures: tuple[tuple[str, int], ...] = ()) -> tuple[ScalarOp, ...]:
        """`captures`: (dtype, rank) of each tensor an `extract` may read."""
        ops: list[ScalarOp] = []
        for i, item in enumerate(jf.as_list(value, where)):
            w = f"{where} body[{i}]"
            o = jf.as_dict(item, w)
            jf.exact_keys(o, ("op", "args", "dtype", "attr"), w)
            name = jf.as_str(jf.field(o, "op", w), w + ".op")
            if name not in SCALAR_OPS:
                raise jf.fail(w, f"unknown scalar op {jf.printable(name)}")
            args = jf.as_int_list(jf.field(o, "args", w), w + ".args", limit=nargs + i)
            dtype = self.dtype(jf.field(o, "dtype", w), w + ".dtype")
            attr = jf.as_scalar(o["attr"], w + ".attr")
            if name == "extract":
                kind = captures[jf.as_int(attr, w + ".attr", limit=len(captures))]
                if len(args) != kind[1] or dtype != kind[0]:
                    raise jf.fail(w, f"'extract' of a rank-{kind[1]} {kind[0]} capture takes "
                                     f"{kind[1]} index operand(s) and gives {kind[0]}")
            elif len(args) != scalar_op_arity(name):
                raise jf.fail(w, f"'{name}' takes {scalar_op_arity(name)} operand(s), got {len(args)}")
            if name == "assert" and dtype != "i1":
                raise jf.fail(w, f"'assert' must produce i1, not {dtype}")
            if name == "cmpf" and attr not in CMPF_PREDICATES:
                raise jf.fail(w, f"unknown cmpf predicate {attr!r}")
            if name == "cmpi" and attr not in CMPI_PREDICATES:
                raise jf.fail(w, f"unknown cmpi predicate {attr!r}")
            if name in ("cmpf", "cmpi") and dtype != "i1":
                raise jf.fail(w, f"'{name}' must produce i1, not {dtype}")
            if name == "index":
                jf.as_int(attr, w + ".attr", limit=nloops)
            if name == "push":
                jf.as_int(attr, w + ".attr", limit=self.num_push)
            if name == "constant" and (attr is None or isinstance(attr, str)):
                raise jf.fail(w, "constant needs a numeric attr")
            if name in CAST_OPS and attr is not None and attr != dtype:
                raise jf.fail(w, f"cast attr {jf.printable(attr)} differs from its result "
                                 f"dtype {dtype}")
            if name not in _ATTR_OPS and name not in CAST_OPS and attr is not None:
                raise jf.fail(w, f"'{name}' takes no attr, got {jf.printable(attr)}")
            ops.append(ScalarOp(name, args, dtype, attr))
        return tuple(ops)

    def op(self, value: Any, k: int) -> KernelOp:
        w = self.where(k)
        o = jf.as_dict(value, w)
        name = jf.as_str(jf.field(o, "op", w), w + ".op")
        if name not in _OP_KEYS:
            raise jf.fail(w, f"unknown kernel op {jf.printable(name)}")
        jf.exact_keys(o, _OP_KEYS[name], w)
        g = lambda key: jf.field(o, key, w)  # noqa: E731
        if name == "load":
            dtype = self.dtype(g("dtype"), w + ".dtype")
            shape = self.shape(g("shape"), w + ".shape")
            op: KernelOp = Load(jf.as_int(g("binding"), w + ".binding", limit=self.num_bindings),
                                dtype, shape, jf.as_int(o["offset"], w + ".offset"))
            self.values.append((dtype, len(shape)))
            return op
        if name == "empty":
            dtype = self.dtype(g("dtype"), w + ".dtype")
            shape = self.shape(g("shape"), w + ".shape")
            self.values.append((dtype, len(shape)))
            return Empty(dtype, shape)
        if name == "fill":
            init = jf.as_int(g("init"), w + ".init", limit=len(self.values))
            kind = self.tensor(init, w + ".init")
            fill_value = jf.as_scalar(o["value"], w + ".value")
            if fill_value is None or isinstance(fill_value, str):
                raise jf.fail(w, "fill needs a numeric value")
            self.values.append(kind)
            return Fill(init, fill_value)
        if name == "generic":
            return self.generic(o, w)
        if name == "matmul":
            lhs, rhs, init = (jf.as_int(g(key), f"{w}.{key}", limit=len(self.values))
                              for key in ("lhs", "rhs", "init"))
            kinds = [self.tensor(v, w) for v in (lhs, rhs, init)]
            ranks = {r for _, r in kinds}
            if ranks not in ({2}, {3}):
                raise jf.fail(w, "matmul operands must all be 2-D (or all 3-D for batch_matmul)")
            self.values.append(kinds[2])
            return Matmul(lhs, rhs, init)
        if name == "conv2d":
            return self.conv2d(o, w)
        if name == "pool2d":
            return self.pool2d(o, w)
        if name == "transpose":
            inp = jf.as_int(g("input"), w + ".input", limit=len(self.values))
            init = jf.as_int(g("init"), w + ".init", limit=len(self.values))
            perm = jf.as_int_list(g("permutation"), w + ".permutation")
            kin, kinit = self.tensor(inp, w), self.tensor(init, w)
            if sorted(perm) != list(range(kin[1])) or kinit[1] != kin[1]:
                raise jf.fail(w, f"permutation {list(perm)} does not permute rank {kin[1]}")
            self.values.append(kinit)
            return Transpose(inp, init, perm)
        if name == "reshape":
            return self.reshape(o, w)
        if name == "broadcast":
            inp = jf.as_int(g("input"), w + ".input", limit=len(self.values))
            init = jf.as_int(g("init"), w + ".init", limit=len(self.values))
            kin, kinit = self.tensor(inp, w), self.tensor(init, w)
            dims = jf.as_int_list(g("dimensions"), w + ".dimensions", limit=kinit[1])
            if len(set(dims)) != len(dims) or kin[1] + len(dims) != kinit[1]:
                raise jf.fail(w, f"broadcast dimensions {list(dims)} do not take rank {kin[1]} "
                                 f"to rank {kinit[1]}")
            self.values.append(kinit)
            return Broadcast(inp, init, dims)
        if name == "reduce":
            return self.reduce(o, w)
        if name == "result":
            src = jf.as_int(g("source"), w + ".source", limit=len(self.values))
            kind = self.values[src]
            if not isinstance(kind, list):
                raise jf.fail(w, f"value {src} is not the result of a generic/reduce")
            index = jf.as_int(g("index"), w + ".index", limit=len(kind))
            self.values.append(kind[index])
            return Result(src, index)
        if name == "store":
            value = jf.as_int(g("value"), w + ".value", limit=len(self.values))
            self.tensor(value, w + ".value")
            return Store(value, jf.as_int(g("binding"), w + ".binding", limit=self.num_bindings),
                         jf.as_int(o["offset"], w + ".offset"))
        if name == "slice":
            return self.slice(o, w)
        if name == "insert_slice":
            return self.insert_slice(o, w)
        if name in kernel_codec_ext.OP_KEYS:
            return kernel_codec_ext.decode(self, name, o, w)
        raise AssertionError(name)  # every name in _OP_KEYS is handled above

    def generic(self, o: dict[str, Any], w: str) -> Generic:
        n = len(self.values)
        inputs = jf.as_int_list(jf.field(o, "inputs", w), w + ".inputs", limit=n)
        outputs = jf.as_int_list(jf.field(o, "outputs", w), w + ".outputs", limit=n)
        if not outputs:
            raise jf.fail(w, "generic without outputs")
        kinds = [self.tensor(v, w) for v in inputs + outputs]
        iterators = jf.as_str_list(jf.field(o, "iterators", w), w + ".iterators")
        for it in iterators:
            if it not in ITERATORS:
                raise jf.fail(w, f"unknown iterator {jf.printable(it)}")
        nloops = len(iterators)
        maps_json = jf.as_list(jf.field(o, "maps", w), w + ".maps")
        if len(maps_json) != len(kinds):
            raise jf.fail(w, f"{len(maps_json)} maps for {len(kinds)} operands")
        maps: list[tuple[int, ...]] = []
        covered: set[int] = set()
        for i, (m, kind) in enumerate(zip(maps_json, kinds)):
            mp = jf.as_int_list(m, f"{w}.maps[{i}]", limit=nloops, minimum=-1)
            if len(mp) != kind[1]:
                raise jf.fail(w, f"map {i} has {len(mp)} entries for an operand of rank {kind[1]}")
            loops = [d for d in mp if d >= 0]
            # An input may read a diagonal (one loop indexing several dimensions); an output
            # written that way would leave its other elements unwritten.
            if i >= len(inputs) and len(set(loops)) != len(loops):
                raise jf.fail(w, f"output map {i - len(inputs)} uses a loop dimension twice")
            covered.update(loops)
            maps.append(mp)
        if covered != set(range(nloops)):
            raise jf.fail(w, f"loop dimension(s) {sorted(set(range(nloops)) - covered)} are not "
                             f"indexed by any operand")
        for i in range(len(inputs), len(kinds)):
            for d in maps[i]:
                if d >= 0 and iterators[d] == "reduction":
                    raise jf.fail(w, f"output {i - len(inputs)} is indexed by reduction loop {d}")
            missing = [d for d in range(nloops) if iterators[d] == "parallel" and d not in maps[i]]
            if missing:
                raise jf.fail(w, f"output {i - len(inputs)} is not indexed by parallel loop(s) "
                                 f"{missing}")
        nargs = len(kinds)
        captures = jf.as_int_list(jf.field(o, "captures", w), w + ".captures", limit=n)
        body = self.body(jf.field(o, "body", w), nargs, nloops, w,
                         tuple(self.tensor(v, w + ".captures") for v in captures))
        yields = jf.as_int_list(jf.field(o, "yields", w), w + ".yields", limit=nargs + len(body))
        if len(yields) != len(outputs):
            raise jf.fail(w, f"{len(yields)} yields for {len(outputs)} outputs")
        checks = jf.as_str_list(jf.field(o, "checks", w), w + ".checks")
        checked = sum(1 for s in body if s.op in CHECKED_SCALAR_OPS)
        if len(checks) != checked:
            raise jf.fail(w, f"{len(checks)} check message(s) for {checked} checked op(s)")
        _check_body_uses(body, len(inputs), nargs, yields, w)
        self.values.append([kinds[len(inputs) + i] for i in range(len(outputs))])
        in_order = jf.as_bool(jf.field(o, "in_order", w), w + ".in_order")
        return Generic(inputs, outputs, tuple(maps), iterators, body, yields, captures, checks,
                       in_order)

    def rank4(self, o: dict[str, Any], key: str, w: str) -> tuple[str, int]:
        """The value `o[key]` refers to, which must be a 4-D tensor."""
        kind = self.tensor(jf.field(o, key, w), f"{w}.{key}")
        if kind[1] != 4:
            raise jf.fail(w, f"{key} must be a 4-D tensor, got rank {kind[1]}")
        return kind

    def window_pair(self, o: dict[str, Any], key: str, w: str) -> tuple[int, int]:
        """(H, W) sizes, strides or dilations: two integers >= 1, small enough for any index type."""
        pair = jf.as_int_list(jf.field(o, key, w), f"{w}.{key}", limit=_MAX_WINDOW_PARAM, minimum=1)
        if len(pair) != 2:
            raise jf.fail(w, f"{key} must have 2 entries (H, W), got {len(pair)}")
        return pair[0], pair[1]

    def layout(self, o: dict[str, Any], key: str, letters: str, w: str) -> str:
        text = jf.as_str(jf.field(o, key, w), f"{w}.{key}")
        if sorted(text) != sorted(letters):
            raise jf.fail(w, f"{key} {jf.printable(text)} is not a permutation of '{letters}'")
        return text

    def conv2d(self, o: dict[str, Any], w: str) -> Conv2D:
        kinds = [self.rank4(o, key, w) for key in ("input", "init")]
        filter_kind = self.tensor(jf.field(o, "filter", w), f"{w}.filter")
        # A 3-D filter is depthwise (HWC); a 4-D one has an output-channel dimension (HWCF).
        letters = "HWC" if filter_kind[1] == 3 else "HWCF"
        if filter_kind[1] not in (3, 4):
            raise jf.fail(w, f"filter must be a 3-D (depthwise) or 4-D tensor, got rank "
                             f"{filter_kind[1]}")
        op = Conv2D(o["input"], o["filter"], o["init"], self.window_pair(o, "strides", w),
                    self.window_pair(o, "dilations", w), self.layout(o, "input_layout", "NHWC", w),
                    self.layout(o, "filter_layout", letters, w))
        self.values.append(kinds[1])
        return op

    def pool2d(self, o: dict[str, Any], w: str) -> Pool2D:
        self.rank4(o, "input", w)
        kind = self.rank4(o, "init", w)
        pool_kind = jf.as_str(jf.field(o, "kind", w), w + ".kind")
        if pool_kind not in POOL_KINDS:
            raise jf.fail(w, f"unknown pooling kind {jf.printable(pool_kind)}")
        op = Pool2D(o["input"], o["init"], pool_kind, self.layout(o, "layout", "NCHW", w),
                    self.window_pair(o, "window", w), self.window_pair(o, "strides", w),
                    self.window_pair(o, "dilations", w))
        self.values.append(kind)
        return op

    def window(self, o: dict[str, Any], rank: int, w: str) -> tuple[Shape, Shape, tuple[int, ...]]:
        """Offsets and strides (one per dimension of the sliced or inserted-into tensor; static
        strides at least 1) and the dimensions a lower-rank side leaves out."""
        offsets = self.shape(jf.field(o, "offsets", w), w + ".offsets")
        strides = self.shape(jf.field(o, "strides", w), w + ".strides")
        if len(offsets) != rank or len(strides) != rank:
            raise jf.fail(w, f"{len(offsets)} offsets and {len(strides)} strides for rank {rank}")
        if any(isinstance(s, int) and s < 1 for s in strides):
            raise jf.fail(w, f"strides {_shape_json(strides)} must be at least 1")
        dropped = jf.as_int_list(o["dropped"], w + ".dropped", limit=rank)
        if list(dropped) != sorted(set(dropped)):
            raise jf.fail(w, f"dropped dimensions {list(dropped)} must be increasing")
        return offsets, strides, dropped

    def reshape(self, o: dict[str, Any], w: str) -> Reshape:
        inp = jf.as_int(jf.field(o, "input", w), w + ".input", limit=len(self.values))
        dtype, _ = self.tensor(inp, w + ".input")
        shape = jf.as_int_list(jf.field(o, "shape", w), w + ".shape")
        self.values.append((dtype, len(shape)))
        return Reshape(inp, tuple(shape))

    def slice(self, o: dict[str, Any], w: str) -> Slice:
        inp = jf.as_int(jf.field(o, "input", w), w + ".input", limit=len(self.values))
        dtype, rank = self.tensor(inp, w + ".input")
        offsets, strides, dropped = self.window(o, rank, w)
        sizes = self.shape(jf.field(o, "sizes", w), w + ".sizes")
        if len(sizes) != rank:
            raise jf.fail(w, f"{len(sizes)} sizes for rank {rank}")
        if any(sizes[d] != 1 for d in dropped):
            raise jf.fail(w, "a dropped dimension must have size 1")
        self.values.append((dtype, rank - len(dropped)))
        return Slice(inp, offsets, sizes, strides, dropped)

    def insert_slice(self, o: dict[str, Any], w: str) -> InsertSlice:
        n = len(self.values)
        source = jf.as_int(jf.field(o, "source", w), w + ".source", limit=n)
        dest = jf.as_int(jf.field(o, "dest", w), w + ".dest", limit=n)
        ksource, kdest = self.tensor(source, w + ".source"), self.tensor(dest, w + ".dest")
        offsets, strides, dropped = self.window(o, kdest[1], w)
        if ksource[0] != kdest[0]:
            raise jf.fail(w, f"source {ksource[0]} and dest {kdest[0]} element types differ")
        if ksource[1] + len(dropped) != kdest[1]:
            raise jf.fail(w, f"a rank-{ksource[1]} source with {len(dropped)} dropped "
                             f"dimension(s) does not fit a rank-{kdest[1]} dest")
        self.values.append(kdest)
        return InsertSlice(source, dest, offsets, strides, dropped)

    def reduce(self, o: dict[str, Any], w: str) -> Reduce:
        n = len(self.values)
        inputs = jf.as_int_list(jf.field(o, "inputs", w), w + ".inputs", limit=n)
        inits = jf.as_int_list(jf.field(o, "inits", w), w + ".inits", limit=n)
        if not inputs or len(inputs) != len(inits):
            raise jf.fail(w, "reduce needs as many inits as inputs (at least one)")
        kin = [self.tensor(v, w) for v in inputs]
        kinit = [self.tensor(v, w) for v in inits]
        rank = kin[0][1]
        if any(r != rank for _, r in kin):
            raise jf.fail(w, "reduce inputs must have the same rank")
        dims = jf.as_int_list(jf.field(o, "dimensions", w), w + ".dimensions", limit=rank)
        if len(set(dims)) != len(dims) or any(r != rank - len(dims) for _, r in kinit):
            raise jf.fail(w, f"reduce dimensions {list(dims)} do not take rank {rank} to the inits' rank")
        nargs = len(inputs) + len(inits)
        body = self.body(jf.field(o, "body", w), nargs, None, w)
        for s in body:
            if s.op in ("index", "assert"):
                raise jf.fail(w, f"'{s.op}' is not available in a reduce body")
        yields = jf.as_int_list(jf.field(o, "yields", w), w + ".yields", limit=nargs + len(body))
        if len(yields) != len(inits):
            raise jf.fail(w, f"{len(yields)} yields for {len(inits)} inits")
        _check_body_uses(body, len(inputs), nargs, yields, w)
        self.values.append(list(kinit))
        in_order = jf.as_bool(jf.field(o, "in_order", w), w + ".in_order")
        return Reduce(inputs, inits, dims, body, yields, in_order)


def _check_body_uses(body: tuple[ScalarOp, ...], ninputs: int, nargs: int,
                     yields: tuple[int, ...], where: str) -> None:
    """Every body op's value is used: a body that computes a value nothing reads is not what a
    compiler writes (it removes dead code), and it is what a damaged operand number leaves
    behind. An input the body ignores is legal (a generic that counts elements still iterates
    over its input's shape)."""
    used = set(yields)
    for op in body:
        used.update(op.args)
    for k in range(len(body)):
        if nargs + k not in used and body[k].op != "assert":
            raise jf.fail(where, f"body[{k}] ({body[k].op}) computes a value nothing uses")


def _value_uses(op: KernelOp) -> tuple[int, ...]:
    """The values an op reads."""
    if isinstance(op, Fill):
        return (op.init,)
    if isinstance(op, Generic):
        return (*op.inputs, *op.outputs, *op.captures)
    if isinstance(op, Matmul):
        return (op.lhs, op.rhs, op.init)
    if isinstance(op, Conv2D):
        return (op.input, op.filter, op.init)
    if isinstance(op, (Pool2D, Transpose, Broadcast)):
        return (op.input, op.init)
    if isinstance(op, Reduce):
        return (*op.inputs, *op.inits)
    if isinstance(op, Result):
        return (op.source,)
    if isinstance(op, Store):
        return (op.value,)
    if isinstance(op, (Slice, Reshape)):
        return (op.input,)
    if isinstance(op, InsertSlice):
        return (op.source, op.dest)
    return kernel_codec_ext.value_uses(op) or ()


def _check_entry_uses(entry: EntryPoint, where: str) -> None:
    """The entry stores something, touches each of its bindings, and uses every value it
    computes (an `empty` or a `result` may go unused): what a damaged value or binding number
    leaves behind (a store of the wrong value, a load from the wrong binding) fails one of
    these, while every kernel the compiler writes passes them."""
    if not any(isinstance(op, Store) for op in entry.ops):
        raise jf.fail(where, f"entry point {jf.printable(entry.name)} stores nothing")
    touched = {op.binding for op in entry.ops if isinstance(op, (Load, Store))}
    for b in range(entry.num_bindings):
        if b not in touched:
            raise jf.fail(where, f"binding {b} is neither loaded nor stored")
    values = [op for op in entry.ops if not isinstance(op, Store)]
    used = {v for op in entry.ops for v in _value_uses(op)}
    for v, op in enumerate(values):
        if v not in used and not isinstance(op, (Empty, Result)):
            raise jf.fail(where, f"value {v} ({type(op).__name__.lower()}) is computed but "
                                 f"never used")


def decode_reference_executable(data: bytes | memoryview) -> ReferenceExecutable:
    try:
        payload: Any = json.loads(bytes(data).decode("utf-8"))
    except (ValueError, RecursionError) as e:  # ValueError: bad UTF-8, bad JSON, huge ints
        raise ModuleFormatError(f"reference executable is not valid JSON: {e}") from None
    obj = jf.as_dict(payload, "reference executable")
    jf.exact_keys(obj, ("format", "entry_points"), "reference executable")
    if obj["format"] != "weir-reference-1":
        raise ModuleFormatError(f"reference executable: unknown payload format "
                                f"{jf.printable(obj['format'])}")
    entries: list[EntryPoint] = []
    names: set[str] = set()
    for k, item in enumerate(jf.as_list(jf.field(obj, "entry_points", "reference executable"),
                                        "entry_points")):
        w = f"reference executable entry_points[{k}]"
        e = jf.as_dict(item, w)
        jf.exact_keys(e, ("name", "num_bindings", "num_push_constants", "ops"), w)
        name = jf.as_str(jf.field(e, "name", w), w + ".name")
        if name in names:
            raise jf.fail(w, f"duplicate entry point {jf.printable(name)}")
        names.add(name)
        dec = _EntryDecoder(name, jf.as_int(jf.field(e, "num_bindings", w), w + ".num_bindings"),
                            jf.as_int(jf.field(e, "num_push_constants", w), w + ".num_push_constants"))
        ops = tuple(dec.op(x, i) for i, x in enumerate(jf.as_list(jf.field(e, "ops", w), w + ".ops")))
        entry = EntryPoint(name, dec.num_bindings, dec.num_push, ops)
        _check_entry_uses(entry, w)
        entries.append(entry)
    return ReferenceExecutable(tuple(entries))
