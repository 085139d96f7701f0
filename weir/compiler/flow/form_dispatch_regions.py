"""Groups tensor math into `flow.dispatch.region`s: each structured op is the root of a region
and pulls in its elementwise producers (generics without reductions whose maps are projected
permutations, broadcasts, transposes, fills) and the cheap ops that make its operands
(`tensor.empty`, constants), so a chain of elementwise ops runs as one dispatch that reads its
inputs once and writes its result once.

A producer that other ops also use is cloned into the region rather than moved: recomputing an
elementwise value where it is needed costs arithmetic, while materialising it costs a write and
a read of the whole tensor, and memory bandwidth is what bounds such ops. Roots are visited last
to first, so by the time a producer's last user is grouped the producer moves in. The exception
is a producer with work of its own that a broadcast would compute again for each of many more
elements (an attention mask computed per token, read per score): it is materialised once at its
own size (fusion_costs.py).

`tensor.extract_slice` is elementwise in this sense (each element is one element of its source,
at a remapped index), so a slice fuses into whatever reads it, offsets and all; so are static
`tensor.collapse_shape` / `expand_shape`, so a transpose behind a reshape folds into how its
reader reads (no dispatch of its own). A reshape nothing fuses stays on the host, where it is
free. A
`tensor.insert_slice` writes a window of its destination; it is a root, and pulls in a
destination that is itself an insert used only there, so a chain of inserts (a concat, or a pad's
fill and insert) is one dispatch writing each element once. A pad read by a convolution or a
pooling as its input is taken into that op's dispatch instead (`_is_padded_input`).

A contraction or reduction also takes its elementwise consumers (bias add, activation, residual
add, a mean's division) as an epilogue: the chain of sole users that read it element for element,
at the index they write; a reduction's chain may also read it at a projection of that index (a
softmax's division by the row sums, which then shares a dispatch with the sum and the
exponentials it divides). The chain's last op is the region's root and the contraction comes in
with it, so the result leaves the dispatch once, after the epilogue, which targets apply to each
output tile while it is hot. A chain member then belongs to its contraction's region and is not
recomputed as the elementwise prologue of a later contraction (which would read it from memory
it materialises anyway)."""

from __future__ import annotations

from weir.compiler.flow.fusion_costs import is_reduction, recomputed_per_broadcast
from weir.compiler.host_control_flow import host_blocks_innermost_first
from weir.compiler.pass_base import Pass
from weir.compiler.shapes import dynamic_dims
from weir.compiler.state import CompilationState
from weir.dialects import flow, iree_linalg_ext, linalg_ext
from weir.dialects.iree_linalg_ext_map import MapOp
from weir.ir.window_ops import KERNEL_WINDOWS
from weir.ir.upstream import (
    AffineConstantExpr,
    AnyFloat,
    AffineDimExpr,
    AffineMap,
    Block,
    Builder,
    ConstantOp,
    DenseIntOrFPElementsAttr,
    EmptyOp,
    func,
    IndexType,
    IntegerType,
    InsertPoint,
    linalg,
    linalg_attrs,
    ModuleOp,
    Operation,
    Region,
    SSAValue,
    tensor,
    TensorType,
)

# The most ops one shared producer may bring into a consumer's region as a recomputed copy. A
# few elementwise ops (a GELU, a layernorm's scaling) cost less to recompute than to write and
# read back; a recurrence's whole history (an LSTM's cell state, step after step) does not.
RECOMPUTE_LIMIT = 16

_SCALAR_TYPES = (IndexType, IntegerType, AnyFloat)
# Scalar ops of constants that every target computes in a dispatch: casts and the integer
# arithmetic of sizes (compound ops such as ceildivui stay on the host, which expands them).
_CLONEABLE_SCALAR_OPS = frozenset(f"arith.{name}" for name in (
    "index_cast", "index_castui", "bitcast", "extsi", "extui", "trunci", "sitofp", "uitofp",
    "fptosi", "fptoui", "extf", "truncf", "addi", "subi", "muli"))

ROOT_OPS: tuple[type[Operation], ...] = (
    linalg.GenericOp, linalg.FillOp, linalg.MatmulOp, linalg.TransposeOp, linalg.BroadcastOp,
    linalg.ReduceOp, linalg.Conv2DNhwc_HwcfOp, linalg.PoolingNchwMaxOp, *linalg_ext.KERNEL_OPS,
    tensor.ExtractSliceOp, tensor.InsertSliceOp, *iree_linalg_ext.KERNEL_OPS, MapOp,
)


