"""Compile time against program length: generated programs of 1,000 to 20,000 ops compiled by
weir-compile (reference and llvm-cpu) and, given an IREE environment, by iree-compile, each
reported as seconds per 1,000 ops. Exported models are long programs, so the figure that
matters is that this number stays flat as the program grows (compile time linear in length).

    .venv/bin/python -m benchmarks.compile_time [--iree-venv .venv-iree] [--sizes 1000,5000]

The programs (all on small tensors, so compiling dominates):
- chain: each elementwise op uses the one before (x -> max((x + a) * b - a, b), repeated); the
  whole chain fuses into one dispatch whose kernel is one long expression per element.
- graph: each op uses the one before and an earlier value up to 97 ops back (fan-out and
  fan-in: add, scale, min, max), again one fused dispatch.
- dispatches: matmul and elementwise ops alternating, so every matmul starts a dispatch of its
  own: a long host program of separate dispatches.

Each weir-compile and iree-compile runs in a subprocess and is timed as a user sees it (start-up
included); weir's module is then run once and checked against numpy. Prints a markdown table and
writes compile_time.md and compile_time.json under --out.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from benchmarks.suite.peers import REPO_ROOT, iree_version, mismatch
from weir.errors import UsageError
from weir.tools.cli import run_tool

TOOL = "benchmarks.compile_time"
DEFAULT_OUT = Path(__file__).resolve().parent / "results"
TARGETS = ("reference", "llvm-cpu")
_WIDTH = 16      # elements per tensor in chain and graph
_SIDE = 8        # matrices in `dispatches` are _SIDE x _SIDE
_REACH = 97      # how far back a graph op may reach for its second operand


@dataclass(frozen=True)
class Program:
    """A generated program: its MLIR text, its inputs, and numpy's result for them."""

    shape: str
    ops: int
    text: str
    inputs: tuple[np.ndarray, ...]
    expected: np.ndarray


def _vector_inputs() -> tuple[np.ndarray, np.ndarray]:
    a = np.linspace(-1.0, 1.0, _WIDTH, dtype=np.float32)
    b = np.linspace(0.3, 0.5, _WIDTH, dtype=np.float32)
    return a, b


_NUMPY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "maximumf": np.maximum,
    "minimumf": np.minimum,
}


def _elementwise(n: int, operands: Callable[[int], tuple[str, str, str]]) -> Program:
    """`n` ops on tensor<_WIDTH x f32>; `operands(i)` names op i and its two operands, each
    `%a`, `%b` or an earlier result `%j`."""
    a, b = _vector_inputs()
    values: dict[str, np.ndarray] = {"%a": a, "%b": b}
    t = f"tensor<{_WIDTH}xf32>"
    lines = [f"func.func @main(%a: {t}, %b: {t}) -> {t} {{"]
    for i in range(n):
        name, x, y = operands(i)
        lines.append(f"  %{i} = arith.{name} {x}, {y} : {t}")
        values[f"%{i}"] = _NUMPY[name](values[x], values[y]).astype(np.float32)
    last = f"%{n - 1}"
    lines += [f"  return {last} : {t}", "}", ""]
    return Program("", n, "\n".join(lines), (a, b), values[last])


def chain(n: int) -> Program:
    steps = (("addf", "%a"), ("mulf", "%b"), ("subf", "%a"), ("maximumf", "%b"))

    def operands(i: int) -> tuple[str, str, str]:
        name, other = steps[i % 4]
        return name, "%a" if i == 0 else f"%{i - 1}", other
    return _with_shape("chain", _elementwise(n, operands))


def graph(n: int) -> Program:
    """Values stay within [-1, 1]: a sum is halved by the next op, min and max keep bounds."""
    def far(i: int) -> str:
        if i < 2:
            return "%b"
        return f"%{i - 2 - (i * 7919) % min(i - 1, _REACH)}"

    def operands(i: int) -> tuple[str, str, str]:
        prev = "%a" if i == 0 else f"%{i - 1}"
        return (("addf", prev, far(i)), ("mulf", prev, "%b"), ("minimumf", prev, far(i)),
                ("maximumf", prev, "%a"))[i % 4]
    return _with_shape("graph", _elementwise(n, operands))


