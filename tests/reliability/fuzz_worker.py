"""The fuzzer's worker process: runs a batch of cases and reports each one on a pipe, one JSON
line per case, so that the parent (module_fuzz.py) learns of a crash (the pipe closes before a
case's line) or a hang (no line within its limit) without being taken down by it.

    python fuzz_worker.py <fd>      (the batch arrives as one JSON object on stdin)

Each case: the unmutated module set is run once (per program, target, model and driver) for the
expected results; then the mutant is loaded and run with the same inputs under a call deadline,
and the outcome classified: rejected (a WeirError; its message must be one non-empty line),
identical, different (with where the mutation landed), or exception (anything else, with its
traceback)."""

from __future__ import annotations

import json
import os
import random
import sys
import traceback
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_corpus import PROGRAMS, CorpusEntry, FuzzHost  # noqa: E402
from fuzz_layout import landing, only_changes_waits  # noqa: E402
from fuzz_mutations import Mutant, mutate  # noqa: E402

from weir.errors import ModuleFormatError, WeirError  # noqa: E402
from weir.format.module_file import deserialize  # noqa: E402
from weir.runtime.api import Context, Instance, load_module_bytes  # noqa: E402
from weir.runtime.hal.deadline import deadline  # noqa: E402



def case_rng(seed: int, mode: str, index: int) -> random.Random:
    return random.Random(f"weir-module-fuzz/{seed}/{mode}/{index}")


def make_case(corpus: list[CorpusEntry], drivers: tuple[str, ...], seed: int, mode: str,
              index: int) -> tuple[CorpusEntry, str, int, Mutant]:
    """(entry, driver, which file of the entry, mutant): a function of its arguments alone."""
    rng = case_rng(seed, mode, index)
    entry = corpus[rng.randrange(len(corpus))]
    driver = drivers[rng.randrange(len(drivers))]
    which = rng.randrange(len(entry.files))
    return entry, driver, which, mutate(Path(entry.files[which]).read_bytes(), mode, rng)


class Runner:
    """Runs module sets; one instance and one device per driver for the whole batch (a device
    per case would start threads per case)."""

    def __init__(self, call_deadline_s: float = 10.0) -> None:
        self.call_deadline_s = call_deadline_s
        self.instance = Instance()
        self.devices: dict[str, Any] = {}
        self.expected: dict[tuple[str, str], tuple[Any, ...]] = {}
        self.stage = ""  # how far the current case got: decode, link or run

    def device(self, driver: str) -> Any:
        if driver not in self.devices:
            self.devices[driver] = self.instance.create_device(driver)
        return self.devices[driver]

    def run(self, entry: CorpusEntry, driver: str, files: list[bytes],
            timeout_s: float | None = None) -> tuple[Any, ...]:
        program = PROGRAMS[entry.program]
        with deadline(timeout_s or self.call_deadline_s, "fuzz case"):
            self.stage = "decode"
            modules: list[Any] = [FuzzHost()] if program.native else []
            modules += [load_module_bytes(data) for data in files]
            self.stage = "link"
            context = Context(self.instance, devices=[self.device(driver)], modules=modules)
            self.stage = "run"
            result = context.lookup(program.function)(*program.inputs())
        return result if isinstance(result, tuple) else (result,)

    def oracle(self, entry: CorpusEntry, driver: str) -> tuple[Any, ...]:
        key = (entry.label, driver)
        if key not in self.expected:
            # The unmutated module must finish: a generous deadline, not the cases' short one.
            self.expected[key] = self.run(entry, driver,
                                          [Path(f).read_bytes() for f in entry.files], 120.0)
        return self.expected[key]


def same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Bit-for-bit equal results (the same module on the same driver is deterministic)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)) or \
                    x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
                return False
        else:  # scalars compare by value: an int and the same numpy integer are one result
            x = x.item() if isinstance(x, np.generic) else x
            y = y.item() if isinstance(y, np.generic) else y
            numbers = (bool, int, float)
            if isinstance(x, numbers) != isinstance(y, numbers) or \
                    (x != y and not (x != x and y != y)):
                return False
    return True


def _cause(e: BaseException) -> BaseException | None:
    """The Python exception a WeirError was raised from, if any (a converted internal error)."""
    seen = e.__cause__ or e.__context__
    while seen is not None and isinstance(seen, WeirError):
        seen = seen.__cause__ or seen.__context__
    return seen


def run_case(runner: Runner, corpus: list[CorpusEntry], drivers: tuple[str, ...], seed: int,
             mode: str, index: int) -> dict[str, Any]:
    entry, driver, which, mutant = make_case(corpus, drivers, seed, mode, index)
    report: dict[str, Any] = {
        "case": index, "entry": entry.label, "driver": driver,
        "file": Path(entry.files[which]).name.split("-")[0], "kind": mutant.kind,
        "where": mutant.where, "detail": mutant.detail,
    }
    expected = runner.oracle(entry, driver)
    files = [Path(f).read_bytes() for f in entry.files]
    original = files[which]
    files[which] = mutant.data
    try:
        if mode == "raw":
            try:
                deserialize(mutant.data)
                report["past_checksum"] = True
            except ModuleFormatError:
                pass
        results = runner.run(entry, driver, files)
    except WeirError as e:
        message = str(e)
        report["outcome"] = "rejected"
        report["stage"] = runner.stage
        report["error"] = type(e).__name__
        report["message"] = message[:300]
        if "\n" in message or not message.strip():
            report["outcome"] = "bad-message"
        cause = _cause(e)
        if cause is not None:
            report["cause"] = type(cause).__name__
        return report
    except Exception as e:  # noqa: BLE001 - what the fuzzer is looking for
        report["outcome"] = "exception"
        report["stage"] = runner.stage
        report["error"] = type(e).__name__
        report["message"] = str(e)[:300]
        report["traceback"] = traceback.format_exc()[-3000:]
        return report
    if same(results, expected):
        report["outcome"] = "identical"
        return report
    report["outcome"] = "different"
    try:
        changes = landing(original, mutant.data)
    except (ValueError, KeyError, IndexError, TypeError) as e:
        changes = [(f"unknown ({type(e).__name__}: {e})", False)]
    report["landing"] = [text for text, _ in changes]
    report["data_only"] = bool(changes) and all(is_data for _, is_data in changes)
    if not report["data_only"]:
        report["consistent"] = consistent(runner, entry, drivers, files, results)
        report["racy"] = not report["consistent"] and only_changes_waits(original, mutant.data)
    return report


def consistent(runner: Runner, entry: CorpusEntry, drivers: tuple[str, ...],
               files: list[bytes], results: tuple[Any, ...]) -> bool:
    """A mutant that changed the program (not just its constants) computes something else by
    design; what the runtime still owes it is to run that program the same way every time: the
    same results again, and on every driver."""
    for driver in drivers:
        try:
            if not same(runner.run(entry, driver, files), results):
                return False
        except WeirError:
            return False
    return True


def main() -> None:
    fd = int(sys.argv[1])
    batch = json.loads(sys.stdin.readline())
    corpus = [CorpusEntry.from_json(e) for e in batch["corpus"]]
    drivers = tuple(batch["drivers"])
    runner = Runner(batch["call_deadline_s"])
    with os.fdopen(fd, "w", buffering=1) as out:
        for index in batch["cases"]:
            report = run_case(runner, corpus, drivers, batch["seed"], batch["mode"], index)
            out.write(json.dumps(report) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
