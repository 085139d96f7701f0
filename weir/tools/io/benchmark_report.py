"""Benchmark results in Google Benchmark's two report formats, as IREE's iree-benchmark-module
prints them, so scripts written for IREE's output read weir's unchanged:

    BM_f/process_time/real_time      0.020 ms        0.023 ms         1155 items_per_second=48.9414k/s

and the JSON document (`context` + `benchmarks`, one row per repetition, then the `_mean`,
`_median`, `_stddev` and `_cv` aggregates when there are several repetitions).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from weir.tools.io.benchmark_timing import Measurement

# Units per second of each `time_unit` a report may use; IREE reports milliseconds.
TIME_UNITS: dict[str, float] = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0}
DEFAULT_TIME_UNIT = "ms"
JSON_SCHEMA_VERSION = 1
COUNTER = "items_per_second"


@dataclass(frozen=True)
class Row:
    """One line of a report: a repetition (`run_type` "iteration") or an aggregate over them.
    Times are seconds per iteration, except that a `cv` row holds ratios (stddev / mean)."""

    run_name: str
    family_index: int
    run_type: str
    repetitions: int
    iterations: int
    real_time: float
    cpu_time: float
    items_per_second: float
    repetition_index: int | None = None
    aggregate_name: str | None = None

    @property
    def name(self) -> str:
        return self.run_name if self.aggregate_name is None else \
            f"{self.run_name}_{self.aggregate_name}"

    @property
    def aggregate_unit(self) -> str:
        return "percentage" if self.aggregate_name == "cv" else "time"


def _coefficient_of_variation(values: Sequence[float]) -> float:
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean else 0.0


# Google Benchmark's default statistics, in its order; stddev is the sample (n - 1) one.
_AGGREGATES: tuple[tuple[str, Callable[[Sequence[float]], float]], ...] = (
    ("mean", statistics.fmean),
    ("median", statistics.median),
    ("stddev", statistics.stdev),
    ("cv", _coefficient_of_variation),
)


def family_rows(run_name: str, family_index: int, measured: Sequence[Measurement]) -> list[Row]:
    """The rows of one benchmark: a row per repetition, then aggregates if it repeated."""
    count = len(measured)
    rows = [Row(run_name, family_index, "iteration", count, m.iterations, m.real_per_iteration,
                m.cpu_per_iteration, m.iterations / m.real_seconds if m.real_seconds else 0.0,
                repetition_index=i)
            for i, m in enumerate(measured)]
    if count < 2:
        return rows
    iteration_rows = list(rows)
    for name, statistic in _AGGREGATES:
        rows.append(Row(run_name, family_index, "aggregate", count, count,
                        statistic([r.real_time for r in iteration_rows]),
                        statistic([r.cpu_time for r in iteration_rows]),
                        statistic([r.items_per_second for r in iteration_rows]),
                        aggregate_name=name))
    return rows


def name_width(run_names: Sequence[str], repetitions: int) -> int:
    """The name column's width: the longest name, with room for `_median` when there will be
    aggregate rows. Known before anything runs, so rows can be printed as they finish."""
    longest = max((len(n) for n in run_names), default=len("Benchmark"))
    suffix = max(len(name) for name, _ in _AGGREGATES) + 1 if repetitions > 1 else 0
    return max(longest + suffix, len("Benchmark"))


def console_header(width: int) -> str:
    """The column titles between two rules of dashes."""
    titles = f"{'Benchmark':<{width}} {'Time':>13} {'CPU':>15} {'Iterations':>12} UserCounters..."
    rule = "-" * len(titles)
    return f"{rule}\n{titles}\n{rule}\n"


def _format_time(value: float) -> str:
    """Ten characters with the decimals Google Benchmark gives each magnitude."""
    if value < 1.0:
        return f"{value:10.3f}"
    if value < 10.0:
        return f"{value:10.2f}"
    if value < 100.0:
        return f"{value:10.1f}"
    if value > 9_999_999_999:
        return f"{value:1.4e}"
    return f"{value:10.0f}"


def _human_number(value: float) -> str:
    """`48941.4` -> `48.9414k`: six significant digits with a decimal (1000-based) prefix."""
    for prefix in ("", "k", "M", "G", "T", "P"):
        if abs(value) < 1000.0 or prefix == "P":
            return f"{value:.6g}{prefix}"
        value /= 1000.0
    raise AssertionError("unreachable")


def console_row(row: Row, width: int, unit: str) -> str:
    """One line of the table, in `unit`; a `cv` row shows percentages."""
    if row.aggregate_name == "cv":
        real, cpu, label = _format_time(row.real_time * 100), _format_time(row.cpu_time * 100), "%"
        counter = f"{row.items_per_second * 100:.2f}%"
    else:
        scale = TIME_UNITS[unit]
        real, cpu, label = _format_time(row.real_time * scale), _format_time(row.cpu_time * scale), unit
        counter = f"{_human_number(row.items_per_second)}/s"
    return (f"{row.name:<{width}} {real} {label:<4} {cpu} {label:<4} {row.iterations:>10} "
            f"{COUNTER}={counter}\n")


def console_table(rows: Sequence[Row], unit: str = DEFAULT_TIME_UNIT) -> str:
    """Header and rows, as one string (for `--benchmark_out_format=console`)."""
    repetitions = max((r.repetitions for r in rows), default=1)
    width = name_width(sorted({r.run_name for r in rows}), repetitions)
    return console_header(width) + "".join(console_row(r, width, unit) for r in rows)


def _json_row(row: Row, unit: str) -> dict[str, object]:
    scale = 1.0 if row.aggregate_name == "cv" else TIME_UNITS[unit]
    fields: dict[str, object] = {
        "name": row.name, "family_index": row.family_index, "per_family_instance_index": 0,
        "run_name": row.run_name, "run_type": row.run_type, "repetitions": row.repetitions,
    }
    if row.repetition_index is not None:
        fields["repetition_index"] = row.repetition_index
    fields["threads"] = 1
    if row.aggregate_name is not None:
        fields["aggregate_name"] = row.aggregate_name
        fields["aggregate_unit"] = row.aggregate_unit
    fields.update(iterations=row.iterations, real_time=row.real_time * scale,
                  cpu_time=row.cpu_time * scale, time_unit=unit)
    fields[COUNTER] = row.items_per_second
    return fields


def json_document(context: dict[str, object], rows: Sequence[Row],
                  unit: str = DEFAULT_TIME_UNIT) -> str:
    """The whole JSON report: the machine `context`, then every row."""
    document = {"context": context, "benchmarks": [_json_row(r, unit) for r in rows]}
    return json.dumps(document, indent=2) + "\n"
