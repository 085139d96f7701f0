"""The model benchmark's FLOP-rate and memory columns: a made-up row rendered into the tables
and the JSON (each number in its own column, formatted), the transient packing read back from a
program at the end of weir's stream phase, and the allocation counts that python_call.py reports
for weir (the bytes one call's arguments and result take)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")  # the `torch` extra; `make test` installs it
from benchmarks.models.__main__ import Row, markdown, to_json  # noqa: E402
from benchmarks.models.packing import Packing, packing_of  # noqa: E402
from benchmarks.models.peers import WeirResult  # noqa: E402
from benchmarks.suite.peers import REPO_ROOT, Memory, Outcome  # noqa: E402
import weir.api as weir  # noqa: E402

MIB = 1 << 20


def _fake_row() -> Row:
    ms = Outcome(seconds=1e-3)
    weir_result = WeirResult(ms, Outcome(seconds=2e-3), Outcome(seconds=4e-3), dispatches=7,
                             max_diff=1e-6, memory=Memory(3 * MIB, 5 * MIB, 200 * MIB),
                             packing=Packing(slab_bytes=2048, transient_bytes=8192,
                                             live_bound_bytes=1536, slabs=2))
    return Row("cnn", ops=9, weir=weir_result, eager=Outcome(seconds=8e-3),
               iree_task=Outcome(seconds=2e-3), iree_memory=Memory(MIB, 4 * MIB, 100 * MIB),
               onnxruntime=Outcome(seconds=1e-3), onnxruntime_memory=Memory(None, None, 50 * MIB),
               eager_memory=Memory(None, None, 300 * MIB),
               flops=4_000_000_000)


def _cells(table: str, header: str) -> dict[str, str]:
    """The `cnn` row of the table whose header line starts with `header`, by column."""
    lines = table.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(header))
    row = next(line for line in lines[at:] if line.startswith("| cnn |"))
    names = [c.strip() for c in lines[at].strip("|").split("|")]
    return dict(zip(names, (c.strip() for c in row.strip("|").split("|")), strict=True))


def test_rates_and_memory_go_to_their_columns() -> None:
    table = markdown([_fake_row()], "bench", "3.13", peak_flops=2e12)
    assert "the machine's f32 peak: 2e+03 GFLOP/s" in table
    times = _cells(table, "| model | linalg ops |")
    assert times["onnxruntime"] == "1 ms" and times["weir task/onnxruntime"] == "4"
    rates = _cells(table, "| model | GFLOP per call |")
    # 4 GFLOP in 4 ms (weir), 2 ms (IREE), 1 ms (onnxruntime), 8 ms (eager); peak 2000 GFLOP/s.
    assert rates == {"model": "cnn", "GFLOP per call": "4", "weir task GFLOP/s": "1e+03",
                     "weir % peak": "50%", "IREE task GFLOP/s": "2e+03", "IREE % peak": "1e+02%",
                     "onnxruntime GFLOP/s": "4e+03", "onnxruntime % peak": "2e+02%",
                     "eager GFLOP/s": "500", "eager % peak": "25%"}
    memory = _cells(table, "| model | weir bytes/call |")
    assert memory == {"model": "cnn", "weir bytes/call": "3 MiB", "IREE bytes/call": "1 MiB",
                      "weir peak live": "5 MiB", "IREE peak live": "4 MiB",
                      "weir peak RSS": "200 MiB", "IREE peak RSS": "100 MiB",
                      "onnxruntime peak RSS": "50 MiB", "eager peak RSS": "300 MiB",
                      "weir slabs": "2",
                      "weir slab bytes": "2 KiB", "live bound": "1.5 KiB",
                      "transients' sum": "8 KiB"}


def test_rates_without_flops_or_peak_are_dashes() -> None:
    row = _fake_row()
    row.flops = None
    rates = _cells(markdown([row], "bench", None, peak_flops=None), "| model | GFLOP per call |")
    assert set(rates.values()) == {"cnn", "-"}
    row.flops = 4_000_000_000
    rates = _cells(markdown([row], "bench", None, peak_flops=None), "| model | GFLOP per call |")
    assert rates["weir task GFLOP/s"] == "1e+03" and rates["weir % peak"] == "-"


def test_json_has_memory_packing_and_flops() -> None:
    model = to_json([_fake_row()], "bench", "3.13", 2e12)["models"][0]  # type: ignore[index]
    assert model["flops"] == 4_000_000_000
    assert model["memory"]["weir"] == {"bytes_per_call": 3 * MIB, "peak_bytes": 5 * MIB,
                                       "peak_rss_bytes": 200 * MIB}
    assert model["memory"]["onnxruntime"]["bytes_per_call"] is None
    assert model["memory"]["torch_eager"]["peak_rss_bytes"] == 300 * MIB
    assert model["weir_packing"] == {"slabs": 2, "slab_bytes": 2048, "live_bound_bytes": 1536,
                                     "transient_bytes": 8192}
    assert model["onnxruntime"] == {"seconds": 1e-3, "error": None}


# Four chained 64x64 f32 matmuls: the three intermediates (16 KiB each) are transients of one
# execute region, each live from the matmul that writes it to the one that reads it, so the first
# and the third can share bytes.
_CHAIN = """
func.func @main(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %0 = linalg.matmul ins(%a, %a : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = linalg.matmul ins(%0, %a : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %2 = linalg.matmul ins(%1, %a : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %3 = linalg.matmul ins(%2, %a : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %3 : tensor<64x64xf32>
}
"""


def test_packing_is_read_from_the_stream_phase() -> None:
    options = weir.CompilerOptions(target_backends=("llvm-cpu",))
    packed = packing_of(weir.compile_to_phase(_CHAIN, "chain.mlir", options, "stream"))
    assert packed.slabs >= 1
    assert packed.live_bound_bytes <= packed.slab_bytes <= packed.transient_bytes
    # Three 16 KiB intermediates, each live only from its matmul to the next: two at a time.
    assert packed.transient_bytes >= 3 * 16384
    assert packed.live_bound_bytes == 2 * 16384 and packed.slab_bytes == 2 * 16384


def test_python_call_counts_weir_allocations_per_call(tmp_path: Path) -> None:
    program = tmp_path / "chain.mlir"
    program.write_text(_CHAIN)
    module = tmp_path / "chain.wvm"
    module.write_bytes(weir.compile_string(_CHAIN, "chain.mlir",
                                           weir.CompilerOptions(target_backends=("llvm-cpu",))))
    np.save(tmp_path / "a.npy", np.ones((64, 64), np.float32))
    done = subprocess.run([sys.executable, "-m", "benchmarks.suite.python_call",
                           "--runtime=weir", f"--module={module}", "--function=main",
                           "--device=local-sync", "--min-time=2x", "--repetitions=1",
                           str(tmp_path / "a.npy")],
                          capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    memory = json.loads(done.stdout)["memory"]
    # The result and the slab of two 16 KiB transients: the 16 KiB argument is lent to the call
    # (abi_tensors.LEND_MIN_BYTES), not copied.
    assert memory["bytes_per_call"] == 3 * 16384
    assert memory["peak_bytes"] >= memory["bytes_per_call"]
    assert memory["peak_rss_bytes"] > 10 * MIB
