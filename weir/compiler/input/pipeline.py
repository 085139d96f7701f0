"""Phase `input`: the user's program, legalised to the core input dialects."""

from __future__ import annotations

from weir.compiler.input.check_supported_ops import CheckSupportedOps
from weir.compiler.input.convert_stablehlo import ConvertStablehlo
from weir.compiler.input.decompose_window_ops import DecomposeWindowOps
from weir.compiler.input.drop_packed_storage import DropPackedStorage
from weir.compiler.input.drop_tie_shapes import DropTieShapes
from weir.compiler.input.generalize_named_ops import GeneralizeNamedOps
from weir.compiler.input.insert_dynamic_size_checks import InsertDynamicSizeChecks
from weir.compiler.input.lower_linalg_ext import LowerLinalgExt
from weir.compiler.input.lower_dynamic_constants import LowerDynamicConstants
from weir.compiler.input.lower_pack_unpack import LowerPackUnpack
from weir.compiler.input.lower_tensor_bitcasts import LowerTensorBitcasts
from weir.compiler.input.lower_unfoldable_constants import LowerUnfoldableConstants
from weir.compiler.input.verify import verify_input
from weir.compiler.input.scalar_operands_as_tensors import ScalarOperandsAsTensors
from weir.compiler.input.strip_assertions import StripAssertions
from weir.compiler.input.verify_async_regions import VerifyAsyncRegions
from weir.compiler.input.widen_f16_accumulators import WidenF16Accumulators
from weir.compiler.pass_base import Pass

PASSES: tuple[Pass, ...] = (
    # First: a race between async regions (through a global) is the error to report, not globals.
    VerifyAsyncRegions(),
    # Exporters' per-element asserts in linalg bodies, removed when asked, before they are refused.
    StripAssertions(),
    # Next, so that every later pass may assume it only sees ops it knows.
    CheckSupportedOps(),
    # The StableHLO ops weir reads, as tensor.extract_slice and linalg: ops every later pass knows.
    ConvertStablehlo(),
    # Constants of a dynamic type: static data behind a barrier, so nothing sees their sizes.
    LowerDynamicConstants(),
    # Tensor bitcasts as an elementwise arith.bitcast (and a reshape): ops later phases know.
    LowerTensorBitcasts(),
    # Packed i1 is packed by the bitcasts now; elsewhere its encoding would only split types.
    DropPackedStorage(),
    # Convolutions/poolings of other layouts (1-D, 3-D, grouped, min) onto the 2-D kernels' ops.
    DecomposeWindowOps(),
    # Size annotations say nothing weir does not find itself.
    DropTieShapes(),
    # Tiled layouts as pad, reshape and transpose, before sizes are checked and ops generalized.
    LowerPackUnpack(),
    # Sizes an op needs equal but its types leave open: host checks, named as the user wrote them.
    InsertDynamicSizeChecks(),
    # topk, arg_compare and attention become sort and linalg (sort, scan, scatter, gather stay).
    LowerLinalgExt(),
    # Named linalg ops no kernel implements become generics (or transpose + matmul).
    GeneralizeNamedOps(),
    # Scalar inputs of generics (quantized_matmul's zero points) as 0-d tensors the targets read.
    ScalarOperandsAsTensors(),
    # With --weir-accumulate-f16-in-f32: f16/bf16 matmuls sum in f32, rounded once at the end.
    WidenF16Accumulators(),
    # Unfoldable constants become rodata resources before flow can clone or fold them.
    LowerUnfoldableConstants(),
)
VERIFY = verify_input
