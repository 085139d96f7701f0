"""`python -m benchmarks.models`: each zoo model (benchmarks/models/registry.py) exported once
to linalg MLIR and run by weir (llvm-cpu on local-sync and local-task), torch eager, torch.compile
(inductor), onnxruntime (the torch.onnx export, 2 threads) and, with --iree-venv, IREE on the same
MLIR; prints three markdown tables (times; FLOP rates against the machine's measured f32 peak;
memory per call, peak live bytes, peak RSS and weir's transient packing), one row per model, and
writes models.md and models.json under --out. The `-onnx` rows (mlp-onnx, ...) take the
same model exported by torch.onnx and imported by weir-import-onnx instead
(benchmarks/models/onnx_export.py), then run the same peers on that MLIR.

    .venv/bin/python -m benchmarks.models --iree-venv .venv-iree --models mlp,resnet18

Ratios are weir's time over the other's: below 1, weir is faster. weir's local-task time and
onnxruntime's are medians over --paired-rounds more runs of the two back to back (the machine's
speed moves between minutes; the other peers run once). A model one peer cannot
compile or run keeps its row, with the reason as a note.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.utils._pytree as pytree

import weir.frontends.torch as wt
from benchmarks.models import onnx_export, peers
from benchmarks.models.registry import BY_NAME, MODELS
from benchmarks.models.packing import Packing
from benchmarks.suite.limits import measure_limits
from benchmarks.suite.peers import Memory, Outcome, Timing, iree_version
from weir.errors import ExportError, UsageError, WeirError
from weir.tools.cli import run_tool
from weir.tools.io.benchmark_timing import parse_min_time

TOOL = "benchmarks.models"
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "results"
_NOT_RUN = Outcome(error="no IREE environment given (--iree-venv)")


@dataclass
class Row:
    name: str
    ops: int | None = None
    weir: peers.WeirResult | None = None
    eager: Outcome = field(default_factory=lambda: Outcome(error="not run"))
    inductor: Outcome = field(default_factory=lambda: Outcome(error="not run"))
    iree_compile: Outcome = _NOT_RUN
    iree_sync: Outcome = _NOT_RUN
    iree_task: Outcome = _NOT_RUN
    iree_memory: Memory = Memory()
    onnxruntime: Outcome = field(default_factory=lambda: Outcome(error="not run"))
    onnxruntime_memory: Memory = Memory()
    eager_memory: Memory = Memory()
    eager_memory_error: str | None = None
    flops: int | None = None
    export_error: str | None = None

    def notes(self) -> list[str]:
        found = [self.export_error] if self.export_error else []
        outcomes = {"weir": self.weir.compile if self.weir else None,
                    "weir local-sync": self.weir.sync if self.weir else None,
                    "weir local-task": self.weir.task if self.weir else None,
                    "inductor": self.inductor, "IREE": self.iree_compile,
                    "IREE local-sync": self.iree_sync, "IREE local-task": self.iree_task,
                    "onnxruntime": self.onnxruntime}
        for who, outcome in outcomes.items():
            if outcome is not None and outcome.error and outcome.error not in (
                    "not run", "not compiled", _NOT_RUN.error):
                found.append(f"{who}: {outcome.error}")
        if self.weir and self.weir.memory_error:
            found.append(f"weir memory run: {self.weir.memory_error}")
        if self.eager_memory_error:
            found.append(f"eager memory run: {self.eager_memory_error}")
        return found


def _seconds(outcome: Outcome | None) -> float | None:
    return None if outcome is None else outcome.seconds


def _ratio(a: Outcome | None, b: Outcome | None) -> str:
    sa, sb = _seconds(a), _seconds(b)
    return "-" if sa is None or sb is None else f"{sa / sb:.3g}"


def _time(outcome: Outcome | None) -> str:
    s = _seconds(outcome)
    if s is None:
        return "-"
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns),
            *("| " + " | ".join(cells) + " |" for cells in rows)]


def _rate(flops: int | None, outcome: Outcome | None, peak: float | None) -> tuple[str, str]:
    """GFLOP/s of one call, and its share of the machine's peak."""
    s = _seconds(outcome)
    if not flops or s is None:
        return "-", "-"
    rate = flops / s
    return f"{rate / 1e9:.3g}", "-" if peak is None else f"{100 * rate / peak:.2g}%"