def _is_projected_permutation(amap: AffineMap) -> bool:
    seen: set[int] = set()
    for e in amap.results:
        if isinstance(e, AffineDimExpr) and e.position not in seen:
            seen.add(e.position)
        elif not (isinstance(e, AffineConstantExpr) and e.value == 0):
            return False
    return True


def _is_elementwise(op: Operation) -> bool:
    """Computable one element at a time from elements of its operands, so it can be fused into
    (and recomputed by) any consumer."""
    if isinstance(op, linalg.BroadcastOp | linalg.TransposeOp | linalg.FillOp |
                  tensor.ExtractSliceOp):
        return True
    if isinstance(op, tensor.CollapseShapeOp | tensor.ExpandShapeOp):
        return _is_static(op.operands[0]) and _is_static(op.results[0])
    if not isinstance(op, linalg.GenericOp):
        return False
    if any(it.data != linalg_attrs.IteratorType.PARALLEL for it in op.iterator_types):
        return False
    return all(_is_projected_permutation(m.data) for m in op.indexing_maps)


EPILOGUE_ROOTS: tuple[type[Operation], ...] = (
    linalg.MatmulOp, linalg.Conv2DNhwc_HwcfOp, linalg.PoolingNchwMaxOp, linalg.ReduceOp,
    *linalg_ext.KERNEL_OPS,
)


def _takes_epilogue(op: Operation) -> bool:
    """A root with loops of its own and one result, whose output tiles a target can finish with
    elementwise code before storing them."""
    if len(op.results) != 1:
        return False
    return is_reduction(op) or isinstance(op, EPILOGUE_ROOTS)


def _epilogue_step(value: SSAValue, block: Block, rowwise: bool) -> Operation | None:
    """The sole user of `value` when it is an elementwise generic of the same block with one
    result that reads `value` only at the index it writes, in `value`'s type; or, when `rowwise`
    (the chain of a reduction, whose result is small), at any projection of that index (a
    softmax's division by its row sums), in any type, broadcasts and transposes included."""
    users = {use.operation for use in value.uses}
    if len(users) != 1:
        return None
    user = users.pop()
    if user.parent_block() is not block:
        return None
    if isinstance(user, linalg.BroadcastOp | linalg.TransposeOp):
        return user if rowwise else None
    if not isinstance(user, linalg.GenericOp) or len(user.results) != 1 or \
            not _is_elementwise(user):
        return None
    maps = [m.data for m in user.indexing_maps]
    written = maps[len(user.inputs)]
    reads = [maps[j] for j, x in enumerate(user.operands) if x is value]
    if all(m == written for m in reads) and user.results[0].type == value.type:
        return user
    dims = {e.position for e in written.results if isinstance(e, AffineDimExpr)}
    projected = all(isinstance(e, AffineDimExpr) and e.position in dims or
                    isinstance(e, AffineConstantExpr) and e.value == 0
                    for m in reads for e in m.results)
    return user if rowwise and projected else None


def _epilogues(block: Block) -> tuple[dict[Operation, Operation], dict[Operation, Operation]]:
    """(first epilogue op -> its contraction, epilogue op -> the last op of its chain). Roots are
    taken in block order; an op already in a chain ends the next chain before it. Linear in the
    block's size: each op is looked at once as a root and at most once as a chain member."""
    anchor: dict[Operation, Operation] = {}
    member_of: dict[Operation, Operation] = {}
    for op in block.ops:
        if not _takes_epilogue(op):
            continue
        chain: list[Operation] = []
        rowwise = is_reduction(op)
        step = _epilogue_step(op.results[0], block, rowwise)
        while step is not None and step not in member_of:
            chain.append(step)
            step = _epilogue_step(step.results[0], block, rowwise)
        if chain:
            anchor[chain[0]] = op
            for member in chain:
                member_of[member] = chain[-1]
    return anchor, member_of


