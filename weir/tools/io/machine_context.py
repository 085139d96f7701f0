"""The machine a benchmark ran on, as Google Benchmark records it in a report's `context` (and
prints above its console table): numbers without the machine they came from cannot be compared.
Read from Linux's /proc and /sys; on other systems the fields it cannot learn are left at zero
or empty rather than guessed."""

from __future__ import annotations

import datetime
import os
import socket
from importlib import metadata
from pathlib import Path

from weir.tools.io.benchmark_report import JSON_SCHEMA_VERSION

_CPU0 = Path("/sys/devices/system/cpu/cpu0")


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _mhz_per_cpu() -> int:
    for line in _read(Path("/proc/cpuinfo")).splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "cpu MHz":
            return round(float(value))
    return 0


def _cpu_list_size(text: str) -> int:
    """How many CPUs a sysfs list such as `0-3,8` names."""
    count = 0
    for part in filter(None, text.split(",")):
        low, _, high = part.partition("-")
        count += int(high or low) - int(low) + 1
    return count


def _size_bytes(text: str) -> int:
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text) if text.isdigit() else 0


def caches() -> list[dict[str, object]]:
    """The first CPU's caches: type, level, size in bytes, and how many CPUs share each."""
    found = []
    for index in sorted(_CPU0.glob("cache/index*")):
        found.append({
            "type": _read(index / "type"),
            "level": int(_read(index / "level") or 0),
            "size": _size_bytes(_read(index / "size")),
            "num_sharing": _cpu_list_size(_read(index / "shared_cpu_list")),
        })
    return found


def _cpu_scaling_enabled() -> bool:
    """Frequency scaling skews timings; Google Benchmark flags any governor but `performance`."""
    governor = _read(_CPU0 / "cpufreq" / "scaling_governor")
    return bool(governor) and governor != "performance"


def _weir_version() -> str:
    try:
        return metadata.version("weir")
    except metadata.PackageNotFoundError:
        return "unknown"


def machine_context(executable: str) -> dict[str, object]:
    """The `context` object of a JSON report, with Google Benchmark's field names."""
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": executable,
        "num_cpus": os.cpu_count() or 0,
        "mhz_per_cpu": _mhz_per_cpu(),
        "cpu_scaling_enabled": _cpu_scaling_enabled(),
        "aslr_enabled": _read(Path("/proc/sys/kernel/randomize_va_space")) not in ("", "0"),
        "caches": caches(),
        "load_avg": list(os.getloadavg()) if hasattr(os, "getloadavg") else [],
        "library_version": f"weir-{_weir_version()}",
        "library_build_type": "release",
        "json_schema_version": JSON_SCHEMA_VERSION,
    }


def console_context(context: dict[str, object]) -> str:
    """The lines printed above the console table (to stderr, as Google Benchmark does)."""
    lines = [str(context["date"]), f"Running {context['executable']}",
             f"Run on ({context['num_cpus']} X {context['mhz_per_cpu']} MHz CPU s)"]
    cache_list = context["caches"]
    assert isinstance(cache_list, list)
    if cache_list:
        lines.append("CPU Caches:")
        num_cpus = int(context["num_cpus"])  # type: ignore[call-overload]
        for cache in cache_list:
            sharing = max(int(cache["num_sharing"]), 1)
            lines.append(f"  L{cache['level']} {cache['type']} {cache['size'] // 1024} KiB "
                         f"(x{max(num_cpus // sharing, 1)})")
    load = context["load_avg"]
    assert isinstance(load, list)
    if load:
        lines.append("Load Average: " + ", ".join(f"{v:.2f}" for v in load))
    return "\n".join(lines) + "\n"