def dispatches(n: int) -> Program:
    """x -> x @ w + a, repeated: w's rows sum to at most 1/2 in magnitude, so values stay
    bounded however long the program is."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.0, 1.0, (_SIDE, _SIDE)).astype(np.float32)
    w = (rng.uniform(-1.0, 1.0, (_SIDE, _SIDE)) / (2 * _SIDE)).astype(np.float32)
    a = rng.uniform(-1.0, 1.0, (_SIDE, _SIDE)).astype(np.float32)
    t = f"tensor<{_SIDE}x{_SIDE}xf32>"
    lines = [f"func.func @main(%x: {t}, %w: {t}, %a: {t}) -> {t} {{",
             f"  %zero = arith.constant dense<0.0> : {t}"]
    value, prev = x, "%x"
    for i in range(n):
        if i % 2 == 0:
            lines.append(f"  %{i} = linalg.matmul ins({prev}, %w : {t}, {t}) "
                         f"outs(%zero : {t}) -> {t}")
            value = (value @ w).astype(np.float32)
        else:
            lines.append(f"  %{i} = arith.addf {prev}, %a : {t}")
            value = (value + a).astype(np.float32)
        prev = f"%{i}"
    lines += [f"  return {prev} : {t}", "}", ""]
    return Program("dispatches", n, "\n".join(lines), (x, w, a), value)


def _with_shape(shape: str, program: Program) -> Program:
    return Program(shape, program.ops, program.text, program.inputs, program.expected)


SHAPES: dict[str, Callable[[int], Program]] = {
    "chain": chain, "graph": graph, "dispatches": dispatches}


@dataclass(frozen=True)
class Timed:
    """A compile's wall time, or the one-line reason it has none."""

    seconds: float | None = None
    error: str | None = None


@dataclass(frozen=True)
class Row:
    shape: str
    ops: int
    compiler: str          # "weir reference", "weir llvm-cpu", "IREE llvm-cpu"
    compile: Timed
    mismatch: str | None = None

    @property
    def per_1000_ops(self) -> float | None:
        return None if self.compile.seconds is None else self.compile.seconds * 1000 / self.ops


def _timed_run(command: Sequence[str], timeout_s: float) -> Timed:
    began = time.perf_counter()
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, cwd=REPO_ROOT,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return Timed(error=f"timed out after {timeout_s:g} s")
    except OSError as error:
        return Timed(error=f"cannot run {command[0]}: {error.strerror or error}")
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return Timed(error=(lines or [f"exited with status {done.returncode}"])[-1][:240])
    return Timed(seconds=seconds)


def _check(module: Path, program: Program) -> str | None:
    """Why the compiled module's result is not numpy's, or None: a fast wrong compile is no
    result. Imported here so that only a run that checks pays for the runtime."""
    import weir.api as weir
    with weir.load([module], device="local-sync") as context:
        actual = np.asarray(context.lookup_function("main")(*program.inputs))
    return mismatch(actual, program.expected)


def measure(program: Program, targets: Sequence[str], iree_venv: Path | None,
            work: Path, timeout_s: float) -> list[Row]:
    source = work / f"{program.shape}_{program.ops}.mlir"
    source.write_text(program.text)
    rows = []
    for target in targets:
        module = work / f"{program.shape}_{program.ops}_{target}.wvm"
        timed = _timed_run([sys.executable, "-m", "weir.tools.compile",
                            f"--iree-hal-target-backends={target}", str(source), "-o",
                            str(module)], timeout_s)
        wrong = _check(module, program) if timed.error is None else None
        rows.append(Row(program.shape, program.ops, f"weir {target}", timed, wrong))
    if iree_venv is not None:
        timed = _timed_run([str(iree_venv / "bin" / "iree-compile"),
                            "--iree-hal-target-backends=llvm-cpu",
                            "--iree-llvmcpu-target-cpu=host", str(source), "-o",
                            str(work / f"{program.shape}_{program.ops}.vmfb")], timeout_s)
        rows.append(Row(program.shape, program.ops, "IREE llvm-cpu", timed))
    return rows


