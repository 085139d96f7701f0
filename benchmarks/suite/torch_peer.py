"""PyTorch as a peer of the kernel suite: each workload written with torch ops, timed in this
process by the same loop as numpy, eager and compiled by `torch.compile` (inductor, its default
backend; it compiles on a warm-up call outside the timing).

torch gets each input in the layout it is fastest on, converted before timing (the convolutions'
NHWC images become NCHW, their HWCF and HWC filters OIHW): the suite compares the computation, not a
layout change that the program itself does not ask for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from benchmarks.suite.peers import Outcome, Timing, benchmark_in_process

TorchFunction = Callable[..., torch.Tensor]


def _mlp(x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor,
         b2: torch.Tensor, w3: torch.Tensor, b3: torch.Tensor) -> torch.Tensor:
    h1 = torch.relu(torch.addmm(b1, x, w1))
    h2 = torch.relu(torch.addmm(b2, h1, w2))
    return torch.addmm(b3, h2, w3)


def _conv2d(image_nchw: torch.Tensor, filter_oihw: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.conv2d(image_nchw, filter_oihw)


def _conv2d_inputs(image: np.ndarray, kernel: np.ndarray) -> list[torch.Tensor]:
    return [torch.from_numpy(np.ascontiguousarray(image.transpose(0, 3, 1, 2))),
            torch.from_numpy(np.ascontiguousarray(kernel.transpose(3, 2, 0, 1)))]


def _conv2d_result(result: torch.Tensor) -> np.ndarray:
    return result.permute(0, 2, 3, 1).numpy()


def _depthwise(image_nchw: torch.Tensor, filter_c1hw: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.conv2d(image_nchw, filter_c1hw, padding=1,
                                      groups=image_nchw.shape[1])


def _depthwise_inputs(image: np.ndarray, kernel: np.ndarray) -> list[torch.Tensor]:
    return [torch.from_numpy(np.ascontiguousarray(image.transpose(0, 3, 1, 2))),
            torch.from_numpy(np.ascontiguousarray(kernel.transpose(2, 0, 1)[:, None]))]


_SAME_LAYOUT: dict[str, TorchFunction] = {
    "ew_mul_4k": torch.mul,
    "ew_chain_16m": lambda a, b: torch.exp(torch.abs(a) * b + a),
    "reduce_rows": lambda a: a.sum(dim=1),
    "softmax_1024": lambda x: torch.softmax(x, dim=1),
    "transpose_nchw": lambda a: a.permute(0, 3, 1, 2).contiguous(),
    "matmul_512": torch.mm,
    "matmul_1024": torch.mm,
    "mlp": _mlp,
    "tiny": lambda x: x + 1.0,
}


def torch_form(name: str, arrays: Sequence[np.ndarray]
               ) -> tuple[TorchFunction, list[torch.Tensor], Callable[[torch.Tensor], np.ndarray]]:
    """The workload's torch function, its inputs as torch wants them, and how to read its result
    back in the program's layout (to check it against numpy's)."""
    if name == "conv2d":
        return _conv2d, _conv2d_inputs(*arrays), _conv2d_result
    if name == "depthwise":
        return _depthwise, _depthwise_inputs(*arrays), _conv2d_result
    if name not in _SAME_LAYOUT:
        raise KeyError(f"no torch form for workload {name!r}")
    return _SAME_LAYOUT[name], [torch.from_numpy(a) for a in arrays], lambda r: r.numpy()


def _failure(error: Exception) -> Outcome:
    first = str(error).splitlines()[0] if str(error) else ""
    return Outcome(error=f"{type(error).__name__}: {first}")


def benchmark_torch(name: str, arrays: Sequence[np.ndarray], expected: np.ndarray,
                    timing: Timing, compiled: bool) -> Outcome:
    """Eager (`compiled` False) or inductor: the time per invocation, or why there is none (a
    result that differs from numpy's is no result)."""
    function, inputs, result = torch_form(name, arrays)
    with torch.no_grad():
        if compiled:
            torch._dynamo.reset()
            function = torch.compile(function)
        try:
            got = result(function(*inputs))  # inductor compiles here, outside the timing
        except Exception as error:  # noqa: BLE001 - a peer's failure is this cell's note
            return _failure(error)
        scale = max(1.0, float(np.max(np.abs(expected))))
        if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-3,
                                                          atol=1e-4 * scale):
            return Outcome(error="torch's result differs from numpy's")
        return benchmark_in_process(function, inputs, timing)