def _bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _time_cells(row: Row) -> tuple[str, ...]:
    w = row.weir
    diff = "-" if w is None or w.max_diff is None else f"{w.max_diff:.2g}"
    return (row.name, "-" if row.ops is None else str(row.ops),
            "-" if w is None or w.dispatches is None else str(w.dispatches), diff,
            _time(w and w.sync), _time(w and w.task), _time(row.eager),
            _time(row.inductor), _time(row.iree_sync), _time(row.iree_task),
            _time(row.onnxruntime), _ratio(w and w.sync, row.iree_sync),
            _ratio(w and w.task, row.iree_task), _ratio(w and w.task, row.eager),
            _ratio(w and w.task, row.inductor), _ratio(w and w.task, row.onnxruntime),
            _time(w and w.compile), _time(row.iree_compile))


def _rate_cells(row: Row, peak: float | None) -> tuple[str, ...]:
    w = row.weir
    timed = (w and w.task, row.iree_task, row.onnxruntime, row.eager)
    rates = [cell for outcome in timed for cell in _rate(row.flops, outcome, peak)]
    return (row.name, "-" if row.flops is None else f"{row.flops / 1e9:.3g}", *rates)


def _memory_cells(row: Row) -> tuple[str, ...]:
    w = row.weir
    mine = w.memory if w else Memory()
    packed: Packing | None = w.packing if w else None
    return (row.name, _bytes(mine.bytes_per_call), _bytes(row.iree_memory.bytes_per_call),
            _bytes(mine.peak_bytes), _bytes(row.iree_memory.peak_bytes),
            _bytes(mine.peak_rss_bytes), _bytes(row.iree_memory.peak_rss_bytes),
            _bytes(row.onnxruntime_memory.peak_rss_bytes), _bytes(row.eager_memory.peak_rss_bytes),
            "-" if packed is None else str(packed.slabs),
            _bytes(packed and packed.slab_bytes), _bytes(packed and packed.live_bound_bytes),
            _bytes(packed and packed.transient_bytes))


def markdown(rows: Sequence[Row], size: str, version: str | None,
             peak_flops: float | None = None) -> str:
    # The load says how far the times can be trusted: on a shared machine every peer slows.
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    head = (f"Zoo models at `{size}` size; weir llvm-cpu; times are medians of one call; "
            f"ratios are weir's time over the other's (below 1: weir faster); IREE "
            f"{version or 'not run'}, llvm-cpu, target cpu host; onnxruntime "
            f"{peers.ORT_THREADS} intra-op threads; {os.cpu_count()} CPUs, load "
            f"average {load} when written.\n\n")
    times = _table(("model", "linalg ops", "weir dispatches", "max diff vs eager", "weir sync",
                    "weir task", "eager", "inductor", "IREE sync", "IREE task", "onnxruntime",
                    "weir/IREE sync", "weir/IREE task", "weir task/eager",
                    "weir task/inductor", "weir task/onnxruntime", "weir compile",
                    "IREE compile"), [_time_cells(r) for r in rows])
    peak = "not measured" if peak_flops is None else f"{peak_flops / 1e9:.3g} GFLOP/s"
    rates = _table(("model", "GFLOP per call", "weir task GFLOP/s", "weir % peak",
                    "IREE task GFLOP/s", "IREE % peak", "onnxruntime GFLOP/s",
                    "onnxruntime % peak", "eager GFLOP/s", "eager % peak"),
                   [_rate_cells(r, peak_flops) for r in rows])
    memory = _table(("model", "weir bytes/call", "IREE bytes/call", "weir peak live",
                     "IREE peak live", "weir peak RSS", "IREE peak RSS", "onnxruntime peak RSS", "eager peak RSS",
                     "weir slabs", "weir slab bytes", "live bound", "transients' sum"),
                    [_memory_cells(r) for r in rows])
    notes = [f"- {row.name}: {note}" for row in rows for note in row.notes()]
    return (head + "\n".join(times) + "\n\n"
            f"FLOPs of convolutions and matrix products (torch's FlopCounterMode) per call, "
            f"over each peer's time; the machine's f32 peak: {peak} (benchmarks/suite/"
            f"limits.py).\n\n" + "\n".join(rates) + "\n\n"
            "Memory: bytes the allocator hands out per call (after a warm-up call) and the most "
            "live at once (weir and IREE on local-task, each in a child process of its own), "
            "each child's peak RSS (torch eager: the exported program; not for the -onnx rows); weir's transients: the stream phase's slabs against the "
            "most live at any command (the bound) and one allocation each (the sum).\n\n"
            + "\n".join(memory) + "\n"
            + ("\nNotes:\n" + "\n".join(notes) + "\n" if notes else ""))


def _outcome_json(outcome: Outcome | None) -> dict[str, object] | None:
    return None if outcome is None else {"seconds": outcome.seconds, "error": outcome.error}


def _memory_json(memory: Memory) -> dict[str, int | None]:
    return {"bytes_per_call": memory.bytes_per_call, "peak_bytes": memory.peak_bytes,
            "peak_rss_bytes": memory.peak_rss_bytes}


