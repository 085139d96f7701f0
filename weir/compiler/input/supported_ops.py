"""Which ops weir accepts as input, by phase of support. An op outside this set is a compile
error at its location (`... is not supported`), never a run-time surprise."""

from __future__ import annotations

from weir.dialects.arith_extra import ROUNDING_MODES, rounding_mode
from weir.ir.upstream import Operation
from weir.ir.window_ops import WINDOW_LAYOUTS

# Elementwise scalar ops (on scalars or, elementwise, on tensors): arith/math name -> the kernel
# scalar op of weir/format/kernel_description.py.
ELEMENTWISE_OPS: dict[str, str] = {
    "arith.addf": "addf", "arith.subf": "subf", "arith.mulf": "mulf", "arith.divf": "divf",
    "arith.remf": "remf", "arith.negf": "negf", "arith.maximumf": "maximumf",
    "arith.minimumf": "minimumf", "arith.maxnumf": "maxnumf", "arith.minnumf": "minnumf",
    "arith.cmpf": "cmpf", "arith.addi": "addi", "arith.subi": "subi", "arith.muli": "muli",
    "arith.divsi": "divsi", "arith.divui": "divui", "arith.remsi": "remsi", "arith.remui": "remui",
    "arith.andi": "andi", "arith.ori": "ori", "arith.xori": "xori", "arith.shli": "shli",
    "arith.shrsi": "shrsi", "arith.shrui": "shrui", "arith.maxsi": "maxsi", "arith.minsi": "minsi",
    "arith.maxui": "maxui", "arith.minui": "minui", "arith.cmpi": "cmpi", "arith.select": "select",
    "arith.extf": "extf", "arith.truncf": "truncf", "arith.sitofp": "sitofp",
    "arith.uitofp": "uitofp", "arith.fptosi": "fptosi", "arith.fptoui": "fptoui",
    "arith.extsi": "extsi", "arith.extui": "extui", "arith.trunci": "trunci",
    "arith.bitcast": "bitcast", "arith.index_cast": "index_cast",
    "arith.index_castui": "index_castui", "arith.floordivsi": "floordivsi",
    "arith.ceildivsi": "ceildivsi", "arith.ceildivui": "ceildivui",
    "math.absf": "absf", "math.absi": "absi", "math.exp": "exp", "math.exp2": "exp2",
    "math.log": "log", "math.log2": "log2", "math.log1p": "log1p", "math.tanh": "tanh",
    "math.sqrt": "sqrt", "math.rsqrt": "rsqrt", "math.powf": "pow", "math.sin": "sin",
    "math.cos": "cos", "math.erf": "erf", "math.floor": "floor", "math.ceil": "ceil",
    "math.round": "round", "math.roundeven": "roundeven", "math.fma": "fma",
    "math.expm1": "expm1", "math.atan": "atan", "math.atan2": "atan2", "math.acos": "acos",
    "math.acosh": "acosh", "math.asin": "asin", "math.asinh": "asinh", "math.atanh": "atanh",
    "math.cbrt": "cbrt", "math.cosh": "cosh", "math.sinh": "sinh", "math.tan": "tan",
}

# Elementwise arith/math ops with no kernel scalar op of their own: two results (the extended
# additions and multiplications) or a composition of simpler ops (the scaling casts, fpowi). On tensors
# they become generics like the ops above (convert-elementwise-to-linalg); expand-compound-arith
# then writes each scalar one as the ops above.
COMPOUND_OPS: frozenset[str] = frozenset({
    "arith.addui_extended", "arith.mulsi_extended", "arith.mului_extended",
    "arith.scaling_extf", "arith.scaling_truncf", "math.fpowi",
})

