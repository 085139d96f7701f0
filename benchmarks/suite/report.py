"""The suite's report: a markdown table for people and a JSON document for scripts, both from
the same rows, with the machine and its measured limits so the numbers can be read later."""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.suite.limits import Limits
from benchmarks.suite.peers import Outcome
from benchmarks.suite.runner import SuiteOptions, WorkloadResult

COLUMNS = ("workload", "weir", "numpy", "IREE", "torch eager", "inductor", "weir/IREE speedup",
           "weir/numpy speedup", "best peer", "weir/best speedup", "limit", "weir % of limit",
           "weir-compile s", "iree-compile s", "notes")
ABSENT = "—"
FAILED = "failed"


def format_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def _time_cell(outcome: Outcome | None) -> str:
    if outcome is None:
        return ABSENT
    return FAILED if outcome.seconds is None else format_time(outcome.seconds)


def _seconds_cell(outcome: Outcome | None) -> str:
    if outcome is None:
        return ABSENT
    return FAILED if outcome.seconds is None else f"{outcome.seconds:.2f}"


def _number(value: float | None, form: str) -> str:
    return ABSENT if value is None else form.format(value)


def _notes(row: WorkloadResult) -> str:
    notes = [f"weir: {row.weir.error}" if row.weir.error else "",
             f"IREE: {row.iree.error}" if row.iree and row.iree.error else "",
             f"eager: {row.eager.error}" if row.eager.error else "",
             f"inductor: {row.inductor.error}" if row.inductor and row.inductor.error else "",
             row.mismatch or ""]
    return "; ".join(n for n in notes if n).replace("|", "\\|")


def _cells(row: WorkloadResult) -> list[str]:
    best = row.best_peer
    return [row.name, _time_cell(row.weir), _time_cell(row.numpy), _time_cell(row.iree),
            _time_cell(row.eager), _time_cell(row.inductor),
            _number(row.speedup_vs_iree, "{:.2f}×"), _number(row.speedup_vs_numpy, "{:.2f}×"),
            ABSENT if best is None else best[0], _number(row.speedup_vs_best, "{:.2f}×"),
            ABSENT if row.limit_s is None else format_time(row.limit_s),
            _number(None if row.fraction_of_limit is None else row.fraction_of_limit * 100,
                    "{:.1f}%"),
            _seconds_cell(row.weir_compile), _seconds_cell(row.iree_compile), _notes(row)]


def header(options: SuiteOptions, limits: Limits, iree_version: str | None) -> str:
    iree = f"IREE ({iree_version}) llvm-cpu, host CPU" if iree_version else \
        "IREE not measured (no --iree-venv)"
    return (f"Machine: {limits.cpu}, {limits.threads} threads; limits measured here: "
            f"{limits.bandwidth / 1e9:.1f} GB/s memory (triad), "
            f"{limits.peak_flops / 1e9:.1f} GFLOP/s f32 (FMA).\n"
            f"weir target `{options.target}`; {iree}. Per-invocation medians of "
            f"{options.timing.repetitions} repetition(s), each at least "
            f"{options.timing.min_time}, on local-task (tiny: Python API on local-sync).\n")


def markdown(rows: Sequence[WorkloadResult], options: SuiteOptions, limits: Limits,
             iree_version: str | None) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_cells(row)) + " |" for row in rows]
    return header(options, limits, iree_version) + "\n" + "\n".join(lines) + "\n"


def _outcome_fields(prefix: str, outcome: Outcome | None) -> dict[str, object]:
    return {f"{prefix}_s": outcome.seconds if outcome else None,
            f"{prefix}_error": outcome.error if outcome else None}


def to_json(rows: Sequence[WorkloadResult], options: SuiteOptions, limits: Limits,
            iree_version: str | None, context: dict[str, object]) -> dict[str, object]:
    """Every number behind the table, unrounded, in seconds."""
    workloads = []
    for row in rows:
        entry: dict[str, object] = {"name": row.name, "bound": row.bound.value}
        for prefix, outcome in (("weir", row.weir), ("numpy", row.numpy), ("iree", row.iree),
                                ("torch_eager", row.eager), ("torch_inductor", row.inductor),
                                ("weir_compile", row.weir_compile),
                                ("iree_compile", row.iree_compile)):
            entry.update(_outcome_fields(prefix, outcome))
        best = row.best_peer
        entry.update(speedup_vs_iree=row.speedup_vs_iree, speedup_vs_numpy=row.speedup_vs_numpy,
                     best_peer=None if best is None else best[0],
                     speedup_vs_best=row.speedup_vs_best,
                     limit_s=row.limit_s, fraction_of_limit=row.fraction_of_limit,
                     mismatch=row.mismatch)
        workloads.append(entry)
    return {
        "context": context,
        "options": {"target": options.target, "repetitions": options.timing.repetitions,
                    "min_time": options.timing.min_time,
                    "torch_compile": options.torch_compile,
                    "iree_venv": str(options.iree_venv) if options.iree_venv else None},
        "iree_version": iree_version,
        "limits": {"bandwidth_bytes_per_s": limits.bandwidth, "peak_flops": limits.peak_flops,
                   "threads": limits.threads, "cpu": limits.cpu},
        "workloads": workloads,
    }