def markdown(rows: Sequence[Row], iree: str | None) -> str:
    compilers = list(dict.fromkeys(r.compiler for r in rows))
    programs = list(dict.fromkeys((r.shape, r.ops) for r in rows))
    by_key = {(r.shape, r.ops, r.compiler): r for r in rows}
    head = ["program", "ops"] + [f"{c} s/1k ops" for c in compilers] + ["notes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for shape, ops in programs:
        cells, notes = [shape, f"{ops:,}"], []
        for c in compilers:
            row = by_key.get((shape, ops, c))
            per = row.per_1000_ops if row else None
            cells.append("—" if row is None else "failed" if per is None else f"{per:.2f}")
            if row is not None and (row.compile.error or row.mismatch):
                notes.append(f"{c}: {row.compile.error or row.mismatch}")
        cells.append("; ".join(notes).replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    peer = f"IREE {iree} (iree-compile, llvm-cpu, host CPU)" if iree else \
        "IREE not measured (no --iree-venv)"
    return (f"Compile wall time per 1,000 ops, start-up included; {peer}.\n\n"
            + "\n".join(lines) + "\n")


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise UsageError(f"--sizes: expected comma-separated op counts, got '{text}'") from None
    if not sizes or min(sizes) < 1:
        raise UsageError(f"--sizes: expected op counts of at least 1, got '{text}'")
    return sizes


def _choices(flag: str, text: str, known: Sequence[str]) -> tuple[str, ...]:
    chosen = tuple(s.strip() for s in text.split(",") if s.strip())
    unknown = [c for c in chosen if c not in known]
    if unknown or not chosen:
        raise UsageError(f"{flag}: unknown {', '.join(unknown) or 'empty list'}; known: "
                         f"{', '.join(known)}")
    return chosen


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"python -m {TOOL}",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,5000,20000", help="op counts (1000,5000,20000)")
    parser.add_argument("--shapes", default="chain,graph",
                        help=f"programs, of: {', '.join(SHAPES)} (chain,graph: dispatches of "
                             "20,000 ops are 10,000 kernels, each an LLVM compile)")
    parser.add_argument("--targets", default=",".join(TARGETS),
                        help="weir's target backends (reference,llvm-cpu)")
    parser.add_argument("--iree-venv", type=Path,
                        help="a virtual environment with iree-base-compiler (make iree-venv)")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds one compile may take before it counts as failed (900)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where compile_time.md and compile_time.json go "
                             "(default benchmarks/results)")
    return parser


def run(args: argparse.Namespace) -> int:
    sizes = _sizes(args.sizes)
    shapes = _choices("--shapes", args.shapes, list(SHAPES))
    targets = _choices("--targets", args.targets, TARGETS)
    venv = args.iree_venv
    if venv is not None and not (venv / "bin" / "iree-compile").exists():
        raise UsageError(f"--iree-venv {venv}: no bin/iree-compile there (make iree-venv "
                         f"creates one at .venv-iree)")
    iree = iree_version(venv) if venv is not None else None
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="weir-compile-time-") as work:
        for shape in shapes:
            for n in sizes:
                print(f"compiling {shape} of {n:,} ops ...", file=sys.stderr, flush=True)
                rows += measure(SHAPES[shape](n), targets, venv, Path(work), args.timeout)
    table = markdown(rows, iree)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "compile_time.md").write_text(table)
    document = {"iree_version": iree, "rows": [
        {**asdict(r), "seconds_per_1000_ops": r.per_1000_ops} for r in rows]}
    (args.out / "compile_time.json").write_text(json.dumps(document, indent=2) + "\n")
    sys.stdout.write(table)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return run_tool(TOOL, lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())
