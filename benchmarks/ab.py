"""Two builds of one program, timed against each other in one process: both modules loaded,
their calls alternating (A B, then B A, ...), and the ratio B/A taken per pair. On a shared
machine whose speed moves by 10-50% between seconds and between processes, separate runs of the
two cannot show a change of a few percent; a pair of calls next to each other sees the same
machine, so the median of the pairs' ratios can.

    .venv/bin/python -m benchmarks.ab A.wvm B.wvm --function main --inputs x.npy [y.npy ...]
        [--device local-task] [--pairs 30]

Prints each build's median and best time and the median ratio with its quartiles (below 1: B is
faster); checks first that both return the same results.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

import weir.api as weir


def paired_ratios(a: Callable[[], Any], b: Callable[[], Any],
                  pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """Seconds per call of `a` and of `b`, one of each per pair, the order alternating so that
    neither always runs on the other's warm caches."""
    ta, tb = [], []
    for i in range(pairs):
        order = ((a, ta), (b, tb)) if i % 2 == 0 else ((b, tb), (a, ta))
        for call, times in order:
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
    return np.array(ta), np.array(tb)


def report(ta: np.ndarray, tb: np.ndarray) -> str:
    ratio = tb / ta
    q25, q50, q75 = np.quantile(ratio, (0.25, 0.5, 0.75))
    return (f"A: median {np.median(ta) * 1e3:.3f} ms, best {ta.min() * 1e3:.3f} ms\n"
            f"B: median {np.median(tb) * 1e3:.3f} ms, best {tb.min() * 1e3:.3f} ms\n"
            f"B/A: median of {len(ratio)} pairs {q50:.3f} (quartiles {q25:.3f}-{q75:.3f})")


def _load_inputs(paths: Sequence[str]) -> list[np.ndarray]:
    arrays = []
    for path in paths:
        if not Path(path).is_file():
            raise SystemExit(f"error: --inputs: no file {path}")
        try:
            arrays.append(np.load(path, allow_pickle=False))
        except ValueError as e:
            raise SystemExit(f"error: --inputs: {path} is not a .npy array ({e})") from None
    return arrays


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", help="the baseline module file")
    parser.add_argument("b", help="the module file compared with it")
    parser.add_argument("--function", default="main")
    parser.add_argument("--inputs", nargs="*", default=[], help=".npy files, in order")
    parser.add_argument("--device", default="local-task")
    parser.add_argument("--pairs", type=int, default=30)
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error(f"--pairs must be at least 1, got {args.pairs}")
    inputs = _load_inputs(args.inputs)
    try:
        fa, fb = (weir.load([path], device=args.device).lookup_function(args.function)
                  for path in (args.a, args.b))
        ra, rb = fa(*inputs), fb(*inputs)  # warm-up, and both builds must agree
    except weir.WeirError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    results = zip(ra if isinstance(ra, tuple) else (ra,), rb if isinstance(rb, tuple) else (rb,))
    for i, (x, y) in enumerate(results):
        if not np.allclose(np.asarray(x), np.asarray(y), rtol=1e-4, atol=1e-5):
            print(f"error: result {i} differs between {args.a} and {args.b}", file=sys.stderr)
            return 1
    print(report(*paired_ratios(lambda: fa(*inputs), lambda: fb(*inputs), args.pairs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