# Ops that carry structure rather than math; each is handled by a named pass.
STRUCTURAL_OPS: frozenset[str] = frozenset(
    {
        "builtin.module", "func.func", "func.return", "func.call", "arith.constant",
        "tensor.empty", "tensor.dim",
        "linalg.generic", "linalg.yield", "linalg.index", "linalg.fill", "linalg.matmul",
        "linalg.transpose", "linalg.broadcast", "linalg.reduce", "linalg.conv_2d_nhwc_hwcf",
        "linalg.pooling_nchw_max",
        # Named linalg ops: generalized or mapped onto the Matmul/Conv2D/Pool2D kernels in the
        # input phase (generalize_named_ops.py).
        "linalg.batch_matmul", "linalg.batch_matmul_transpose_a", "linalg.batch_matmul_transpose_b",
        "linalg.matmul_transpose_a", "linalg.matmul_transpose_b", "linalg.matvec", "linalg.vecmat",
        "linalg.batch_matvec", "linalg.negf",
        "linalg.dot", "linalg.map", "linalg.copy", "linalg.softmax", "linalg.add", "linalg.sub",
        "linalg.mul", "linalg.max", "linalg.min", "linalg.exp", "linalg.log", "linalg.sqrt",
        "linalg.select", "linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_fhwc",
        "linalg.depthwise_conv_2d_nhwc_hwc", "linalg.depthwise_conv_2d_nchw_chw",
        "linalg.pooling_nchw_sum", "linalg.pooling_nhwc_max",
        "linalg.pooling_nhwc_sum", "linalg.quantized_matmul",
        "flow.tensor.transfer",
        # Scalars in and out of tensors: splat/from_elements/insert become dispatches in the flow
        # phase; extract is a host read once the tensor is ready (stream phase).
        "tensor.splat", "tensor.from_elements", "tensor.insert", "tensor.extract",
        # Data movement: slices and pads/concats (made of slices in the flow phase) run in
        # dispatches; reshapes and casts are metadata on the host (same bytes, new shape).
        "tensor.extract_slice", "tensor.insert_slice", "tensor.pad", "tensor.yield",
        "tensor.concat", "tensor.collapse_shape", "tensor.expand_shape", "tensor.reshape",
        "tensor.cast",
        # Test assertions (lowered to calls of the runtime's `check` module in the abi phase)
        # and constants the compiler must not fold (lowered to rodata in the input phase).
        "check.expect_true", "check.expect_false", "check.expect_all_true", "check.expect_eq",
        "check.expect_eq_const", "check.expect_almost_eq", "check.expect_almost_eq_const",
        "util.unfoldable_constant",
        # Values the compiler must treat as unknown: dispatch formation stops at it; dropped
        # (its results alias its operands) at the end of the flow phase.
        "util.optimization_barrier",
        # A constant of a dynamic type (lowered in the input phase: lower-dynamic-constants).
        "flow.tensor.dynamic_constant",
        # Bytes read as another element type or shape (lowered in the input phase:
        # lower-tensor-bitcasts).
        "flow.tensor.bitcast", "flow.tensor.reshape",
        # Size annotations (dropped in the input phase: drop-tie-shapes) and tensors cut into
        # tiles and back (lowered in the input phase: lower-pack-unpack).
        "flow.tensor.tie_shape", "linalg.pack", "linalg.unpack",
        # Host control flow (structured; lowered to VM branches in the vm phase). scf.parallel,
        # scf.forall and scf.execute_region stay unsupported.
        "scf.for", "scf.if", "scf.index_switch", "scf.while", "scf.yield", "scf.condition",
        # Explicit concurrency (checked by verify-async-regions; regions become stream work
        # waiting on the timepoints of their dependencies in the stream phase).
        "async.execute", "async.await", "async.yield",
        # IREE's linalg extension ops and torch-mlir's copies (lower-linalg-ext: topk,
        # arg_compare, attention and the Winograd transforms become sort and linalg; sort,
        # scan, scatter and gather are kernels of their own).
        *(f"{d}.{o}" for d in ("iree_linalg_ext", "tm_tensor")
          for o in ("sort", "topk", "scan", "scatter", "attention", "yield")),
        "iree_linalg_ext.gather", "iree_linalg_ext.arg_compare", "iree_linalg_ext.topk_v2",
        "iree_linalg_ext.online_attention", "iree_linalg_ext.map_load",
        "iree_linalg_ext.map_store", "affine.linearize_index", "affine.delinearize_index",
        *(f"iree_linalg_ext.winograd.{o}_transform" for o in ("input", "filter", "output")),
        # The StableHLO ops weir reads (convert-stablehlo writes them as tensor and linalg).
        "stablehlo.slice", "stablehlo.reverse",
    }
    # Convolutions and poolings: mapped onto the Conv2D/Pool2D kernels, the other layouts first
    # rewritten onto those (decompose-window-ops).
) | frozenset(WINDOW_LAYOUTS)


def is_supported(op_name: str) -> bool:
    return op_name in STRUCTURAL_OPS or op_name in ELEMENTWISE_OPS or op_name in COMPOUND_OPS


def unsupported_form(op: Operation) -> str | None:
    """Why a supported op is written in a form weir cannot compile, if it is: truncf and
    scaling_truncf round to nearest even only (their other rounding modes would be a kernel op
    of their own)."""
    if op.name in ("arith.truncf", "arith.scaling_truncf") and \
            (mode := rounding_mode(op)) != ROUNDING_MODES[0]:
        return f"'{op.name}' with rounding mode {mode} is not supported (only {ROUNDING_MODES[0]})"
    return None
