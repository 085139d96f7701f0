"""Host program of the asynchronous custom-module sample (the seed's custom-module-async-run).

    python run.py example.wvm example.main [--device=local-task] [--signal-after-invoke]

It loads the `custom` module written in Python and the compiled program into one context, makes
one timeline semaphore, and calls the coarse-fences function with a wait fence (T=1) and a signal
fence (T=2), printing each step. By default T=1 is signalled before the call, as in the seed;
with --signal-after-invoke it is signalled only after the call has returned, so the whole
computation is queued behind a fence nobody has signalled yet (wait-before-signal).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from custom_module import CustomModule  # noqa: E402
from weir.errors import WeirError  # noqa: E402
from weir.runtime.api import BufferView, Context, Fence, Instance, load_module_file  # noqa: E402

# The program must finish within this deadline once T=1 is signalled.
TIMEOUT_S = 60.0


def run(module_path: str, function: str, device_name: str, signal_after_invoke: bool) -> int:
    instance = Instance()
    device = instance.create_device(device_name)
    context = Context(instance, devices=[device],
                      modules=[CustomModule(), load_module_file(module_path)])
    main = context.lookup(function)

    x = np.array([1, 2, 3, 4, 5], dtype=np.int32)
    arg = BufferView.from_numpy(x, device.allocator)

    timeline = device.create_semaphore(0)
    print("INITIALIZE T=0")
    if not signal_after_invoke:
        timeline.signal(1)
        print("SIGNALED T=1")

    print(f"VM INVOKE BEGIN {function}")
    (result,) = main.invoke_async([arg], wait=Fence.create(timeline, 1),
                                  signal=Fence.create(timeline, 2))
    print("VM INVOKE END")

    if signal_after_invoke:
        print(f"PENDING T={timeline.query()}")
        timeline.signal(1)
        print("SIGNALED T=1")

    if not Fence.create(timeline, 2).wait(TIMEOUT_S):
        print(f"error: T=2 was not reached within {TIMEOUT_S:g} s", file=sys.stderr)
        return 1
    print("REACHED T=2")

    expected = (x * x * 2) ** 2
    actual = result.to_numpy()
    if not np.array_equal(actual, expected):
        print(f"MISMATCHED: expected {expected.tolist()}, got {actual.tolist()}")
        return 1
    print("MATCHED!")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="the compiled program (weir-compile ... -o example.wvm)")
    parser.add_argument("function", help="the function to call, e.g. example.main")
    parser.add_argument("--device", default="local-task")
    parser.add_argument("--signal-after-invoke", action="store_true",
                        help="signal T=1 only after the call returns (wait-before-signal)")
    args = parser.parse_args(argv)
    try:
        return run(args.module, args.function, args.device, args.signal_after_invoke)
    except WeirError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
