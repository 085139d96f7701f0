"""How the model benchmark compiles and times each peer on one zoo model. Every time is the
median seconds of one call over the repetitions of weir's Google Benchmark loop
(weir/tools/io/benchmark_timing.py), numpy or torch tensors in and out:

- weir: the exported MLIR compiled once for llvm-cpu; its result checked in this process
  through weir.frontends.torch's CompiledModel on both drivers, then one call timed on
  local-sync and on local-task by benchmarks/suite/python_call.py in a child process, numpy in
  and out, as IREE's is. (Timed in this process, after torch.compile has run here, the same
  calls took 10-50% longer: ResNet-50 120 ms against 85 ms in a child of its own.)
- torch eager, and torch.compile with its default backend (inductor), after one warm-up call
  (inductor compiles on it), under no_grad, in this process.
- IREE: `iree-compile` on the same MLIR file, then one call through IREE's Python API on
  local-sync and local-task, timed by benchmarks/suite/python_call.py run by the IREE virtual
  environment's own interpreter (IREE is never imported here).
- onnxruntime: the model exported by torch.onnx, on its CPU provider with 2 intra-op threads,
  timed by python_call.py in a child process too.

Memory is measured in child processes, one per peer, so peers do not mix: python_call.py reports
the bytes each runtime's allocator hands out per call, the most it held at once, and the child's
peak RSS (weir: its compiled module loaded on local-task in a child of its own; IREE: its
local-task timing child; onnxruntime: its timing child; torch eager: the exported program run in
a child of its own). weir's transient packing is read from
the program at the end of its stream phase (benchmarks/models/packing.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

import weir.api as weir
import weir.frontends.torch as wt
from benchmarks.models.packing import Packing, packing_of
from benchmarks.suite import peers as suite_peers
from benchmarks.suite.peers import Memory, Outcome, Timing
from weir.errors import WeirError
from weir.tools.io.benchmark_timing import measure, parse_min_time

# A linalg op of the exported program; `yield` and `index` live in op bodies.
_LINALG_OP = re.compile(r"\blinalg\.(?!yield\b|index\b)\w+")
_DISPATCH = "call @hal.command_buffer.dispatch("


def linalg_ops(mlir: str) -> int:
    return len(_LINALG_OP.findall(mlir))


def timed(call: Callable[[], object], timing: Timing) -> Outcome:
    measured = measure(call, parse_min_time(timing.min_time), timing.repetitions)
    return Outcome(seconds=float(np.median([m.real_per_iteration for m in measured])))


def _leaves(value: Any) -> list[torch.Tensor]:
    return [t for t in torch.utils._pytree.tree_leaves(value) if isinstance(t, torch.Tensor)]


def max_difference(got: Any, expected: Any) -> float:
    """The largest absolute difference over every output (integer outputs included)."""
    pairs = zip(_leaves(got), _leaves(expected), strict=True)
    return max(float((g.double() - e.double()).abs().max()) if e.numel() else 0.0
               for g, e in pairs)


@dataclass
class WeirResult:
    compile: Outcome
    sync: Outcome
    task: Outcome
    dispatches: int | None = None
    max_diff: float | None = None
    memory: Memory = Memory()
    memory_error: str | None = None
    packing: Packing | None = None


def dispatch_count(path: Path) -> int:
    """Dispatches recorded by @main of the module file at `path`: its
    `hal.command_buffer.dispatch` calls, read from weir-dump-module (the zoo's programs have no
    loops, so each runs once per call)."""
    done = subprocess.run([sys.executable, "-m", "weir.tools.dump_module", str(path)],
                          capture_output=True, text=True, check=True, cwd=suite_peers.REPO_ROOT)
    return done.stdout.count(_DISPATCH)


def save_inputs(inputs: Sequence[torch.Tensor], work: Path) -> list[Path]:
    """The inputs as .npy files, for the peers run in child processes."""
    paths = []
    for i, tensor in enumerate(inputs):
        paths.append(work / f"input{i}.npy")
        np.save(paths[-1], tensor.numpy())
    return paths


def _memory_child(python: Path, runtime: str, module: Path, inputs: Sequence[Path],
                  device: str = "local-task") -> tuple[Outcome, Memory]:
    """A child process that loads and calls the model a few times for its memory alone."""
    return suite_peers.python_call_measured(python, runtime, module, "main", inputs,
                                            Timing(1, "1x"), device=device)


def run_weir(mlir: str, out_spec: Any, inputs: Sequence[torch.Tensor], expected: Any,
             timing: Timing, work: Path) -> WeirResult:
    """`work / "model.mlir"` (holding `mlir`) compiled by weir-compile in a child process and
    timed as iree-compile is: the command a user runs, start-up included, nothing else. (Timed
    in this process with every phase dumped for the packing columns, VGG took 21.5 s where the
    compile alone takes 7.9: 1.6 GB of printed IR.) The stream phase for those columns is
    compiled again here, untimed."""
    module_path = work / "model.wvm"
    compiled = suite_peers.compile_weir(work / "model.mlir", "llvm-cpu", module_path,
                                        ("--iree-opt-strip-assertions",))
    if compiled.error is not None:
        not_compiled = Outcome(error="not compiled")
        return WeirResult(compiled, not_compiled, not_compiled)
    result = WeirResult(compiled, Outcome(error="not run"), Outcome(error="not run"),
                        dispatch_count(module_path))
    options = weir.CompilerOptions(target_backends=("llvm-cpu",), strip_assertions=True)
    result.packing = packing_of(weir.compile_to_phase(mlir, "model.mlir", options, "stream"))
    paths = save_inputs(inputs, work)
    ran, result.memory = _memory_child(Path(sys.executable), "weir", module_path, paths)
    result.memory_error = ran.error
    module = module_path.read_bytes()
    for device in ("local-sync", "local-task"):
        try:
            with wt.CompiledModel(module, device, out_spec, mlir) as model:
                got = model(*inputs)
                diff = max_difference(got, expected)
                result.max_diff = diff if result.max_diff is None else max(result.max_diff, diff)
        except WeirError as error:
            outcome = Outcome(error=str(error).splitlines()[0])
        else:
            outcome = suite_peers.python_call(Path(sys.executable), "weir", module_path,
                                              "main", paths, timing, device=device)
        if device == "local-sync":
            result.sync = outcome
        else:
            result.task = outcome
    return result


def paired_rounds(weir_task: Outcome, onnxruntime: Outcome, onnx_path: Path,
                  inputs: Sequence[torch.Tensor], timing: Timing, work: Path,
                  rounds: int) -> tuple[Outcome, Outcome]:
    """weir on local-task (`work / "model.wvm"`) and onnxruntime timed again, back to back,
    `rounds` more times; each keeps the median of all its times. This machine's speed moves by
    10-50% over seconds to minutes (README, zoo section), and the first two times were taken
    minutes apart, between the other peers: neighbours' medians compare the two runtimes, not
    two moments of the machine. A failed child keeps the times of the rounds before it."""
    if weir_task.seconds is None or onnxruntime.seconds is None:
        return weir_task, onnxruntime
    weir_times, ort_times = [weir_task.seconds], [onnxruntime.seconds]
    paths = save_inputs(inputs, work)
    for _ in range(rounds):
        ours = suite_peers.python_call(Path(sys.executable), "weir", work / "model.wvm", "main",
                                       paths, timing, device="local-task")
        theirs, _ = run_onnxruntime(onnx_path, inputs, timing, work)
        if ours.seconds is None or theirs.seconds is None:
            break
        weir_times.append(ours.seconds)
        ort_times.append(theirs.seconds)
    return Outcome(seconds=float(np.median(weir_times))), \
        Outcome(seconds=float(np.median(ort_times)))


def run_torch(model: torch.nn.Module, inputs: Sequence[torch.Tensor],
              timing: Timing) -> tuple[Outcome, Outcome]:
    """Eager, then inductor (torch.compile's default backend)."""
    with torch.no_grad():
        eager = timed(lambda: model(*inputs), timing)
        torch._dynamo.reset()
        try:
            fast = torch.compile(model)
            fast(*inputs)
            inductor = timed(lambda: fast(*inputs), timing)
        except Exception as error:  # noqa: BLE001 - inductor's failure is this cell's note
            inductor = Outcome(error=f"{type(error).__name__}: {str(error).splitlines()[0]}")
    return eager, inductor


@dataclass
class IreeResult:
    compile: Outcome
    sync: Outcome
    task: Outcome
    memory: Memory = Memory()  # of the local-task child


def run_iree(venv: Path, mlir_path: Path, inputs: Sequence[torch.Tensor],
             timing: Timing, work: Path) -> IreeResult:
    """IREE's compile time, then its local-sync and local-task times."""
    module = work / "model.vmfb"
    compiled = suite_peers.compile_iree(venv, mlir_path, module)
    if compiled.error is not None:
        return IreeResult(compiled, Outcome(error="not compiled"), Outcome(error="not compiled"))
    paths = save_inputs(inputs, work)
    python = venv / "bin" / "python"
    sync, _ = suite_peers.python_call_measured(python, "iree", module, "main", paths, timing,
                                               device="local-sync")
    task, memory = suite_peers.python_call_measured(python, "iree", module, "main", paths,
                                                    timing, device="local-task")
    return IreeResult(compiled, sync, task, memory)


ORT_THREADS = 2


def run_onnxruntime(onnx_path: Path, inputs: Sequence[torch.Tensor], timing: Timing,
                    work: Path) -> tuple[Outcome, Memory]:
    """onnxruntime (2 intra-op threads) on the torch.onnx export, in a child process."""
    return suite_peers.python_call_measured(Path(sys.executable), "onnxruntime", onnx_path,
                                            "main", save_inputs(inputs, work), timing)


def eager_memory(program: Any, inputs: Sequence[torch.Tensor],
                 work: Path) -> tuple[Outcome, Memory]:
    """torch eager's peak RSS: the exported program saved and run in a child process (the
    outcome says why there is none)."""
    path = work / "model.pt2"
    torch.export.save(program, str(path))
    return _memory_child(Path(sys.executable), "torch", path, save_inputs(inputs, work))


def count_flops(model: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> int:
    """FLOPs of one call as torch counts them (convolutions and matrix products, two per
    multiply-add; elementwise work is not counted)."""
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(*inputs)
    return int(counter.get_total_flops())
