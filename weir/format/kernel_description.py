"""The kernel description: each dispatch as a compact list of typed ops over its bindings, the
layer that code generation lowers dispatch functions to (weir/compiler/codegen) and that every
target lowers from: the `reference` target serialises it as its payload (kernel_codec.py), which
the runtime executes with numpy over the whole iteration space; llvm-cpu compiles it to native
code. It is data, not code, and not MLIR: the reference runtime never needs the compiler.

Within an entry point, ops produce values numbered in order (every op except `Store` produces one
tensor value). Shapes are tuples of `Dim`: an int, or `PushDim(k)` for a dimension passed as the
k-th push constant of the dispatch (dynamic shapes).

Scalar bodies (`Generic`, `Reduce`) are lists of `ScalarOp`s over numbered scalar values: the
block arguments come first (one per input, then one per output/init), then one value per op.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from weir.format.element_types import BY_NAME
from weir.format.vm_isa import Scalar


@dataclass(frozen=True)
class PushDim:
    index: int


Dim = Union[int, PushDim]
Shape = tuple[Dim, ...]

# Element types by their MLIR spelling; the runtime maps them to numpy / ml_dtypes dtypes.
DTYPES: frozenset[str] = frozenset(BY_NAME)

# The closed set of scalar operations a body may use. `attr` carries the predicate of cmpf/cmpi,
# the value of `constant`, the dimension of `index`, the target dtype of casts, and for `push` the
# push constant read as a scalar of the op's dtype (a value captured from the host): the 64-bit
# constant's low bits, as many as the dtype has, hold the value (floats as their bits).
SCALAR_OPS: frozenset[str] = frozenset(
    {
        # float
        "addf", "subf", "mulf", "divf", "remf", "negf", "absf", "maximumf", "minimumf",
        "maxnumf", "minnumf", "cmpf", "exp", "exp2", "log", "log2", "log1p", "tanh", "sqrt",
        "rsqrt", "pow", "sin", "cos", "erf", "floor", "ceil", "round", "roundeven", "fma",
        "expm1", "atan", "atan2", "acos", "acosh", "asin", "asinh", "atanh", "cbrt", "cosh",
        "sinh", "tan",
        # integer
        "addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "andi", "ori", "xori",
        "shli", "shrsi", "shrui", "maxsi", "minsi", "maxui", "minui", "cmpi", "absi",
        "floordivsi", "ceildivsi", "ceildivui",
        # other
        "select", "constant", "index", "push",
        # checked reads and run-time checks (see `Generic.captures` and `Generic.checks`)
        "extract", "assert",
        # casts (attr: the result dtype)
        "extf", "truncf", "sitofp", "uitofp", "fptosi", "fptoui", "extsi", "extui", "trunci",
        "bitcast", "index_cast", "index_castui",
    }
)

# What each op computes is MLIR's arith/math semantics; where MLIR leaves the result undefined
# (poison or undefined behaviour) or lets an implementation choose, every implementation (the
# reference kernels, llvm-cpu's code, the VM's `Arith`) gives this one result:
# - integers are signless, wrap at their width, and the op says how to read them: divsi/remsi
#   truncate toward zero, floordivsi rounds toward -inf, ceildivsi/ceildivui toward +inf;
# - an integer division or remainder by zero gives 0 in a kernel (the host program faults
#   instead: `RuntimeFault` naming the op); the signed MIN / -1 gives MIN (floordivsi and ceildivsi
#   too) and MIN % -1 gives 0;
# - a shift by the width or more (the amount read unsigned) gives what shifting one bit at a time
#   would: 0 for shli/shrui, the sign (0 or -1) for shrsi;
# - `exact` and overflow flags are ignored (the result they would make poison is computed anyway);
# - fptosi/fptoui saturate to the result's signed/unsigned range and give 0 for NaN;
# - maximumf/minimumf give NaN when either operand is NaN, maxnumf/minnumf the other operand (NaN
#   if both are); all four order -0.0 below +0.0 (a reduction leaves open which zero it keeps);
# - f16/bf16 arithmetic is done in f32 and rounded to the type after every op (a reduction
#   accumulates in f32 and rounds once); truncf and the conversions to a float type round once,
#   to nearest even (f64 to bf16 is not f64 to f32 to bf16), except that an integer beyond 2^53
#   in magnitude goes to bf16 through f64;
# - remf is C's fmod (the sign of the dividend); index is 64-bit; index_cast sign-extends,
#   index_castui and extui zero-extend;
# - `extract` (tensor.extract in a body) reads capture number `attr` of its generic at the
#   indices given by its operands (index values, one per dimension); an index outside
#   [0, size) fails the dispatch with the op's check message, the index and the size, and
#   never reads memory; `assert` (cf.assert kept in a body) fails the dispatch with its check
#   message wherever its i1 operand is false, and yields that operand (nothing reads it).


# The scalar ops the host program (the VM's `Arith` instruction) computes with the same semantics:
# all but those that read the dispatch (`index`, `push`); host constants are VM constants.
HOST_SCALAR_OPS: frozenset[str] = SCALAR_OPS - {"index", "push", "constant", "extract", "assert"}
# Body ops that fail the dispatch where their check does not hold, in body order one entry each
# of their generic's `checks`.
CHECKED_SCALAR_OPS: frozenset[str] = frozenset({"extract", "assert"})


@dataclass(frozen=True)
class ScalarOp:
    op: str
    args: tuple[int, ...]
    dtype: str  # result element type
    attr: Scalar = None


@dataclass(frozen=True)
class Load:
    """A tensor read from a binding at a byte offset."""

    binding: int
    dtype: str
    shape: Shape
    offset: int = 0


@dataclass(frozen=True)
class Empty:
    dtype: str
    shape: Shape


@dataclass(frozen=True)
class Fill:
    """init filled with a scalar constant."""

    init: int
    value: Scalar


@dataclass(frozen=True)
class Generic:
    """linalg.generic. `maps[i]` gives, for operand i (inputs then outputs), one entry per operand
    dimension: the loop dimension it is indexed by, or -1 for a constant 0 index (a size-1 dim)."""

    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    maps: tuple[tuple[int, ...], ...]
    iterators: tuple[str, ...]  # "parallel" | "reduction"
    body: tuple[ScalarOp, ...]
    yields: tuple[int, ...]  # scalar value numbers, one per output
    # Tensors the body reads at computed indices (`extract`): value numbers, read whole.
    captures: tuple[int, ...] = ()
    # One message per `extract`/`assert` of the body, in body order: what a failed check
    # reports, naming the op and its MLIR location (an extract's adds index and size).
    checks: tuple[str, ...] = ()
    # Float sums and products combine one element at a time in loop order, from the output's
    # initial value (compiled with --iree-llvmcpu-reassociate-fp-reductions=false); otherwise
    # a target may combine them in any order.
    in_order: bool = False


def extract_fault(check: str, dimension: int, index: int, size: int) -> str:
    """The message of an `extract` whose index is out of range: the same on every target."""
    return f"{check}: index {index} is out of range for dimension {dimension} of size {size}"


@dataclass(frozen=True)
class Matmul:
    """init + lhs @ rhs on 2-D operands (batch_matmul: 3-D, leading batch dim)."""

    lhs: int
    rhs: int
    init: int


@dataclass(frozen=True)
class Conv2D:
    """2-D convolution accumulated into init: for every output position and output channel f,
    init + sum over (kh, kw, c) of input[n, oh*sh + kh*dh, ow*sw + kw*dw, c] * filter[kh, kw, c, f]
    (strides (sh, sw), dilations (dh, dw)), computed in the init's type (f16/bf16 in f32);
    integer inputs narrower than the init are extended first (signless ones sign-extended).

    Layouts name the dimensions of each operand in order: `input_layout` is a permutation of
    "NHWC" (batch, height, width, channel), `filter_layout` of "HWCF" (window height, window
    width, input channel, filter = output channel). The output's layout is the input's with C
    replaced by F (NHWC input: NHWF output). Output sizes are (in - dilation*(k-1) - 1)/stride + 1
    per spatial dimension, rounded down.

    A `filter_layout` that is a permutation of "HWC" (a 3-D filter) is depthwise: each channel c
    is convolved with its own filter[kh, kw, c] and the output keeps the input's layout and C.
    """

    input: int
    filter: int
    init: int
    strides: tuple[int, int]  # (H, W)
    dilations: tuple[int, int]  # (H, W)
    input_layout: str  # e.g. "NHWC"
    filter_layout: str  # e.g. "HWCF", or "HWC" (depthwise)

    @property
    def depthwise(self) -> bool:
        return "F" not in self.filter_layout

    @property
    def output_layout(self) -> str:
        return self.input_layout if self.depthwise else self.input_layout.replace("C", "F")


POOL_KINDS: frozenset[str] = frozenset({"max", "sum"})


@dataclass(frozen=True)
class Pool2D:
    """2-D pooling accumulated into init: for every output position, init combined (`kind`: max or
    sum) with input[n, c, oh*sh + kh*dh, ow*sw + kw*dw] over the window's (kh, kw), computed in
    the init's type (f16/bf16 in f32). Integer max compares signed (unsigned for ui types).

    `layout` is a permutation of "NCHW" naming the input's dimensions in order; the output has the
    same layout. The window is static: linalg takes it from the shape of an operand whose values
    are never read. Output sizes follow the formula of `Conv2D`.
    """

    input: int
    init: int
    kind: str  # "max" | "sum"
    layout: str  # e.g. "NCHW"
    window: tuple[int, int]  # (H, W)
    strides: tuple[int, int]  # (H, W)
    dilations: tuple[int, int]  # (H, W)


@dataclass(frozen=True)
class Transpose:
    input: int
    init: int
    permutation: tuple[int, ...]


@dataclass(frozen=True)
class Reshape:
    """tensor.collapse_shape / expand_shape: the input's elements, in row-major order, laid out
    in `shape` (static, with as many elements as the input)."""

    input: int
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Broadcast:
    """linalg.broadcast: `dimensions` are the init dimensions the input does not have."""

    input: int
    init: int
    dimensions: tuple[int, ...]


@dataclass(frozen=True)
class Reduce:
    """linalg.reduce over `dimensions`; the body combines (inputs..., accumulators...)."""

    inputs: tuple[int, ...]
    inits: tuple[int, ...]
    dimensions: tuple[int, ...]
    body: tuple[ScalarOp, ...]
    yields: tuple[int, ...]
    in_order: bool = False  # as Generic's


@dataclass(frozen=True)
class Result:
    """Selects result `index` of a multi-result op (`Generic` with several outputs, `Reduce`)."""

    source: int
    index: int


@dataclass(frozen=True)
class Store:
    value: int
    binding: int
    offset: int = 0


@dataclass(frozen=True)
class Slice:
    """tensor.extract_slice: for every index i of the window, input[offsets + i * strides].
    `offsets`, `sizes` and `strides` have one entry per input dimension; each is static or a push
    constant (dynamic offsets are dispatch arguments, as dynamic dims are). `dropped` lists the
    input dimensions (window size 1) the result leaves out: a rank-reducing slice. The window must
    lie inside the input (`window_error`): the runtime checks it before the dispatch runs, since
    MLIR leaves an out-of-bounds slice undefined and native code indexes without checks."""

    input: int
    offsets: Shape
    sizes: Shape
    strides: Shape
    dropped: tuple[int, ...] = ()


@dataclass(frozen=True)
class InsertSlice:
    """tensor.insert_slice: dest with the window at `offsets` (step `strides`, one entry per
    dest dimension) replaced by source. The window's sizes are the source's dimensions, with a 1
    at each dest dimension in `dropped` (a source of lower rank). Bounds as for `Slice`.
    tensor.pad and tensor.concat are described as fills and chains of these."""

    source: int
    dest: int
    offsets: Shape
    strides: Shape
    dropped: tuple[int, ...] = ()


def window_error(offset: int, size: int, stride: int, extent: int) -> str | None:
    """Why the strided window offset + i*stride (0 <= i < size) does not fit in [0, extent), or
    None when it does. An empty window may sit anywhere from 0 to extent (a concat of an empty
    piece places it at the end)."""
    if size < 0 or extent < 0:
        return f"negative size {min(size, extent)}"
    if stride < 1:
        return f"stride {stride} is below 1"
    if offset < 0:
        return f"offset {offset} is negative"
    last = offset + (size - 1) * stride if size else offset - 1
    if last >= extent:
        return (f"window at offset {offset} of {size} element(s) with stride {stride} ends past "
                f"the dimension's size {extent}")
    return None


@dataclass(frozen=True)
class Sort:
    """Sorts every line along `dimension` of all `operands` together (one result per operand,
    selected with `Result`), stably: the body compares (lhs, rhs) of operand 0, then of operand
    1, ... and yields one i1, whether lhs may come before rhs; an element moves before an earlier
    one only when the body says it may and not the other way round."""

    operands: tuple[int, ...]
    dimension: int
    body: tuple[ScalarOp, ...]
    yields: tuple[int, ...]  # one i1
    # When set, nothing reads past the first `prefix` elements of a sorted line (the program
    # takes its top k): a target may select them instead of sorting, and leave the rest of the
    # line unspecified. None: the whole line.
    prefix: int | None = None


@dataclass(frozen=True)
class Scan:
    """A prefix scan along `dimension` (results: the scan, the line's last value). Inclusive:
    out[0] = in[0], out[i] = body(in[i], out[i-1]); exclusive: out[0] = accumulator's value,
    out[i] = body(in[i-1], out[i-1]). `output` only gives the result's shape and type."""

    input: int
    output: int
    accumulator: int
    dimension: int
    inclusive: bool
    body: tuple[ScalarOp, ...]
    yields: tuple[int, ...]


@dataclass(frozen=True)
class Scatter:
    """original with each update slice combined in, in update order: for batch index b and slice
    index s, t = coordinates(b) + s (the slice along original's last dimensions, coordinates
    placed at `dimension_map`), original[t] = body(updates[b, s], original[t]). `indices` has the
    batch shape then, unless `depth1`, a dimension of len(dimension_map) coordinates; `mask`
    (-1: none) an i1 of the batch shape, false skipping an update. Coordinates outside
    original skip their slice's elements that fall outside (IREE leaves them undefined)."""

    updates: int
    indices: int
    mask: int
    original: int
    dimension_map: tuple[int, ...]
    batch_rank: int
    body: tuple[ScalarOp, ...]
    yields: tuple[int, ...]


@dataclass(frozen=True)
class Gather:
    """init with init[b, s] = source[coordinates(b) + s] (as `Scatter` reads them) where the mask
    (-1: none) is true; an element whose coordinates fall outside source keeps init's value."""

    source: int
    indices: int
    mask: int
    init: int
    dimension_map: tuple[int, ...]
    batch_rank: int


@dataclass(frozen=True)
class MapLoad:
    """init's shape filled with source[f(o)] at each index o, where f(o) (the body's first
    yields, one index per source dimension, from one index argument per output dimension)
    lies inside source, and with the body's last yield (the padding) elsewhere."""

    source: int
    init: int
    body: tuple[ScalarOp, ...]
    yields: tuple[int, ...]


@dataclass(frozen=True)
class MapStore:
    """init with input[i] written at f(i) for each input index i whose body (one index argument
    per input dimension) yields a true mask (its last yield) and an f(i) inside init; where two
    indices map to one element, the later one in row-major order wins."""

    input: int
    init: int
    body: tuple[ScalarOp, ...]
    yields: tuple[int, ...]


KernelOp = Union[Load, Empty, Fill, Generic, Matmul, Conv2D, Pool2D, Transpose, Broadcast, Reduce,
                 Result, Store, Slice, InsertSlice, Sort, Scan, Scatter, Gather, MapLoad, MapStore,
                 Reshape]


@dataclass(frozen=True)
class EntryPoint:
    name: str
    num_bindings: int
    num_push_constants: int
    ops: tuple[KernelOp, ...]


@dataclass(frozen=True)
class ReferenceExecutable:
    entry_points: tuple[EntryPoint, ...]