def _packing_json(packing: Packing | None) -> dict[str, int] | None:
    return None if packing is None else {
        "slabs": packing.slabs, "slab_bytes": packing.slab_bytes,
        "live_bound_bytes": packing.live_bound_bytes, "transient_bytes": packing.transient_bytes}


def to_json(rows: Sequence[Row], size: str, version: str | None,
            peak_flops: float | None = None) -> dict[str, object]:
    return {"size": size, "iree_version": version, "peak_flops": peak_flops, "models": [{
        "model": r.name, "linalg_ops": r.ops, "export_error": r.export_error, "flops": r.flops,
        "memory": {"weir": _memory_json(r.weir.memory if r.weir else Memory()),
                   "iree": _memory_json(r.iree_memory),
                   "onnxruntime": _memory_json(r.onnxruntime_memory),
                   "torch_eager": _memory_json(r.eager_memory)},
        "weir_packing": _packing_json(r.weir.packing if r.weir else None),
        "weir_dispatches": r.weir.dispatches if r.weir else None,
        "max_diff_vs_eager": r.weir.max_diff if r.weir else None,
        **{k: _outcome_json(v) for k, v in {
            "weir_compile": r.weir and r.weir.compile, "weir_local_sync": r.weir and r.weir.sync,
            "weir_local_task": r.weir and r.weir.task, "torch_eager": r.eager,
            "torch_inductor": r.inductor, "iree_compile": r.iree_compile,
            "iree_local_sync": r.iree_sync, "iree_local_task": r.iree_task,
            "onnxruntime": r.onnxruntime}.items()},
    } for r in rows]}


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _measure(row: Row, mlir: str, out_spec: Any, inputs: tuple[torch.Tensor, ...],
             expected: Any, timing: Timing, venv: Path | None, work: Path) -> None:
    """weir, then IREE, on the model's linalg MLIR."""
    row.ops = peers.linalg_ops(mlir)
    (work / "model.mlir").write_text(mlir)
    _log(f"  {row.name}: {row.ops} linalg ops; weir compiling")
    row.weir = peers.run_weir(mlir, out_spec, inputs, expected, timing, work)
    if venv is not None:
        _log(f"  {row.name}: IREE")
        iree = peers.run_iree(venv, work / "model.mlir", inputs, timing, work)
        row.iree_compile, row.iree_sync, row.iree_task = iree.compile, iree.sync, iree.task
        row.iree_memory = iree.memory


def _onnxruntime(row: Row, onnx: Path, inputs: tuple[torch.Tensor, ...], timing: Timing,
                 work: Path) -> None:
    _log(f"  {row.name}: onnxruntime")
    row.onnxruntime, row.onnxruntime_memory = peers.run_onnxruntime(onnx, inputs, timing, work)


def _pair(row: Row, onnx: Path, inputs: tuple[torch.Tensor, ...], timing: Timing,
          work: Path, rounds: int) -> None:
    """weir's local-task time and onnxruntime's as medians of back-to-back rounds."""
    if row.weir is None or rounds < 1:
        return
    plural = "s" if rounds > 1 else ""
    _log(f"  {row.name}: {rounds} more round{plural} of weir local-task and onnxruntime")
    row.weir.task, row.onnxruntime = peers.paired_rounds(
        row.weir.task, row.onnxruntime, onnx, inputs, timing, work, rounds)


def run_model(name: str, size: str, timing: Timing, venv: Path | None,
              rounds: int = 0) -> Row:
    if name.endswith(onnx_export.SUFFIX):
        return run_onnx_model(name, size, timing, venv, rounds)
    row = Row(name)
    model, inputs = BY_NAME[name].build(size)
    with torch.no_grad():
        expected = model(*inputs)
    row.flops = peers.count_flops(model, inputs)
    row.eager, row.inductor = peers.run_torch(model, inputs, timing)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        try:
            onnx_export.write(model, inputs, work / "model.onnx")
        except Exception as error:  # noqa: BLE001 - torch.onnx fails with its own errors
            row.onnxruntime = Outcome(error=f"torch.onnx.export: {str(error).splitlines()[0]}")
        else:
            _onnxruntime(row, work / "model.onnx", inputs, timing, work)
        try:
            program = torch.export.export(model, inputs)
            mlir = wt.export(program)
        except Exception as error:  # noqa: BLE001 - torch.export fails with its own errors
            row.export_error = f"export: {str(error).splitlines()[0]}"
            return row
        ran, row.eager_memory = peers.eager_memory(program, inputs, work)
        row.eager_memory_error = ran.error
        _measure(row, mlir, program.call_spec.out_spec, inputs, expected, timing, venv, work)
        _pair(row, work / "model.onnx", inputs, timing, work, rounds)
    return row


