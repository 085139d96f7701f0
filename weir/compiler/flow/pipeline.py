"""Phase `flow`: tensor math grouped into dispatches, outlined into executables."""

from __future__ import annotations

from weir.compiler.flow.convert_elementwise_to_linalg import ConvertElementwiseToLinalg
from weir.compiler.flow.convert_scalar_tensor_ops import ConvertScalarTensorOps
from weir.compiler.flow.decompose_pad_and_concat import DecomposePadAndConcat
from weir.compiler.flow.drop_optimization_barriers import DropOptimizationBarriers
from weir.compiler.flow.expand_compound_arith import ExpandCompoundArith
from weir.compiler.flow.form_dispatch_regions import FormDispatchRegions
from weir.compiler.flow.fuse_row_reductions import FuseRowReductions
from weir.compiler.flow.inline_internal_calls import InlineInternalCalls
from weir.compiler.flow.outline_dispatch_regions import OutlineDispatchRegions
from weir.compiler.flow.unroll_host_loops import UnrollHostLoops
from weir.compiler.flow.verify import verify_flow
from weir.compiler.pass_base import Pass

PASSES: tuple[Pass, ...] = (
    # Whole-program data flow: fold the ABI stubs' private bodies and user helpers inline.
    InlineInternalCalls(),
    # Loops of a few steps with constant bounds unrolled: their dispatches join one command buffer.
    UnrollHostLoops(),
    # One form for all tensor math, so fusion and targets see only linalg.
    ConvertElementwiseToLinalg(),
    # Two-result and composite arith ops (now scalars) as single ops targets and the VM compute.
    ExpandCompoundArith(),
    # Tensors built from scalars (splat, from_elements, insert) as linalg, to run in dispatches.
    ConvertScalarTensorOps(),
    # Pads and concats as fills and inserts into a destination: one windowed-write op to fuse.
    DecomposePadAndConcat(),
    # Group roots with their elementwise producers: fewer dispatches, fewer round trips to memory.
    FormDispatchRegions(),
    # Reductions over the same rows in one region: each row runs start to end while in cache.
    FuseRowReductions(),
    # Isolate each region as an executable; the host keeps only flow.dispatch.
    OutlineDispatchRegions(),
    # Barriers kept folding and fusion from crossing them; from here on they are value aliases.
    DropOptimizationBarriers(),
)
VERIFY = verify_flow
