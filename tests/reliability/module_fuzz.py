"""The module-file fuzzer: seeded mutations (fuzz_mutations.py) of real module files
(fuzz_corpus.py), loaded and run in worker processes (fuzz_worker.py) that this driver restarts
when one crashes or hangs, so a crash or a hang is counted instead of ending the run.

    python tests/reliability/module_fuzz.py --mode resealed --cases 20000 --seed 1
    python tests/reliability/module_fuzz.py --mode resealed --seed 1 --case 1234   (one case, shown)

Outcomes per case: rejected (a WeirError with a one-line message), identical (ran, same results
as the unmutated module), different (ran, other results; with where the mutation landed),
exception (any other Python exception: a bug), bad-message (a WeirError whose message is empty
or spans lines: a bug), crash (the worker died), hang (no answer within the per-case limit).
In raw mode a mutant that gets past the header checks is counted as past-checksum."""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_corpus import DRIVERS, CorpusEntry, build_corpus  # noqa: E402

WORKER = Path(__file__).resolve().parent / "fuzz_worker.py"
ROOT = Path(__file__).resolve().parents[2]
FAILURES = ("exception", "bad-message", "crash", "hang")


@dataclass
class FuzzReport:
    mode: str
    seed: int
    cases: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    rejections: Counter[str] = field(default_factory=Counter)  # by stage and error class
    causes: Counter[str] = field(default_factory=Counter)  # Python exceptions behind WeirErrors
    records: list[dict[str, Any]] = field(default_factory=list)  # all but rejected/identical
    wall_s: float = 0.0

    def add(self, record: dict[str, Any]) -> None:
        self.cases += 1
        outcome = record["outcome"]
        self.outcomes[outcome] += 1
        if record.get("past_checksum"):
            self.outcomes["past-checksum"] += 1
            self.records.append(record)
        if outcome == "rejected":
            self.rejections[f"{record['stage']}: {record['error']}"] += 1
            if record["error"] == "DeadlineExceeded":
                self.records.append(record)
            if "cause" in record:
                self.causes[record["cause"]] += 1
        elif outcome != "identical":
            self.records.append(record)

    def failures(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["outcome"] in FAILURES]

    def wrong_results(self) -> list[dict[str, Any]]:
        """Runs with other results that no change of the program explains: the mutation changed
        more than data the file carries and the mutant ran differently on another driver or
        a second time, without having dropped a wait for its own work."""
        return [r for r in self.records if r["outcome"] == "different" and not r["data_only"]
                and not r["consistent"] and not r["racy"]]

    def racy_programs(self) -> list[dict[str, Any]]:
        """Runs of a program that no longer waits for its own work (a fence dropped from a
        `hal.fence.await` or a queue operation): its results depend on timing, as they would
        on any runtime; the verifier cannot know which waits a program needs."""
        return [r for r in self.records if r["outcome"] == "different" and r.get("racy")]

    def program_changes(self) -> list[dict[str, Any]]:
        """Runs of another valid program: the mutation changed the program (a kernel's operand,
        a call's argument) into one the verifier cannot tell from a real one, and it ran the
        same on every driver."""
        return [r for r in self.records if r["outcome"] == "different" and not r["data_only"]
                and r["consistent"]]

    def summary(self) -> str:
        o = self.outcomes
        data = sum(1 for r in self.records if r["outcome"] == "different" and r["data_only"])
        lines = [f"mode {self.mode}, seed {self.seed}: {self.cases} cases in {self.wall_s:.1f} s: "
                 f"rejected {o['rejected']}, identical {o['identical']}, different "
                 f"{o['different']} ({data} constant data, {len(self.program_changes())} "
                 f"other valid program, {len(self.racy_programs())} racy program, "
                 f"{len(self.wrong_results())} wrong), exceptions "
                 f"{o['exception']}, "
                 f"bad messages {o['bad-message']}, crashes {o['crash']}, hangs {o['hang']}, "
                 f"past checksum {o['past-checksum']}"]
        if self.rejections:
            lines.append("  rejected by: " + ", ".join(f"{k} {v}" for k, v in
                                                        self.rejections.most_common()))
        if self.causes:
            lines.append("  WeirErrors raised from Python exceptions: " + ", ".join(
                f"{k} {v}" for k, v in self.causes.most_common()))
        for r in self.records:
            lines.append("  " + describe(r))
        return "\n".join(lines)


def describe(r: dict[str, Any]) -> str:
    """One line per notable case, enough to reproduce it (`--case`)."""
    head = (f"case {r['case']} {r['outcome']}: {r['entry']} on {r['driver']}, file {r['file']}, "
            f"{r['kind']} in {r['where']}: {r['detail']}")
    if r["outcome"] == "different":
        verdict = "constant data" if r["data_only"] else \
            "program, consistent" if r["consistent"] else \
            "racy program: a wait dropped" if r["racy"] else "WRONG: inconsistent"
        return head + f" -> changed ({verdict}) " + "; ".join(r["landing"])
    if r.get("past_checksum") and r["outcome"] not in FAILURES:
        return head + " -> loaded"
    if "error" in r:
        return head + f" -> {r['error']}: {r['message']}"
    return head + (f" -> {r['message']}" if "message" in r else "")