def run_onnx_model(name: str, size: str, timing: Timing, venv: Path | None,
                   rounds: int = 0) -> Row:
    """The `-onnx` row: the model exported by torch.onnx and imported by weir-import-onnx
    (benchmarks/models/onnx_export.py); weir's flat outputs are put back in eager's structure
    (the ONNX graph's outputs are its leaves, in order)."""
    row = Row(name)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        try:
            model, inputs = onnx_export.export(name.removesuffix(onnx_export.SUFFIX),
                                               work / "model.onnx", size)
        except Exception as error:  # noqa: BLE001 - torch.onnx fails with its own errors
            row.export_error = f"torch.onnx.export: {str(error).splitlines()[0]}"
            return row
        with torch.no_grad():
            expected = model(*inputs)
        row.flops = peers.count_flops(model, inputs)
        row.eager, row.inductor = peers.run_torch(model, inputs, timing)
        _onnxruntime(row, work / "model.onnx", inputs, timing, work)
        try:
            mlir = onnx_export.import_with_cli(work / "model.onnx", work / "imported.mlir")
        except ExportError as error:
            row.export_error = str(error)
            return row
        _measure(row, mlir, pytree.tree_flatten(expected)[1], inputs, expected, timing, venv,
                 work)
        _pair(row, work / "model.onnx", inputs, timing, work, rounds)
    return row


def _names() -> list[str]:
    """Every zoo model, then the ONNX variants of those that have one."""
    return [m.name for m in MODELS] + [n + onnx_export.SUFFIX for n in onnx_export.MODELS]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.models",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", help=f"comma-separated subset of: {', '.join(_names())} "
                                         f"(-onnx: exported to ONNX, through weir-import-onnx)")
    parser.add_argument("--size", choices=("bench", "test"), default="bench",
                        help="the registry's benchmark sizes (default) or its test sizes")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--min-time", default="0.3s",
                        help="each repetition's least duration (0.3s) or iteration count (10x)")
    parser.add_argument("--paired-rounds", type=int, default=2,
                        help="more rounds of weir local-task and onnxruntime, back to back; "
                             "each reports the median of its times (default 2)")
    parser.add_argument("--iree-venv", type=Path,
                        help="a virtual environment with IREE's compiler and runtime "
                             "(make iree-venv creates .venv-iree)")
    parser.add_argument("--peak-gflops", type=float,
                        help="the machine's f32 peak in GFLOP/s for the %% of peak columns "
                             "(default: measured at the start, benchmarks/suite/limits.py)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where models.md and models.json go (default benchmarks/results)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)

    def run() -> int:
        known = _names()
        names = [n.strip() for n in args.models.split(",")] if args.models else known
        unknown = [n for n in names if n not in known]
        if unknown:
            raise UsageError(f"--models: unknown {', '.join(unknown)}; known: "
                             f"{', '.join(known)}")
        if args.repetitions < 1:
            raise UsageError(f"--repetitions must be at least 1, got {args.repetitions}")
        if args.paired_rounds < 0:
            raise UsageError(f"--paired-rounds must be at least 0, got {args.paired_rounds}")
        parse_min_time(args.min_time)
        venv = args.iree_venv.resolve() if args.iree_venv else None
        if venv is not None and not (venv / "bin" / "iree-compile").exists():
            raise UsageError(f"--iree-venv {args.iree_venv}: no bin/iree-compile there")
        timing = Timing(args.repetitions, args.min_time)
        version = iree_version(venv) if venv else None
        if args.peak_gflops is not None and not args.peak_gflops > 0:
            raise UsageError(f"--peak-gflops must be above 0, got {args.peak_gflops}")
        if args.peak_gflops is None:
            _log("measuring the machine's f32 peak")
        peak_flops = measure_limits().peak_flops if args.peak_gflops is None \
            else args.peak_gflops * 1e9
        rows: list[Row] = []
        args.out.mkdir(parents=True, exist_ok=True)
        for index, name in enumerate(names, 1):
            began = time.perf_counter()
            _log(f"[{index}/{len(names)}] {name}")
            rows.append(run_model(name, args.size, timing, venv, args.paired_rounds))
            _log(f"  {name}: {time.perf_counter() - began:.0f} s")
            # Written after every model: a long run stopped early keeps the rows it finished.
            table = markdown(rows, args.size, version, peak_flops)
            (args.out / "models.md").write_text(table)
            (args.out / "models.json").write_text(
                json.dumps(to_json(rows, args.size, version, peak_flops), indent=2) + "\n")
        sys.stdout.write(table)
        return 0

    return run_tool(TOOL, run)


if __name__ == "__main__":
    sys.exit(main())