def _is_static(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and all(d >= 0 for d in value.type.get_shape())


def _is_chained_insert(consumer: Operation, operand: SSAValue) -> bool:
    """`operand` is the destination of insert `consumer`, made by an insert used nowhere else:
    both write the same tensor, so they belong to one dispatch."""
    return isinstance(consumer, tensor.InsertSliceOp) and operand is consumer.dest and \
        isinstance(operand.owner, tensor.InsertSliceOp) and operand.uses.get_length() == 1


def _is_padded_input(consumer: Operation, operand: SSAValue) -> bool:
    """`operand` is the input of convolution or pooling `consumer` and a pad as
    decompose-pad-and-concat leaves it: an insert of a static tensor with elements, at static
    offsets with unit steps, into a fill of a constant. The window op's dispatch takes it along
    and reads the image through the window's bounds (the llvm-cpu target's
    `KernelValues.padded_inputs`), so the padded copy of the activation is never written, nor
    read back (a max pool's -inf pad cost twice the pool itself as a dispatch of its own).
    So is a pad that `consumer`, the transpose bringing an exporter's NCHW image to a
    convolution's NHWC input, reads (ResNet's stem: a dispatch of its own took a seventh of
    the stem's time)."""
    if _is_nchw_to_nhwc(consumer):
        return operand is consumer.operands[0] and _is_pad(operand) and \
            all(use.operation.name == "linalg.conv_2d_nhwc_hwcf" and use.index == 0
                for use in consumer.results[0].uses)
    if consumer.name not in KERNEL_WINDOWS or operand is not consumer.operands[0]:
        return False
    return _is_pad(operand)


def _is_nchw_to_nhwc(op: Operation) -> bool:
    """`op` brings an NCHW image to NHWC (what convert-conv-to-channels-last puts before a
    convolution of an exporter's image)."""
    return isinstance(op, linalg.TransposeOp) and \
        tuple(op.permutation.get_values()) == (0, 2, 3, 1)


def _is_pad(operand: SSAValue) -> bool:
    """`operand` is an insert of a static tensor with elements, at static offsets with unit
    steps, into a fill of a constant."""
    insert = operand.owner
    if not isinstance(insert, tensor.InsertSliceOp) or insert.offsets or insert.sizes or \
            insert.strides or any(s != 1 for s in insert.static_strides.get_values()):
        return False
    source, fill = insert.source.type, insert.dest.owner
    return isinstance(source, TensorType) and isinstance(operand.type, TensorType) and \
        all(d > 0 for d in source.get_shape()) and \
        len(source.get_shape()) == len(operand.type.get_shape()) and \
        isinstance(fill, linalg.FillOp) and isinstance(fill.inputs[0].owner, ConstantOp)


def _encloses(outer: Block | None, block: Block) -> bool:
    """`block` is `outer` or nested in it: cheap producers (constants, empty tensors) are cloned
    into a region from any enclosing host block, as they cost nothing to recompute."""
    current: Block | None = block
    while current is not None:
        if current is outer:
            return True
        parent = current.parent_op()
        current = parent.parent_block() if parent is not None else None
    return False


def _is_cloneable(op: Operation) -> bool:
    """Ops cheap enough to duplicate into every dispatch that needs them: empty tensors, splat
    and scalar constants, and scalar arith (casts, bitcasts, index math) of such constants,
    which exporters leave on the host. Cloned, they are literals the kernel folds; captured,
    they would be push constants the host computes on every call, and a recording with push
    constants computed at run time cannot be memoized."""
    if isinstance(op, EmptyOp):
        return True
    if isinstance(op, ConstantOp):
        value = op.value
        if isinstance(value, DenseIntOrFPElementsAttr):
            # xDSL's is_splat indexes the first value: a zero-element constant is no splat.
            return len(value) > 0 and value.is_splat()
        return not isinstance(op.result.type, TensorType)
    if op.name in _CLONEABLE_SCALAR_OPS and \
            all(isinstance(r.type, _SCALAR_TYPES) for r in op.results):
        return all(isinstance(o.owner, Operation) and _is_cloneable(o.owner)
                   for o in op.operands)
    return False


def _read_from_above(op: Operation) -> list[SSAValue]:
    """`op`'s operands, then the values its nested ops use that are defined outside `op`."""
    values = list(op.operands)
    if op.regions:
        inside = set(op.walk())
        for nested in op.walk():
            if nested is op:
                continue
            for operand in nested.operands:
                owner = operand.owner
                if isinstance(owner, Operation) and owner not in inside and operand not in values:
                    values.append(operand)
    return values


def _producers_within(ops: list[Operation], fused: set[Operation],
                      root: Operation) -> set[Operation]:
    """`ops` and every op of `fused` they are made from (what cloning them recomputes)."""
    found: set[Operation] = set(ops)
    pending = list(ops)
    while pending:
        for operand in pending.pop().operands:
            producer = operand.owner
            if producer in fused and producer is not root and producer not in found:
                found.add(producer)  # type: ignore[arg-type]
                pending.append(producer)  # type: ignore[arg-type]
    return found


class FormDispatchRegions(Pass):
    flag = "form-dispatch-regions"

    def run(self, module: ModuleOp, state: CompilationState) -> None:
        fuse = "fuse-elementwise" not in state.options.disabled_passes
        for fn in module.body.block.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                # Regions form per block, never across a host region's boundary (a producer
                # outside a loop is not recomputed in every iteration); inner blocks go first so
                # the outer block's cleanup sees what they no longer use.
                for block in fn.body.blocks:
                    for inner in host_blocks_innermost_first(block):
                        self._form(inner, fuse)

    def _form(self, block: Block, fuse: bool) -> None:
        grouped: set[Operation] = set()
        original = list(block.ops)
        # Regions only ever take ops that were here at the start, and inserting or erasing
        # others keeps their order: one numbering serves every region.
        position = {op: i for i, op in enumerate(original)}
        anchor, member_of = _epilogues(block) if fuse else ({}, {})
        for root in reversed(original):
            if root in grouped or not isinstance(root, ROOT_OPS):
                continue
            fused, cloned = self._collect(root, block, fuse, anchor, member_of)
            grouped.update(fused - cloned)
            ordered = sorted(fused, key=position.__getitem__)
            self._make_region(root, ordered, cloned, block)
        # Cloned producers may have lost their last host user.
        for op in reversed(list(block.ops)):
            if (_is_cloneable(op) or _is_elementwise(op)) and all(not r.uses for r in op.results):
                op.detach()
                op.erase()

    def _collect(self, root: Operation, block: Block, fuse: bool,
                 anchor: dict[Operation, Operation],
                 member_of: dict[Operation, Operation]) -> tuple[set[Operation], set[Operation]]:
        """The ops of root's region, and which of them are clones (their originals stay for
        users outside the region). A shared producer whose clone would drag more than
        RECOMPUTE_LIMIT ops along is left out: it is materialised once (as a root of its own)
        and read, rather than recomputed from the start in every consumer."""
        left_out: set[Operation] = set()
        while True:
            fused = self._reach(root, block, fuse, anchor, member_of, left_out)
            # A producer stays on the host when something outside uses it, or a producer that
            # stays (whose operands then have a user outside the region too).
            shared = [op for op in fused if op is not root and any(
                use.operation not in fused for r in op.results for use in r.uses)]
            too_large = {op for op in shared
                         if len(_producers_within([op], fused, root)) > RECOMPUTE_LIMIT}
            if not too_large:
                return fused, _producers_within(shared, fused, root)
            left_out |= too_large

    def _reach(self, root: Operation, block: Block, fuse: bool,
               anchor: dict[Operation, Operation], member_of: dict[Operation, Operation],
               left_out: set[Operation]) -> set[Operation]:
        fused: set[Operation] = {root}
        pending = [root]
        while pending:
            op = pending.pop()
            for operand in op.operands:
                producer = operand.owner
                if not isinstance(producer, Operation) or producer in fused or \
                        producer in left_out:
                    continue
                if producer.parent_block() is not block:
                    continue
                if member_of.get(producer, root) is not root:
                    continue  # another contraction's epilogue: computed in its region
                if anchor.get(op) is producer or isinstance(producer, linalg.FillOp) or \
                        _is_chained_insert(op, operand) or fuse and (
                            _is_padded_input(op, operand) or _is_elementwise(producer) and
                            not recomputed_per_broadcast(producer, root)):
                    fused.add(producer)
                    pending.append(producer)
        return fused

    def _make_region(self, root: Operation, ops: list[Operation], cloned: set[Operation],
                     block: Block) -> None:
        body = Block()
        mapping: dict[SSAValue, SSAValue] = {}
        for op in ops:
            self._clone_cheap_producers(op, body, mapping, block)
            body.add_op(op.clone(mapping))
        results = list(root.results)
        body.add_op(flow.ReturnOp.build(operands=[[mapping[r] for r in results]]))
        dims: list[SSAValue] = []
        for r in results:
            # Before the root, where every value the root's operands were made from exists.
            dims.extend(dynamic_dims(r, InsertPoint.before(root)))
        region_op = flow.DispatchRegionOp.build(
            operands=[dims], result_types=[[r.type for r in results]], regions=[Region(body)])
        Builder(InsertPoint.before(root)).insert(region_op)
        for old, new in zip(results, region_op.results, strict=True):
            old.replace_all_uses_with(new)
        for op in reversed(ops):
            if op not in cloned:
                op.detach()
                op.erase()

    def _clone_cheap_producers(self, op: Operation, body: Block,
                               mapping: dict[SSAValue, SSAValue], block: Block) -> None:
        """Clones the cheap producers of `op`'s operands (and theirs) into the region body, so
        the region reads them from registers instead of capturing them from the host. Values a
        linalg body reads from above count as operands too."""
        for operand in _read_from_above(op):
            producer = operand.owner
            if isinstance(producer, Operation) and _encloses(producer.parent_block(), block) \
                    and _is_cloneable(producer) and operand not in mapping:
                self._clone_cheap_producers(producer, body, mapping, block)
                body.add_op(producer.clone(mapping))