class _Slot:
    """One worker process and the cases it still has to report."""

    def __init__(self, pending: list[int]) -> None:
        self.pending = pending
        self.proc: subprocess.Popen[bytes] | None = None
        self.fd = -1
        self.buffer = b""
        self.last = 0.0
        self.stderr: Any = None


def run_fuzz(corpus: list[CorpusEntry], seed: int, mode: str, count: int, workers: int = 2,
             case_timeout_s: float = 30.0, first: int = 0, drivers: tuple[str, ...] = DRIVERS,
             call_deadline_s: float = 10.0, worker: Path = WORKER) -> FuzzReport:
    """Cases first..first+count-1 of (seed, mode), spread over `workers` processes. Each case's
    load and call run under a `call_deadline_s` deadline; a worker silent for `case_timeout_s`
    is killed and its case counted as a hang."""
    report = FuzzReport(mode, seed)
    started = time.monotonic()
    slots = [_Slot(list(range(first + j, first + count, workers))) for j in range(workers)]
    selector = selectors.DefaultSelector()
    batch = {"corpus": [e.to_json() for e in corpus], "drivers": list(drivers), "seed": seed,
             "mode": mode, "call_deadline_s": call_deadline_s}

    def start(slot: _Slot) -> None:
        read_fd, write_fd = os.pipe()
        slot.stderr = tempfile.TemporaryFile()
        slot.proc = subprocess.Popen([sys.executable, str(worker), str(write_fd)], cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=slot.stderr, pass_fds=(write_fd,))
        os.close(write_fd)
        assert slot.proc.stdin is not None
        slot.proc.stdin.write((json.dumps({**batch, "cases": slot.pending}) + "\n").encode())
        slot.proc.stdin.close()
        slot.fd, slot.buffer, slot.last = read_fd, b"", time.monotonic()
        selector.register(read_fd, selectors.EVENT_READ, slot)

    def stop(slot: _Slot, outcome: str) -> None:
        """The worker died or was killed: its current case gets `outcome`, the rest a new one."""
        selector.unregister(slot.fd)
        os.close(slot.fd)
        assert slot.proc is not None
        if outcome == "hang":
            slot.proc.kill()
        rc = slot.proc.wait()
        slot.stderr.seek(0)
        tail = slot.stderr.read().decode(errors="replace")[-2000:]
        slot.stderr.close()
        if slot.pending:
            index = slot.pending.pop(0)
            record = _reconstruct(corpus, drivers, seed, mode, index)
            record.update(outcome=outcome,
                          message=f"worker exit status {rc}: {tail.strip()[-500:]}")
            report.add(record)
            if slot.pending:
                start(slot)

    for slot in slots:
        if slot.pending:
            start(slot)
    while selector.get_map():
        for key, _ in selector.select(timeout=0.5):
            slot = key.data
            chunk = os.read(slot.fd, 1 << 16)
            if not chunk:
                stop(slot, "crash")
                continue
            slot.buffer += chunk
            *lines, slot.buffer = slot.buffer.split(b"\n")
            for line in lines:
                record = json.loads(line)
                slot.pending.remove(record["case"])
                report.add(record)
                slot.last = time.monotonic()
        now = time.monotonic()
        for slot in slots:
            if slot.fd in selector.get_map() and now - slot.last > case_timeout_s:
                stop(slot, "hang")
    report.wall_s = time.monotonic() - started
    return report


def _reconstruct(corpus: list[CorpusEntry], drivers: tuple[str, ...], seed: int, mode: str,
                 index: int) -> dict[str, Any]:
    """The record of a case whose worker could not report it (crash, hang)."""
    from fuzz_worker import make_case

    entry, driver, which, mutant = make_case(corpus, drivers, seed, mode, index)
    return {"case": index, "entry": entry.label, "driver": driver,
            "file": Path(entry.files[which]).name.split("-")[0], "kind": mutant.kind,
            "where": mutant.where, "detail": mutant.detail}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("raw", "resealed", "both"), default="both")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=1000, help="cases per mode")
    parser.add_argument("--first", type=int, default=0, help="index of the first case")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--case-timeout", type=float, default=30.0)
    parser.add_argument("--cache", type=Path, help="directory for the compiled corpus")
    parser.add_argument("--case", type=int, help="run this one case in this process and show it")
    args = parser.parse_args(argv)
    cache = args.cache or Path(tempfile.mkdtemp(prefix="weir-fuzz-"))
    cache.mkdir(parents=True, exist_ok=True)
    corpus = build_corpus(cache)
    modes = ("raw", "resealed") if args.mode == "both" else (args.mode,)
    if args.case is not None:
        from fuzz_worker import Runner, run_case

        for mode in modes:
            record = run_case(Runner(), corpus, DRIVERS, args.seed, mode, args.case)
            print(describe(record))
            if "traceback" in record:
                print(record["traceback"])
        return 0
    bad = 0
    for mode in modes:
        report = run_fuzz(corpus, args.seed, mode, args.cases, args.workers, args.case_timeout,
                          args.first)
        print(report.summary(), flush=True)
        bad += len(report.failures()) + len(report.wrong_results()) + report.outcomes["past-checksum"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
