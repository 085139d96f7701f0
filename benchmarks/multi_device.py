"""Per-call time of seed 004's two-device multiply: both execution models, transfers elided or
kept as queue copies, on local-sync and local-task. The program is tiny (4 floats), so this
measures the cost of spreading work over devices (extra queue operations and cross-device
fences), not arithmetic.

    .venv/bin/python benchmarks/multi_device.py [--calls N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import weir.api as weir

SOURCE = Path(__file__).resolve().parents[1] / "samples" / "multi_device" / "multi_device_mul.mlir"
DEVICES = (weir.TargetDevice("device_a", "local", 0), weir.TargetDevice("device_b", "local", 1))
X = np.array([10, 11, 12, 13], np.float32)
EXPECTED = np.array([0, 55, 144, 273], np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    calls = parser.parse_args().calls
    source = SOURCE.read_text()
    print("| model | transfers | driver | µs per call |\n|---|---|---|---|")
    for model in ("async-internal", "async-external"):
        for elide in (True, False):
            options = weir.CompilerOptions(
                execution_model=model, target_devices=DEVICES,  # type: ignore[arg-type]
                disabled_passes=frozenset() if elide else frozenset({"elide-transfers"}))
            program = weir.compile_string(source, SOURCE.name, options)
            for driver in ("local-sync", "local-task"):
                fn = weir.load([program], device=[driver, driver]).lookup_function(
                    "multi_device_mul")
                for _ in range(50):
                    fn(X)
                started = time.perf_counter()
                for _ in range(calls):
                    result = fn(X)
                per_call = (time.perf_counter() - started) / calls
                np.testing.assert_array_equal(result, EXPECTED)
                print(f"| {model} | {'elided' if elide else 'copied'} | {driver} | "
                      f"{per_call * 1e6:.0f} |")


if __name__ == "__main__":
    main()
