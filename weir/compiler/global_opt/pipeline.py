"""Phase `global-optimization`: whole-program rewrites of tensor values before dispatches form:
work that is the same on every call is done once, here, at compile time."""

from __future__ import annotations

from weir.compiler.global_opt.batch_matmul_to_matmul import BatchMatmulToMatmul
from weir.compiler.global_opt.convert_conv_to_channels_last import ConvertConvToChannelsLast
from weir.compiler.global_opt.drop_unused_results import DropUnusedResults
from weir.compiler.global_opt.fold_batch_norm_into_conv import FoldBatchNormIntoConv
from weir.compiler.global_opt.fold_constant_expressions import FoldConstantExpressions
from weir.compiler.global_opt.fold_constant_slices import FoldConstantSlices
from weir.compiler.global_opt.fold_constant_transposes import FoldConstantTransposes
from weir.compiler.global_opt.fold_zero_products import FoldZeroProducts
from weir.compiler.global_opt.fuse_horizontal_matmuls import FuseHorizontalMatmuls
from weir.compiler.global_opt.hoist_sliced_matmuls import HoistSlicedMatmuls
from weir.compiler.global_opt.limit_sorts_to_prefixes import LimitSortsToPrefixes
from weir.compiler.global_opt.pack_conv_filters import PackConvFilters
from weir.compiler.global_opt.pack_matmul_weights import PackMatmulWeights
from weir.compiler.global_opt.propagate_transposes import PropagateTransposes
from weir.compiler.global_opt.split_convs_over_concats import SplitConvsOverConcats
from weir.compiler.global_opt.split_pools_over_concats import SplitPoolsOverConcats
from weir.compiler.global_opt.verify import verify_global_optimization
from weir.compiler.pass_base import Pass

PASSES: tuple[Pass, ...] = (
    # Static slices of constants (an ONNX LSTM's gates, cut from one matrix) as constants.
    FoldConstantSlices(),
    # Elementwise math on constants alone (a batch norm's 1 / sqrt(var + eps)) computed once.
    FoldConstantExpressions(),
    # Weights stated as transpose(W) (linear layers) stored transposed: no per-call copy.
    FoldConstantTransposes(),
    # A product of a constant zero (a recurrent net's initial state) by weights: its accumulator.
    FoldZeroProducts(),
    # An inference-mode batch norm after a convolution: its scale in the filter, the rest bias.
    FoldBatchNormIntoConv(),
    # A batch of products with one broadcast weight matrix as one matmul: no broadcast copy.
    BatchMatmulToMatmul(),
    # Products of one input by several weights (an LSTM's gates, attention's projections) as
    # one product by the weights side by side: one GEMM, one dispatch, slices read in place.
    FuseHorizontalMatmuls(),
    # A loop's product of each step's input slice by constant weights (an ONNX LSTM's input
    # projection) as one product of all steps before the loop: one GEMM, the weights read once.
    HoistSlicedMatmuls(),
    # A reduction's results nobody reads (the index of torch's max.dim) are not computed.
    DropUnusedResults(),
    # A sort read only through its first k elements (top-k) may select them instead of sorting.
    LimitSortsToPrefixes(),
    # NCHW convolutions and poolings run NHWC, as the llvm-cpu kernels read (after the batch
    # norm folds, which match the convolution the exporter wrote).
    ConvertConvToChannelsLast(),
    # The transposes that leaves carried through the ops between convolutions, where they cancel.
    PropagateTransposes(),
    # A pooling of a channel concatenation as the concatenation of each piece's pooling: the
    # pieces are read in place, and what is concatenated is the pooled, smaller tensors.
    SplitPoolsOverConcats(),
    # A 1 x 1 convolution of a channel concatenation (SqueezeNet's fire modules) as one per
    # piece, each adding onto the last: the concatenation is never written (NHWC, so after it).
    SplitConvsOverConcats(),
    # Constant matmul weights in the GEMM's panel layout: packed once here, not on every call
    # (last: after the folds above have made the weights the constants they are).
    PackMatmulWeights(),
    # Constant convolution filters in the direct kernel's panel layout, for the same reason.
    PackConvFilters(),
)
VERIFY = verify_global_optimization
