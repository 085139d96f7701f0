"""The workloads: each is an MLIR program in benchmarks/programs/ (its function has the
workload's name), the same computation in numpy, the inputs both get, and the work it must do
at least, which sets the time the machine's limits allow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import numpy as np

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"


class Bound(Enum):
    """What limits a workload: moving its bytes, doing its FLOPs, or (for a call doing almost
    nothing) the cost of the call itself, which no hardware limit describes."""

    MEMORY = "memory"
    COMPUTE = "compute"
    OVERHEAD = "overhead"


@dataclass(frozen=True)
class Workload:
    name: str
    bound: Bound
    input_shapes: tuple[tuple[int, ...], ...]
    output_shape: tuple[int, ...]
    numpy: Callable[..., np.ndarray]
    flops: float = 0.0
    # Inputs are standard normal, times this per input (keeps deep products in range).
    input_scales: tuple[float, ...] = ()

    @property
    def program(self) -> Path:
        return PROGRAMS / f"{self.name}.mlir"

    @property
    def bytes_moved(self) -> int:
        """Every input read once and the output written once, in f32: the least traffic any
        implementation needs."""
        elements = sum(int(np.prod(s)) for s in self.input_shapes) + int(np.prod(self.output_shape))
        return 4 * elements

    def make_inputs(self, seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        scales = self.input_scales or (1.0,) * len(self.input_shapes)
        return [(rng.standard_normal(shape, dtype=np.float32) * np.float32(scale))
                for shape, scale in zip(self.input_shapes, scales, strict=True)]


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


def _mlp(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray,
         w3: np.ndarray, b3: np.ndarray) -> np.ndarray:
    h1 = np.maximum(x @ w1 + b1, 0.0)
    h2 = np.maximum(h1 @ w2 + b2, 0.0)
    return h2 @ w3 + b3  # type: ignore[no-any-return]


def _conv2d(image: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """im2col as a strided view, then one tensordot (a BLAS matrix multiply)."""
    windows = np.lib.stride_tricks.sliding_window_view(image, kernel.shape[:2], axis=(1, 2))
    # windows: N x OH x OW x C x KH x KW; kernel: KH x KW x C x F.
    return np.tensordot(windows, kernel, axes=([4, 5, 3], [0, 1, 2]))


def _depthwise(image: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Zero padding of one, then each tap's shifted image times its per-channel weights."""
    height, width = image.shape[1:3]
    padded = np.pad(image, ((0, 0), (1, 1), (1, 1), (0, 0)))
    out = np.zeros_like(image)
    for kh in range(kernel.shape[0]):
        for kw in range(kernel.shape[1]):
            out += padded[:, kh:kh + height, kw:kw + width, :] * kernel[kh, kw]
    return out


def _matmul(n: int) -> Workload:
    return Workload(f"matmul_{n}", Bound.COMPUTE, ((n, n), (n, n)), (n, n),
                    lambda a, b: a @ b, flops=2.0 * n ** 3)


_MLP_LAYERS = ((784, 1024), (1024, 1024), (1024, 10))
_MLP_BATCH = 64

WORKLOADS: tuple[Workload, ...] = (
    Workload("ew_mul_4k", Bound.MEMORY, ((4096,), (4096,)), (4096,), lambda a, b: a * b),
    Workload("ew_chain_16m", Bound.MEMORY, ((1 << 24,), (1 << 24,)), (1 << 24,),
             lambda a, b: np.exp(np.abs(a) * b + a)),
    Workload("reduce_rows", Bound.MEMORY, ((1024, 1024),), (1024,), lambda a: a.sum(axis=1)),
    Workload("softmax_1024", Bound.MEMORY, ((1024, 1024),), (1024, 1024), _softmax),
    Workload("transpose_nchw", Bound.MEMORY, ((1, 112, 112, 64),), (1, 64, 112, 112),
             lambda a: np.ascontiguousarray(a.transpose(0, 3, 1, 2))),
    _matmul(512),
    _matmul(1024),
    Workload("mlp", Bound.COMPUTE,
             ((_MLP_BATCH, 784),) + tuple(s for k, n in _MLP_LAYERS for s in ((k, n), (n,))),
             (_MLP_BATCH, 10), _mlp,
             flops=sum(2.0 * _MLP_BATCH * k * n for k, n in _MLP_LAYERS),
             input_scales=(1.0,) + tuple(s for k, _ in _MLP_LAYERS for s in (k ** -0.5, 0.1))),
    Workload("conv2d", Bound.COMPUTE, ((1, 56, 56, 64), (3, 3, 64, 64)), (1, 54, 54, 64),
             _conv2d, flops=2.0 * 54 * 54 * 64 * 3 * 3 * 64),
    Workload("depthwise", Bound.MEMORY, ((1, 112, 112, 64), (3, 3, 64)), (1, 112, 112, 64),
             _depthwise, flops=2.0 * 112 * 112 * 64 * 3 * 3),
    Workload("tiny", Bound.OVERHEAD, ((4,),), (4,), lambda x: x + np.float32(1.0)),
)

BY_NAME: dict[str, Workload] = {w.name: w for w in WORKLOADS}


def select(names: Sequence[str] | None) -> list[Workload]:
    """The named workloads in the suite's order (all when `names` is None); an unknown name is
    an error listing the known ones."""
    if names is None:
        return list(WORKLOADS)
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown workload(s) {', '.join(unknown)}; known: "
                         f"{', '.join(BY_NAME)}")
    return [w for w in WORKLOADS if w.name in names]
